"""A kernel's warp count: a decorator int (hk-dsl's spelling), a constant each call chooses, or
a choice per target.

    @hk.kernel(grid=..., warps=4)                          every call, every target
    @hk.kernel(grid=..., warps="WARPS")                    the int constant WARPS of each call:
    def k(x, o, *, WARPS: hk.Constexpr[int] = 4): ...      k(x, o, WARPS=8)
    @hk.kernel(grid=..., warps={"gfx942": 4, "default": 8})   per target; an entry may name a
                                                                constant too

Invariant: every trace has one warp count, an int in [1, the target's max_warps], resolved from
the decorator's spec, the call's constants and the target before anything is traced. A named
count is a constant, so it is in the trace and GPU-call cache keys, `p.WARPS` reads it in the
grid and requires=, and a tuner or a routing table sets it like any other constant. A bad spec
is refused at the decorator (the kernel's first line); a bad value a call gives is an
InputError naming the constant.
"""
from __future__ import annotations

from typing import Any

from ..errors import InputError, KernelError

DEFAULT_ENTRY = "default"   # the per-target dict's entry for targets it does not name
SPELLINGS = ('warps=4, warps="WARPS" (an int hk.Constexpr of the kernel) or a dict per target '
             '{"gfx942": 4, "default": 8}')


def check_spec(kernel) -> None:
    """Refuse a `warps=` the kernel can never resolve: not a positive int, a name that is no
    int constant of the kernel, or a dict with a key that is no target."""
    spec = kernel.warps
    if isinstance(spec, dict):
        if not spec:
            raise _spec_error(kernel, "warps is an empty dict: no target has a warp count")
        for key, entry in spec.items():
            if key != DEFAULT_ENTRY:
                _check_target_key(kernel, key)
            _check_entry(kernel, entry, f"warps[{key!r}]")
        return
    _check_entry(kernel, spec, "warps")


def warps_for(kernel, target, constants: dict[str, Any]) -> int:
    """The warp count of one trace: the spec's entry for `target`, read from `constants` (all
    of the kernel's, resolved) when it names one; checked against the target's block size."""
    entry = _entry_for(kernel, target)
    if isinstance(entry, str):
        value = constants[entry]
        _check_fits(kernel, target, value, named=entry)
        return value
    _check_fits(kernel, target, entry, named=None)
    return entry


def _entry_for(kernel, target) -> int | str:
    spec = kernel.warps
    if not isinstance(spec, dict):
        return spec
    if target.name in spec:
        return spec[target.name]
    if DEFAULT_ENTRY in spec:
        return spec[DEFAULT_ENTRY]
    named = ", ".join(k for k in spec)
    raise KernelError(f"warps names no count for {target.name} (it has {named})",
                      loc=kernel.def_loc, kernel=kernel.name,
                      hint=f'add "{target.name}": N, or a "default": N entry, to warps=')


def _check_entry(kernel, entry: Any, what: str) -> None:
    if isinstance(entry, str):
        spec = kernel.constexprs.get(entry)
        if spec is None:
            known = ", ".join(kernel.constexprs) or "none"
            raise _spec_error(kernel, f"{what} names {entry!r}, which is no constant of the "
                                      f"kernel (its constants: {known})",
                              hint=f"declare it: `*, {entry}: hk.Constexpr[int] = 4`")
        if spec[0].kind is not int:
            raise _spec_error(kernel, f"{what} names constant {entry!r}, which is "
                                      f"hk.Constexpr[{spec[0].kind.__name__}]; a warp count "
                                      f"is an int", hint=f"declare {entry}: hk.Constexpr[int]")
        return
    if not _is_int(entry) or entry <= 0:
        raise _spec_error(kernel, f"{what} must be a positive int or the name of an int "
                                  f"constant, got {type(entry).__name__} {entry!r}")


def _check_target_key(kernel, key: Any) -> None:
    from .. import targets
    if isinstance(key, str) and key in targets.NAMES:
        return
    raise _spec_error(kernel, f"warps has an entry for {key!r}, which is no target",
                      hint=f"key warps by target name ({', '.join(targets.NAMES)}) or "
                           f"{DEFAULT_ENTRY!r}")


def _check_fits(kernel, target, value: Any, named: str | None) -> None:
    """1 ≤ value ≤ the target's warps per block; a constant's value is the call's mistake."""
    if _is_int(value) and 1 <= value <= target.max_warps:
        return
    reason = (f"must be at least 1" if _is_int(value) and value < 1 else
              _over_block(target, value) if _is_int(value) else "must be an int")
    fix = f"a warp count from 1 to {target.max_warps} on {target.name}"
    if named is None:
        raise KernelError(f"warps={value!r} {reason}", loc=kernel.def_loc, kernel=kernel.name,
                          hint=f"give warps= {fix} (warps={target.max_warps} at most)")
    raise InputError(f"constant {named!r} is the kernel's warp count (warps={named!r}): "
                     f"{value!r} {reason}", kernel=kernel.name, hint=f"pass {named}= {fix}")


def _over_block(target, warps: int) -> str:
    """Over the block in warps and in threads: an author counts either way."""
    threads = warps * target.wave_size
    return (f"is over {target.name}'s {target.max_warps} warps of {target.wave_size} lanes per "
            f"block ({warps} warps are {threads} threads; the limit is "
            f"{target.max_threads_per_block} threads)")


def _spec_error(kernel, message: str, hint: str | None = None) -> KernelError:
    return KernelError(message, loc=kernel.def_loc, kernel=kernel.name,
                       hint=hint or f"spell it {SPELLINGS}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
