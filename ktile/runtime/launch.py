"""A kernel call: check the tensors, trace (cached), and run on the chosen backend."""
from __future__ import annotations

import warnings

from .. import config
from ..errors import InputError, KernelWarning
from .arguments import (check_arguments, check_coindexed, check_same_device, from_carrier,
                        to_carrier)

BACKENDS = ("auto", "interpret")


def launch(kernel, args: tuple, constants: dict, target: str | None, backend: str | None = None):
    backend = backend or config.BACKEND.get()
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r} (from {config.BACKEND.name})",
                         hint=f"use one of {', '.join(BACKENDS)}")
    arguments = check_arguments(kernel, args)
    device = check_same_device(kernel, arguments)
    trace = kernel.trace(target, **constants)
    check_coindexed(kernel, trace, arguments)
    if device != "cpu" and backend == "auto":
        warnings.warn(f"kernel '{kernel.name}': no GPU backend is built into this ktile yet; "
                      f"running the CPU interpreter on copies of the {device} tensors",
                      KernelWarning, stacklevel=3)
    return run_interpreter(trace, arguments)


def run_interpreter(trace, arguments) -> None:
    from ..interpret import run_module
    carriers = [to_carrier(a) for a in arguments]
    run_module(trace.module, carriers)
    for index in trace.written_params:
        from_carrier(arguments[index], carriers[index])
