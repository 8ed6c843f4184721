"""The target tables, one module per arch, and the one place that looks an arch up by name."""
from __future__ import annotations

from importlib import import_module

from .base import FragmentMap, MmaShape, Target, WaitCounter

NAMES = ("gfx1100", "gfx1201", "gfx942", "gfx950", "sm_90a")
DEFAULT = "gfx1100"


def get(name: str) -> Target:
    """The table of arch `name`; a clear error for an arch ktile does not know."""
    if name not in NAMES:
        from ..errors import KernelError
        raise KernelError(f"unknown target {name!r}", hint=f"use one of {', '.join(NAMES)}")
    return import_module(f".{name}", __name__).TARGET


def all_targets() -> list[Target]:
    return [get(n) for n in NAMES]


__all__ = ["FragmentMap", "MmaShape", "Target", "WaitCounter", "NAMES", "DEFAULT", "get",
           "all_targets"]
