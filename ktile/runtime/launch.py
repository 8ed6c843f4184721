"""A kernel call: check the tensors, trace (cached), and run on the chosen backend.

Backend `auto` runs a call whose tensors are on a GPU there, and anything else on the CPU
interpreter; `interpret` always runs the interpreter, on copies of GPU tensors. A GPU call goes
through a `gpu.GpuCall` kept per (kernel, target, constants), so a repeated call takes its fast
path. `KTILE_BACKEND` is read at the first call of each of those, as Triton reads
TRITON_INTERPRET once per function: reading the environment costs a microsecond, a sixth of
the whole budget of a repeated call.
"""
from __future__ import annotations

from .. import config
from ..errors import InputError
from .arguments import (check_arguments, check_coindexed, check_holds_data, check_index_limit,
                        check_requirements, check_same_device, check_scalars, check_strides,
                        from_carrier, kernel_strides, split_scalars, to_carrier)
from .builds import build_only_call, building_target
from .grid import check_grid, grid_function

BACKENDS = ("auto", "interpret")

# (kernel, target, constants) → its GpuCall, or None where KTILE_BACKEND said `interpret`
_GPU_CALLS: dict[tuple, object] = {}


def launch(kernel, args: tuple, constants: dict, target: str | None, backend: str | None = None):
    """Run `kernel` on `args`: its tensors in order, then its runtime scalars' values in order
    (`Kernel.__call__` binds them so), with `constants`."""
    if backend in (None, "auto") and args and getattr(args[0], "is_cuda", False) is True:
        try:
            call = _GPU_CALLS[(kernel, target, tuple(constants.items()))]
        except (KeyError, TypeError):
            call = gpu_call(kernel, target, constants)
        if call is not None:
            return call.fast(args)
    if building_target() is not None:   # warm-up: build for the GPU target, run nothing
        return build_only_call(kernel, args, constants)
    _checked(backend or config.BACKEND.get())
    tensors, values = split_scalars(kernel, args)
    arguments = check_arguments(kernel, tensors)
    scalars = check_scalars(kernel, values)
    check_holds_data(kernel, check_same_device(kernel, arguments))
    # the requirements read only shapes and constants: a call that fails one costs no trace
    check_requirements(kernel, kernel.resolve_constants(constants), arguments)
    trace = kernel.trace(target, **constants)
    check_interpreted(kernel, trace, arguments)
    return run_interpreter(trace, arguments, scalars)


def check_interpreted(kernel, trace, arguments) -> None:
    """What a GPU call of the same tensors would check (gpu.GpuCall._prepare), so that a call
    the interpreter runs is one the GPU runs too: shapes, layouts and aliasing, the target's
    index limit, the grid (the requirements are checked before the trace, as on the GPU)."""
    check_coindexed(kernel, trace, arguments)
    check_strides(kernel, trace, arguments)
    check_index_limit(kernel, trace.target, arguments, [kernel_strides(a) for a in arguments])
    shapes = [a.shape for a in arguments]
    check_grid(kernel, grid_function(trace)(shapes), shapes)


def gpu_call(kernel, target: str | None, constants: dict):
    """The GpuCall of this kernel, target and constants, made on first use; None when
    KTILE_BACKEND asks for the interpreter."""
    key = (kernel, target, tuple(constants.items()))
    try:
        hash(key)
    except TypeError:  # an unhashable constant: its repr stands for it
        key = (kernel, target, tuple((k, repr(v)) for k, v in constants.items()))
    if key not in _GPU_CALLS:
        from .gpu import GpuCall
        backend = _checked(config.BACKEND.get())
        _GPU_CALLS[key] = GpuCall(kernel, target, constants) if backend == "auto" else None
    return _GPU_CALLS[key]


def _checked(backend: str) -> str:
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r} (from {config.BACKEND.name})",
                         hint=f"use one of {', '.join(BACKENDS)}")
    return backend


def run_interpreter(trace, arguments, scalars: list = ()) -> None:
    from ..interpret import run_module
    written = set(trace.written_params)
    carriers = [to_carrier(a, i in written) for i, a in enumerate(arguments)]
    run_module(trace.module, carriers, scalars)
    for index in trace.written_params:
        from_carrier(arguments[index], carriers[index])
