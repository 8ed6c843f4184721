"""Which ktile target a torch GPU is: a table from the device's reported arch.

NVIDIA devices are named by compute capability, AMD devices (a ROCm torch: `torch.version.hip`
set, device type still 'cuda') by their gfx arch, `gcnArchName` without its feature flags
('gfx942:sramecc+:xnack-' is gfx942: ktile compiles for the arch alone, which the runtime
loads whatever the flags). A device missing from the table has no GPU backend in ktile: a
related arch (gfx1101, gfx90a) is refused, not run with another's facts. The AMD rows are
unrun: no AMD GPU has run ktile (docs/runtime.md).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from ..errors import KernelError

# (vendor, arch as torch reports it) → ktile target
DEVICE_TARGETS = {
    ("nvidia", "9.0"): "sm_90a",
    ("amd", "gfx1100"): "gfx1100",
    ("amd", "gfx1201"): "gfx1201",
    ("amd", "gfx942"): "gfx942",
    ("amd", "gfx950"): "gfx950",
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
        return Device(index, "amd", gfx_arch(props.gcnArchName), props.name)
    return Device(index, "nvidia", f"{props.major}.{props.minor}", props.name)


def gfx_arch(gcn_arch_name: str) -> str:
    """'gfx942:sramecc+:xnack-' → 'gfx942': the arch, without the target features."""
    return gcn_arch_name.split(":", 1)[0].strip()


def target_of(dev: Device, kernel: str | None = None) -> str:
    """The ktile target of `dev`; a clear error for a GPU ktile has no target for."""
    name = DEVICE_TARGETS.get((dev.vendor, dev.arch))
    if name is None:
        known = ", ".join(f"{v} {a}" + ("" if a == t else f" ({t})")
                          for (v, a), t in DEVICE_TARGETS.items())
        raise KernelError(f"the tensors are on {dev}, a GPU ktile has no target for; the GPUs "
                          f"it has targets for are: {known}", kernel=kernel,
                          hint="run it on the CPU interpreter: k.interpret(...) or "
                               "KTILE_BACKEND=interpret")
    return name
