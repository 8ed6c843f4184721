"""Which ktile target a torch GPU is: a table from the device's reported arch.

NVIDIA devices are named by compute capability, AMD devices (a ROCm torch) by their gfx arch
(`gcnArchName`). A device missing from the table has no GPU backend in ktile yet.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from ..errors import KernelError

# (vendor, arch as torch reports it) → ktile target
DEVICE_TARGETS = {
    ("nvidia", "9.0"): "sm_90a",
}


@dataclass(frozen=True)
class Device:
    index: int
    vendor: str
    arch: str        # "9.0" (compute capability) or "gfx942"
    product: str     # "NVIDIA H200"

    def __str__(self) -> str:
        return f"cuda:{self.index} ({self.product}, {self.vendor} {self.arch})"


@functools.lru_cache(maxsize=None)
def device(index: int) -> Device:
    import torch
    props = torch.cuda.get_device_properties(index)
    if getattr(torch.version, "hip", None):
        return Device(index, "amd", props.gcnArchName.split(":")[0], props.name)
    return Device(index, "nvidia", f"{props.major}.{props.minor}", props.name)


def target_of(dev: Device, kernel: str | None = None) -> str:
    """The ktile target of `dev`; a clear error for a GPU ktile has no target for."""
    name = DEVICE_TARGETS.get((dev.vendor, dev.arch))
    if name is None:
        known = ", ".join(f"{v} {a} ({t})" for (v, a), t in DEVICE_TARGETS.items())
        raise KernelError(f"the tensors are on {dev}, a GPU ktile has no target for; kernels run "
                          f"on: {known}", kernel=kernel,
                          hint="run it on the CPU interpreter: k.interpret(...) or "
                               "KTILE_BACKEND=interpret")
    return name
