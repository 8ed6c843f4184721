"""The NVIDIA toolchain driver: generated C++ → cubin with nvcc.

    nvcc -std=c++17 -O3 -cubin -gencode arch=compute_90a,code=sm_90a -Xptxas -v \
         -I <ktile/include> -x cu kernel.cu -o kernel.cubin

No fast-math: the kernel's float semantics are the interpreter's. `-Xptxas -v` prints the
registers, stack, spills and shared memory of each entry function, which the resource gate
reads. The generated C++ carries `#line N "kernel.py"` directives, so nvcc already names the
kernel's Python line in its errors (`kernel.py(25): error: ...`); a failure is turned into a
KernelError at that line, or, when the error sits in ktile's headers with no kernel line in
its instantiation trail, into one naming the kernel and the log.
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ... import config
from ...errors import KernelError
from ..cache import BuildFailed, CompileResult, Compiler, run_command
from ..gates import ResourceReport
from .diagnostics import Diagnostic, compile_error
from .ptxas import occupancy, parse_ptxas
from .version import named_executable, version_text

NAME = "nvcc"
SOURCE_NAME = "kernel.cu"
CODE_NAME = "kernel.cubin"
FALLBACK_PATH = "/usr/local/cuda/bin/nvcc"
OPTIONS = ("-std=c++17", "-O3", "-cubin")

# the front end's `file(12): error: ...` and the host preprocessor's `file:12:3: fatal error: ...`
_DIAGNOSTICS = (
    re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<kind>(?:catastrophic )?error|warning)"
               r"(?: #[\w-]+)?: (?P<message>.*)$"),
    re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:\d+:)? (?P<kind>(?:fatal )?error|"
               r"warning): (?P<message>.*)$"),
)
_INSTANTIATED_AT = re.compile(r"at line (\d+) of \"?(.+?)\"?\s*$")


def find_nvcc() -> str:
    """`KTILE_NVCC` (a path, or a bare name looked up on PATH), else nvcc on PATH, else
    /usr/local/cuda/bin/nvcc."""
    named = config.NVCC.get()
    if named:
        return named_executable(named, config.NVCC.name,
                                f"point {config.NVCC.name} at nvcc (e.g. {FALLBACK_PATH}), or "
                                f"unset it to use nvcc from PATH")
    found = shutil.which("nvcc") or (FALLBACK_PATH if os.access(FALLBACK_PATH, os.X_OK) else None)
    if found is None:
        raise KernelError("building for an NVIDIA target needs nvcc, which was found neither on "
                          f"PATH nor at {FALLBACK_PATH}",
                          hint=f"install the CUDA toolkit (12.0 or later, for sm_90a), or set "
                               f"{config.NVCC.name} to its nvcc")
    return found


def _identity(path: str) -> str:
    """The compiler's path and `--version` text: part of every cache key (asked once)."""
    said = version_text(path, f"point {config.NVCC.name} at nvcc (e.g. {FALLBACK_PATH}), or "
                              f"check the CUDA install")
    return f"{NAME} {os.path.realpath(path)}\n{said}"


def toolchain() -> "Nvcc":
    return Nvcc(find_nvcc())


@dataclass(frozen=True)
class Nvcc:
    path: str
    name: str = NAME
    source_name: str = SOURCE_NAME
    code_name: str = CODE_NAME

    @property
    def identity(self) -> str:
        return _identity(self.path)

    def flags(self, target) -> list[str]:
        """The options that decide the code object (paths left out: they are not content)."""
        arch = target.name.removeprefix("sm_")
        return [*OPTIONS, "-gencode", f"arch=compute_{arch},code=sm_{arch}", "-Xptxas", "-v",
                "-x", "cu"]

    def compiler(self, target, include_dirs: list[Path]) -> Compiler:
        includes = [arg for d in include_dirs for arg in ("-I", str(d))]
        flags = self.flags(target)
        language = flags[-2:]  # "-x cu" goes right before the source

        def compile_source(source: Path, code: Path) -> CompileResult:
            return run_command([self.path, *flags[:-2], *includes, *language, str(source),
                                "-o", str(code)])
        return compile_source

    def resources(self, log: str, kernel: str, target, *, warps: int,
                  lds_bytes: int) -> ResourceReport:
        entries = parse_ptxas(log)
        entry = entries.get(kernel)
        if entry is None:
            found = ", ".join(entries) or "none"
            raise KernelError(f"ptxas reports no entry function named '{kernel}' (found: "
                              f"{found})", kernel=kernel,
                              hint="the kernel must be `extern \"C\" __global__` under this name")
        shared = entry.shared_static + lds_bytes
        return ResourceReport(
            kernel=kernel, target=target.name, registers=entry.registers,
            spill_stores=entry.spill_stores, spill_loads=entry.spill_loads,
            stack_bytes=entry.stack_bytes, shared_static=entry.shared_static,
            shared_dynamic=lds_bytes, threads=warps * target.wave_size,
            occupancy=occupancy(entry.registers, warps, shared, target.multiprocessor))

    def error(self, failure: BuildFailed, kernel: str, target,
              include_dirs: list[Path]) -> KernelError:
        """The KernelError for a failed compile: at the kernel's line when nvcc names one."""
        return compile_error(NAME, _errors(failure.log), failure, kernel, target, include_dirs)


def _errors(log: str) -> list[Diagnostic]:
    """nvcc's errors, each with the lines its instantiation trail names."""
    errors: list[Diagnostic] = []
    current: Diagnostic | None = None
    for line in log.splitlines():
        m = _diagnostic(line)
        if m:
            current = None
            if "error" in m.group("kind"):
                file, number, message = m.group("file"), int(m.group("line")), m.group("message")
                current = Diagnostic(file, number, message, f"{file}({number}): error: {message}")
                errors.append(current)
        elif current is not None and (m := _INSTANTIATED_AT.search(line)):
            current.instantiated_at.append((m.group(2), int(m.group(1))))
    return errors


def _diagnostic(line: str) -> re.Match | None:
    for pattern in _DIAGNOSTICS:
        if m := pattern.match(line):
            return m
    return None

