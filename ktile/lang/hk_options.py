"""hk-dsl's kernel decorator options and its looser constant rules (`import ktile as hk`).

Plain Python, no IR library: decorating a kernel stays light. The per-target meaning of each
option is in docs/hk-compat.md.
"""
from __future__ import annotations

from typing import Any


KERNEL_OPTIONS = ("name", "max_vgprs", "min_occupancy", "defines", "noalias", "preload",
                  "resident", "placement")


def apply_kernel_options(k, options: dict[str, Any]) -> None:
    """hk's decorator options on kernel `k`: `name` renames it; `max_vgprs`/`min_occupancy`
    become its build limits (AMD); the rest are accepted, checked, and kept as `k.hk_options`
    (their per-target meaning is in docs/hk-compat.md)."""
    from ..errors import KernelError
    for key in options:
        if key not in KERNEL_OPTIONS:
            raise KernelError(f"@hk.kernel has no option {key!r}", loc=k.def_loc, kernel=k.name,
                              hint=f"options: grid, warps, arch, requires, in_place, "
                                   f"{', '.join(KERNEL_OPTIONS)}")
    name = options.get("name")
    if name is not None:
        if not isinstance(name, str) or not name.isidentifier():
            raise KernelError(f"name= must be a C identifier, got {name!r}", loc=k.def_loc,
                              kernel=k.name)
        k.name = name
    _check_options(k, options)
    k.hk_options = dict(options)


def _check_options(k, options: dict[str, Any]) -> None:
    from ..errors import KernelError

    def bad(msg: str):
        return KernelError(msg, loc=k.def_loc, kernel=k.name)
    for key in ("max_vgprs", "min_occupancy"):
        v = options.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v <= 0):
            raise bad(f"{key}= must be a positive int, got {v!r}")
    defines = options.get("defines")
    if defines is not None and not (isinstance(defines, dict) and all(
            isinstance(n, str) and n.isidentifier() for n in defines)):
        raise bad(f"defines= is a dict of C identifiers to values, got {defines!r}")
    for key in ("noalias", "preload", "resident"):
        if not isinstance(options.get(key, False), bool):
            raise bad(f"{key}= is True or False, got {options[key]!r}")
    placement = options.get("placement")
    if placement not in (None, "auto") and not hasattr(placement, "kind"):
        raise bad(f"placement= is None, 'auto' or a placement plan, got {placement!r}")


def build_limits(k):
    """The build limits hk's `max_vgprs=`/`min_occupancy=` give kernel `k` (None: none)."""
    options = getattr(k, "hk_options", {})
    if options.get("max_vgprs") is None and options.get("min_occupancy") is None:
        return None
    from .kernel import runtime   # lang does not import the runtime: the bound one's limits
    return runtime().BuildLimits(max_vgprs=options.get("max_vgprs"),
                                 min_occupancy=options.get("min_occupancy"))


# ---- looser constants ---------------------------------------------------------------------------

def constexpr_spec(param, spec_type, constexpr_class):
    """hk's constants: a keyword-only parameter without annotation, or one annotated with a
    bare `hk.Constexpr`, takes the kind of its default; so does a positional parameter
    annotated `hk.Constexpr[T]` (or bare) that has a default. None: not an hk-style constant."""
    ann, default = param.annotation, param.default
    positional = param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD)
    has_default = default is not param.empty
    if positional:
        if not has_default or not (isinstance(ann, spec_type) or ann is constexpr_class):
            return None
        return ann if isinstance(ann, spec_type) else _kind_of(default, spec_type)
    if ann is param.empty or ann is constexpr_class:
        return _kind_of(default, spec_type) if has_default else None
    return None


def _kind_of(default, spec_type):
    for kind in (bool, int, float, str):
        if isinstance(default, kind):
            return spec_type(kind)
    return None
