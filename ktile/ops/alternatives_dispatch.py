"""How a registered op runs an alternative route (ktile/ops/alternatives.py), and the switch.

`routed(qualname, impl)` is what `_library.define` registers as the op's implementation: for
a call on CUDA tensors it looks for an alternative route of the op's routing table on that
GPU's target (the loaded table's "torch" and "triton" buckets, or a route pinned by the tuner)
whose bucket holds the call's (rows, cols), and runs the alternative instead of `impl`. Being
the torch.library op's implementation, it runs inside CUDA-graph capture and compiled graphs
like ktile's kernels do. CPU tensors (the interpreter), meta and fake tensors, and warm-up's
build-only calls never take an alternative: `impl` runs.

The switch: `ktile.ops.routing(alternatives=False)` (a context manager, process-wide) and the
environment variable KTILE_ALTERNATIVES=0 (read at import) turn alternative routes off, so
every call runs ktile's own kernels (the benchmark's "ktile" column).
"""
from __future__ import annotations

import contextlib
import functools

from ..config import ALTERNATIVES as ALTERNATIVES_ENV
from .alternatives import ALTERNATIVES, KINDS

def from_env() -> bool:
    """Whether KTILE_ALTERNATIVES leaves alternative routes on (unset: on; 0/false/off/no: off)."""
    return ALTERNATIVES_ENV.get().strip().lower() not in ("0", "false", "off", "no")


_ENABLED = [from_env()]
_TABLES: dict = {}          # op name -> its RoutingTable, looked up on the first routed call


@contextlib.contextmanager
def routing(*, alternatives: bool):
    """Within the block, alternative routes are taken (True) or not (False), in every thread."""
    if not isinstance(alternatives, bool):
        from ..errors import InputError
        raise InputError(f"routing: 'alternatives' must be True or False, got {alternatives!r}",
                         hint="ktile.ops.routing(alternatives=False)")
    _ENABLED.append(alternatives)
    try:
        yield
    finally:
        _ENABLED.pop()


def own_kernels(fn):
    """`fn` with alternative routes off for its calls: what the op benchmark times as "ktile"
    (a list push and pop per call, not a context manager: the benchmark counts host cost)."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        _ENABLED.append(False)
        try:
            return fn(*args, **kwargs)
        finally:
            _ENABLED.pop()
    return call


def enabled() -> bool:
    return _ENABLED[-1]


def is_alternative(route) -> bool:
    return route.kernel in KINDS


def routed(qualname: str, impl):
    """`impl`, taking the op's alternative routes where its table has one for the call."""
    alternative = ALTERNATIVES.get(qualname)
    if alternative is None:
        return impl

    @functools.wraps(impl)
    def call(*args):
        if _ENABLED[-1]:
            route = route_of(alternative, args)
            if route is not None:
                return getattr(alternative, route.kernel)(*args)
        return impl(*args)
    return call


def route_of(alternative, args):
    """The alternative route this call takes, or None (ktile's own kernels run)."""
    table = _TABLES.get(alternative.op) or _table(alternative.op)
    if table._pins:
        pin = table.pinned
        if pin is not None:
            return pin if pin.kernel in KINDS else None
    target = _GPU_TARGET[0](args[alternative.lead])
    if target is None:
        return None
    routes = table.measured.alternatives(target)
    if not routes:
        return None
    rows, cols = alternative.shape(*args)
    for route in routes:
        if route.fits(rows, cols, target):
            return route
    return None


def gpu_target(lead) -> str | None:
    """The target of a plain CUDA tensor's GPU, else None (no alternative route is taken)."""
    if lead.device.type != "cuda" or type(lead) is not _tensor():
        return None
    from ._library import target_of
    return target_of(lead)


def _table(op_name: str):
    from ._library import op_named
    table = _TABLES[op_name] = op_named(op_name).table
    return table


_GPU_TARGET = [gpu_target]     # tier-0 tests swap in a probe that gives CPU tensors a target
_TENSOR: list = []


def _tensor():
    if not _TENSOR:
        import torch
        _TENSOR.append(torch.Tensor)
    return _TENSOR[0]
