"""One launch of an emulated kernel as bytes (the file harness.hpp reads), and its results
written back into the caller's tensors.

Each tensor argument travels as the bytes from its first element to its last (its span in
storage: a strided view brings the gaps between its rows along, untouched), with the extents
and element strides the kernel sees (the GPU launch's: a dimension of extent 1 has stride 1),
its data pointer's offset from a 256-byte boundary (the emulator places it the same way, so
alignment-dependent paths take the device's choice), and, for an argument the kernel writes,
a mask of which span bytes are its elements (writes elsewhere are reported).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"ktemu-1\0"       # harness.hpp's launch_magic
ALIGNMENT = 256


@dataclass
class LaunchTensor:
    """One argument as the emulator gets it."""
    name: str
    tensor: object              # a torch tensor (numpy arrays are wrapped, sharing memory)
    strides: tuple[int, ...]    # in elements, as the kernel sees them
    written: bool

    @property
    def span(self):
        """The bytes from the first element to the last, a 1-D uint8 view into the storage."""
        import torch
        t = self.tensor
        count = 1 + sum((e - 1) * s for e, s in zip(t.shape, t.stride()))
        flat = torch.as_strided(t, (count,), (1,), t.storage_offset())
        return flat.view(torch.uint8)

    def element_mask(self) -> bytes:
        """1 for each span byte that belongs to an element, 0 for the gaps between them."""
        import torch
        t = self.tensor
        size = t.element_size()
        count = self.span.numel() // size
        starts = torch.as_strided(torch.arange(count), tuple(t.shape), t.stride())
        mask = torch.zeros(count, dtype=torch.uint8)
        mask[starts.reshape(-1)] = 1
        return mask.repeat_interleave(size).numpy().tobytes()


def as_launch_tensor(argument, strides, written: bool) -> LaunchTensor:
    """A checked argument (ktile.runtime.arguments.Argument) as the emulator gets it. Its value
    is already the 4-D view of a tensor of 1 to 4 dimensions (`arguments.padded_view`), as the
    launch record's four extents and strides need; the span and results are the user's memory."""
    import torch
    value = argument.value if argument.is_torch else torch.from_numpy(argument.value)
    return LaunchTensor(argument.name, value, tuple(strides), written)


def scalar_bytes(values, kinds) -> bytes:
    """The runtime scalars after the tensors: their count, then 8 bytes each, the value's f32
    or i32 bytes first (harness.hpp's scalar_of)."""
    parts = [struct.pack("<q", len(values))]
    for value, kind in zip(values, kinds):
        parts.append(struct.pack("<f" if kind == "float" else "<i", value) + bytes(4))
    return b"".join(parts)


def launch_bytes(tensors: list[LaunchTensor], *, threads: int, wave_size: int, lds_dynamic: int,
                 lds_limit: int, scalars: bytes = scalar_bytes((), ())) -> bytes:
    parts = [MAGIC, struct.pack("<5q", threads, wave_size, lds_dynamic, lds_limit, len(tensors))]
    for t in tensors:
        name = t.name.encode()
        span = t.span
        offset = t.tensor.data_ptr() % ALIGNMENT
        parts.append(struct.pack("<q", len(name)) + name)
        parts.append(struct.pack("<12q", t.tensor.element_size(), *t.tensor.shape, *t.strides,
                                 span.numel(), int(t.written), offset))
        parts.append(span.contiguous().numpy().tobytes())
        if t.written:
            parts.append(t.element_mask())
    parts.append(scalars)
    return b"".join(parts)


def write_launch(path: Path, tensors: list[LaunchTensor], **facts) -> None:
    Path(path).write_bytes(launch_bytes(tensors, **facts))


def read_results(path: Path, tensors: list[LaunchTensor]) -> None:
    """Copy the written arguments' bytes back into their tensors (in place)."""
    import torch
    data = Path(path).read_bytes()
    at = 0
    for t in tensors:
        if not t.written:
            continue
        span = t.span
        count = span.numel()
        if at + count > len(data):
            raise ValueError("the emulator's result file is short")
        span.copy_(torch.frombuffer(bytearray(data[at:at + count]), dtype=torch.uint8))
        at += count
