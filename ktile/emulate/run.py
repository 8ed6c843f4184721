"""A kernel call under wave emulation: check the tensors as a GPU launch does, build the host
executable (cached), run every block of the launch on the CPU, and write the results back.

    emulate(kernel, a, b, out, target="gfx950", BLOCK=64)
"""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from ..errors import InputError, KernelError
from ..runtime.arguments import check_arguments, check_coindexed, check_requirements
from ..runtime.arguments import check_scalars, check_strides, kernel_strides, split_scalars
from .build import build_emulator
from .launch import as_launch_tensor, read_results, scalar_bytes, write_launch
from .report import VIOLATION_EXIT, EmulationError, failure_error, parse_violation, violation_error

RUN_TIMEOUT_S = 600.0


def emulate(kernel, *args, target: str | None = None, timeout: float = RUN_TIMEOUT_S,
            source: str | None = None, **constants) -> None:
    """Run `kernel` on CPU tensors (torch, or numpy where the dtype allows) under wave emulation
    of AMD `target` (default: the kernel's, else KTILE_TARGET, else gfx1100); in place, as a
    GPU call. A broken ISA precondition raises an EmulationError at the kernel's line.
    `source`: C++ to run instead of the generated (an edited copy of it: tests plant bugs)."""
    _check_timeout(kernel, timeout)
    args = kernel.bind_arguments(args, constants)  # runtime scalars by position or keyword
    tensors, values = split_scalars(kernel, args)
    values = check_scalars(kernel, values)
    trace = kernel.trace(target, **constants)
    if trace.target.vendor != "amd":
        raise KernelError(f"wave emulation runs AMD targets; {trace.target.name} is not one",
                          kernel=kernel.name, hint="pass target='gfx1100', 'gfx1201', 'gfx942' "
                                                   "or 'gfx950'")
    arguments = check_arguments(kernel, tensors)
    _check_on_host(kernel, arguments)
    check_coindexed(kernel, trace, arguments)
    check_requirements(kernel, trace.constants, arguments)
    check_strides(kernel, trace, arguments)
    written = set(trace.written_params)
    launch = [as_launch_tensor(a, kernel_strides(a), i in written)
              for i, a in enumerate(arguments)]
    emulator = build_emulator(source or trace.source(), trace.target)
    if emulator.threads != trace.warps * trace.target.wave_size:
        raise EmulationError(f"the C++ launch bounds ({emulator.threads}) are not the kernel's "
                             f"{trace.warps} warps", kernel=kernel.name, target=trace.target.name)
    facts = dict(threads=emulator.threads, wave_size=trace.target.wave_size,
                 lds_dynamic=_lds_bytes(trace), lds_limit=trace.target.lds_bytes,
                 scalars=scalar_bytes(values, [s.dtype.kind for s in kernel.scalars]))
    with tempfile.TemporaryDirectory(prefix="ktile-emulate-") as folder:
        launch_path, result_path = Path(folder) / "launch", Path(folder) / "result"
        write_launch(launch_path, launch, **facts)
        done = _run(emulator.program, launch_path, result_path, timeout, kernel.name,
                    trace.target.name)
        if done.returncode == VIOLATION_EXIT and (violation := parse_violation(done.stderr)):
            raise violation_error(violation, emulator.program, kernel.name, trace.target.name)
        if done.returncode != 0:
            raise failure_error(done.returncode, done.stderr, emulator.program, kernel.name,
                                trace.target.name)
        read_results(result_path, launch)


def _run(program: Path, launch: Path, result: Path, timeout: float, kernel: str, target: str):
    try:
        return subprocess.run([str(program), str(launch), str(result)], capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise EmulationError(f"the emulated kernel did not finish in {timeout:.0f} s",
                             kernel=kernel, target=target,
                             hint="emulate a smaller shape, or raise `timeout`") from None


def _check_timeout(kernel, timeout) -> None:
    """A run's time limit is a positive number of seconds (a string or a negative number would
    surface from subprocess, or as a run that "did not finish in -1 s")."""
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        return
    raise InputError(f"timeout must be a positive number of seconds, got {timeout!r}",
                     kernel=kernel.name, hint=f"leave it out (default {RUN_TIMEOUT_S:.0f} s), "
                                              f"or pass e.g. timeout=120")


def _check_on_host(kernel, arguments) -> None:
    for a in arguments:
        if a.device != "cpu":
            raise InputError(f"parameter '{a.name}' is on {a.device}; wave emulation runs on "
                             f"the host", kernel=kernel.name, hint="pass CPU tensors (x.cpu())")


def _lds_bytes(trace) -> int:
    """The dynamic LDS the launch passes: the lds-alloc pass's total (kt.lds_bytes)."""
    from ..ir.query import kernel_func
    lds = kernel_func(trace.module).attributes.get("kt.lds_bytes")
    return 0 if lds is None else int(lds.value.data)
