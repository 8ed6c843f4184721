"""The tensor maps of a GPU call's TMA copies: one CUtensorMap per entry of the kernel's
`kt.tensor_maps` (a parameter and a shared tile shape: the tensor-maps pass), encoded by the
driver for each data pointer the call sees.

    maps = CallMaps.of(trace)                 # None: the kernel makes no TMA copies
    reason = maps.refusal(shapes, strides, data_pointers, encode)
    maps.point(pointers, data_pointers)       # every call: the maps' addresses into the block

A map describes the tensor as rank 4, innermost first (cols, rows, depth, batch), strides in
bytes, the box one swizzle atom wide, out-of-bounds elements zero-filled. A call signature no
map can describe (`refusal`: a column stride other than 1, a row, depth or batch stride that
is no multiple of 16 bytes or reaches 2^40, an extent of 0 or of 2^31 or more, or a map the
driver refuses) is run by the kernel traced without TMA copies (`GpuCall`), whose group loads
are cp.async copies. Maps are cached per data pointer (`CACHE` of the most recent), so a
repeated call costs a dictionary lookup per map.
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import KernelError

MAP_BYTES, MAP_ALIGN = 128, 64        # CUtensorMap; cuTensorMapEncodeTiled wants it 64-aligned
DATA_TYPES = {1: 0, 2: 1, 4: 2}       # CU_TENSOR_MAP_DATA_TYPE_UINT8 / 16 / 32: copies move bits
SWIZZLES = {32: 1, 64: 2, 128: 3}     # CU_TENSOR_MAP_SWIZZLE_32B / 64B / 128B
STRIDE_UNIT, MAX_STRIDE = 16, 2**40   # bytes: the driver's rules for globalStrides
MAX_EXTENT = 2**31                    # TMA coordinates are signed 32-bit
CACHE = 64                            # maps kept per entry (distinct data pointers)

# (out address, data type, global address, dims, byte strides, box, swizzle) -> CUresult
Encoder = Callable[[int, int, int, Sequence[int], Sequence[int], Sequence[int], int], int]


@dataclass(frozen=True)
class MapSpec:
    """One entry of `kt.tensor_maps`."""
    param: int
    box_cols: int
    box_rows: int
    swizzle_bytes: int
    elem_bytes: int


def tensor_layout(shape: Sequence[int], strides: Sequence[int],
                  elem_bytes: int) -> tuple[list[int], list[int]] | str:
    """(dims innermost first, byte strides of rows, depth and batch) of a 4-D tensor, or why no
    map can describe it. The stride of a dimension of extent 1 is never used: it is given as
    the packed one, which the driver accepts."""
    batch, depth, rows, cols = (int(s) for s in shape)
    if min(batch, depth, rows, cols) <= 0:
        return "it is empty"
    if max(batch, depth, rows, cols) >= MAX_EXTENT:
        return f"an extent reaches 2^31 ({list(shape)})"
    if cols > 1 and int(strides[3]) != 1:
        return f"its columns are strided ({int(strides[3])} elements apart)"
    dims, byte_strides, packed = [cols, rows, depth, batch], [], cols * elem_bytes
    for extent, stride in zip((rows, depth, batch), (strides[2], strides[1], strides[0])):
        step = int(stride) * elem_bytes if extent > 1 else -(-packed // STRIDE_UNIT) * STRIDE_UNIT
        if step % STRIDE_UNIT or not 0 < step < MAX_STRIDE:
            return f"a stride of {step} bytes is no multiple of {STRIDE_UNIT} below 2^40"
        byte_strides.append(step)
        packed = step * extent
    return dims, byte_strides


class _Map:
    """128 bytes at a 64-byte aligned address, kept alive by this object."""

    def __init__(self):
        self._raw = ctypes.create_string_buffer(MAP_BYTES + MAP_ALIGN)
        base = ctypes.addressof(self._raw)
        self.address = base + (-base) % MAP_ALIGN


class CallMaps:
    """The maps of one kernel for one call signature (shapes and strides fixed)."""

    def __init__(self, specs: list[MapSpec], count: int):
        self.specs = specs
        self.count = count                      # the kernel's other arguments, before the maps
        self._layouts: list[tuple[list[int], list[int]]] = []
        self._encode: Encoder | None = None
        self._cache: list[dict[int, _Map]] = [{} for _ in specs]

    @classmethod
    def of(cls, trace) -> "CallMaps | None":
        from ..ir.query import kernel_func, tensor_maps
        fn = kernel_func(trace.module)
        specs = [MapSpec(*entry) for entry in tensor_maps(fn)]
        # the maps follow every other kernel argument: the globals, then the runtime scalars
        return cls(specs, len(fn.body.block.args)) if specs else None

    def refusal(self, names: Sequence[str], shapes, strides, data_pointers: Sequence[int],
                encode: Encoder, describe: Callable[[int], str]) -> str | None:
        """Why this signature can have no maps (None: every map encodes, for these pointers)."""
        self._encode, self._layouts = encode, []
        for spec in self.specs:
            layout = tensor_layout(shapes[spec.param], strides[spec.param], spec.elem_bytes)
            if isinstance(layout, str):
                return f"parameter '{names[spec.param]}': {layout}"
            self._layouts.append(layout)
        for j, spec in enumerate(self.specs):
            result = self._encoded(j, data_pointers[spec.param])
            if isinstance(result, int):
                return f"parameter '{names[spec.param]}': the driver refuses its map " \
                       f"({describe(result)})"
        return None

    def point(self, pointers, data_pointers: Sequence[int]) -> None:
        """Each map for this call's data into the parameter block after the tensors."""
        for j, spec in enumerate(self.specs):
            found = self._cache[j].get(data_pointers[spec.param])
            if found is None:
                found = self._encoded(j, data_pointers[spec.param])
                if isinstance(found, int):
                    raise KernelError(f"the tensor map of parameter {spec.param} could not be "
                                      f"encoded for data at {data_pointers[spec.param]:#x} "
                                      f"(CUresult {found}), though it could for the same "
                                      f"layout before")
            pointers[self.count + j] = found.address

    def _encoded(self, j: int, data: int) -> "_Map | int":
        spec, (dims, strides) = self.specs[j], self._layouts[j]
        made = _Map()
        result = self._encode(made.address, DATA_TYPES[spec.elem_bytes], data, dims, strides,
                              [spec.box_cols, spec.box_rows, 1, 1], SWIZZLES[spec.swizzle_bytes])
        if result:
            return result
        cache = self._cache[j]
        if len(cache) >= CACHE:
            del cache[next(iter(cache))]        # the oldest
        cache[data] = made
        return made
