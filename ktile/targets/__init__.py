"""The target tables, one module per arch, and the one place that looks an arch up by name."""
from __future__ import annotations

from importlib import import_module

from .base import FragmentMap, MmaShape, Target, WaitCounter

NAMES = ("gfx1100", "gfx1201", "gfx942", "gfx950", "sm_90a")
DEFAULT = "gfx1100"


def get(name: str) -> Target:
    """The table of arch `name`; a clear error for an arch ktile does not know."""
    if not isinstance(name, str) or name not in NAMES:
        raise _unknown(name)
    return import_module(f".{name}", __name__).TARGET


def _unknown(name: object):
    """The error for a target name ktile has no table for: a value that is no name at all, a
    near miss (case, an underscore, a suffix) with the one meant, or the list of names."""
    from ..errors import KernelError
    known = ", ".join(NAMES)
    if not isinstance(name, str):
        return KernelError(f"a target is named by a string such as 'gfx942', got "
                           f"{type(name).__name__} {name!r}", hint=f"use one of {known}")
    meant = _meant(name)
    if meant is not None:
        return KernelError(f"unknown target {name!r}: did you mean '{meant}'?",
                           hint=f"use one of {known}")
    return KernelError(f"unknown target {name!r}", hint=f"use one of {known}")


def _meant(name: str) -> str | None:
    """The known name that `name` spells loosely: compared without case, '_' and '-', and
    allowing a missing suffix letter (sm_90 for sm_90a)."""
    loose = name.lower().replace("_", "").replace("-", "")
    for known in NAMES:
        bare = known.replace("_", "")
        if loose in (bare, bare[:-1]) and len(loose) > 3:
            return known
    return None


def all_targets() -> list[Target]:
    return [get(n) for n in NAMES]


__all__ = ["FragmentMap", "MmaShape", "Target", "WaitCounter", "NAMES", "DEFAULT", "get",
           "all_targets"]
