"""The AMD toolchain driver: generated C++ → one AMDGPU code object per target.

    clang++-22 -x hip --offload-arch=gfx1100 --cuda-device-only --no-gpu-bundle-output \
        -nogpuinc -nogpulib -O3 -std=c++17 -I <ktile/include> kernel.hip -o kernel.hsaco

The compiler is ROCm's hipcc when there is one (`KTILE_HIPCC`, else `hipcc` on PATH when it
is HIP 6 or later), else Debian's clang++-22 (`KTILE_CLANG`, else `clang++-22` on PATH, else
/usr/lib/llvm-22/bin/clang++). Both get the same flags: device-only HIP, no ROCm headers
(`-nogpuinc`: `ktile/amd/device.hpp` gives `__global__` and the rest) and no device libraries
(`-nogpulib`: the tile headers use `__builtin_amdgcn_*` only), so the code object is the same
whichever driver made it. Without `-c` the driver links with lld, and `--no-gpu-bundle-output`
keeps the result a plain ELF code object (`.hsaco`) instead of a clang offload bundle. No
fast-math: the kernel's float semantics are the interpreter's.

The gate is `ktile.runtime.cocheck`, run on the code object on every build and every cache
hit: a spill, scratch use, a wait hazard (a register read before the wait that covers its
load), an LDS-DMA hazard, or a broken `max_vgprs` / `min_occupancy` limit refuses the build
with cocheck's message and fix. The build's report (`amd_quality`) adds the instruction mix
of the kernel and of its hot loop.

No AMD GPU is needed, and none has run these code objects: they are compiled and statically
checked only (docs/amd.md).
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ... import config
from ...errors import KernelError, SourceLoc
from ..cache import BuildFailed, CacheEntry, CompileResult, Compiler, run_command
from ..cocheck import Limits, Options, ToolMissing, check_code_object
from ..cocheck.inputs import CodeObjectFile
from ..cocheck.report import FunctionReport, ObjectReport
from ..gates import ResourceReport
from .amd_quality import AmdReport
from .diagnostics import Diagnostic, compile_error
from .version import named_executable, version_text

SOURCE_NAME = "kernel.hip"
CODE_NAME = "kernel.hsaco"
CLANG_NAMES = ("clang++-22",)
CLANG_FALLBACK = "/usr/lib/llvm-22/bin/clang++"
MIN_HIP_MAJOR = 6          # Debian bookworm's hipcc 5.2 drives clang-15: no gfx942/950/1201
OPTIONS = ("--cuda-device-only", "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib", "-O3",
           "-std=c++17")
INSTALL_HINT = ("install Debian's LLVM 22 (apt-get install -y clang-22 lld-22 llvm-22; "
                "scripts/setup.sh does), or point KTILE_CLANG at a clang++ that knows gfx942, "
                "gfx950 and gfx1201 (LLVM 22 is the tested one), or KTILE_HIPCC at ROCm's hipcc")

# clang's `file:12:7: error: ...` (`#line` makes `file` the kernel's .py), and the notes that
# name the lines a template was instantiated from
_DIAGNOSTIC = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:\d+:)? (?P<kind>(?:fatal )?"
                         r"error|warning|note|remark): (?P<message>.*)$")
_HIP_VERSION = re.compile(r"HIP version:\s*(\d+)\.")


# ---- finding the compiler ---------------------------------------------------------------

def find_compiler() -> tuple[str, str]:
    """(kind, path): ("hipcc", ...) or ("clang", ...), in the order the module doc gives."""
    for variable, kind in ((config.HIPCC, "hipcc"), (config.CLANG, "clang")):
        named = variable.get()
        if named:
            return kind, named_executable(named, variable.name, f"point {variable.name} at "
                                                                 f"the compiler, or unset it")
    hipcc = shutil.which("hipcc")
    if hipcc and _hip_major(hipcc) >= MIN_HIP_MAJOR:
        return "hipcc", hipcc
    for name in CLANG_NAMES:
        if found := shutil.which(name):
            return "clang", found
    if os.access(CLANG_FALLBACK, os.X_OK):
        return "clang", CLANG_FALLBACK
    raise KernelError("building for an AMD target needs ROCm's hipcc or Debian's clang++-22; "
                      f"found neither ({config.HIPCC.name}, hipcc on PATH, {config.CLANG.name}, "
                      f"clang++-22 on PATH, {CLANG_FALLBACK})", hint=INSTALL_HINT)


def _hip_major(hipcc: str) -> int:
    """The HIP major version `hipcc --version` reports; 0 when it reports none."""
    found = _HIP_VERSION.search(_version_text(hipcc))
    return int(found.group(1)) if found else 0


def _version_text(path: str) -> str:
    return version_text(path, INSTALL_HINT)


def toolchain() -> "AmdToolchain":
    kind, path = find_compiler()
    return AmdToolchain(path, kind)


# ---- the driver -------------------------------------------------------------------------

@dataclass(frozen=True)
class AmdToolchain:
    path: str
    kind: str                      # "hipcc" or "clang"
    source_name: str = SOURCE_NAME
    code_name: str = CODE_NAME

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    @property
    def identity(self) -> str:
        """The compiler's path and `--version` text: part of every cache key (asked once)."""
        return f"{self.kind} {os.path.realpath(self.path)}\n{_version_text(self.path)}"

    def flags(self, target) -> list[str]:
        """The options that decide the code object (paths left out: they are not content)."""
        return ["-x", "hip", f"--offload-arch={target.name}", *OPTIONS]

    def compiler(self, target, include_dirs: list[Path]) -> Compiler:
        command = [self.path, *self.flags(target),
                   *(arg for d in include_dirs for arg in ("-I", str(d)))]

        def compile_source(source: Path, code: Path) -> CompileResult:
            return run_command([*command, str(source), "-o", str(code)])
        return compile_source

    def error(self, failure: BuildFailed, kernel: str, target,
              include_dirs: list[Path]) -> KernelError:
        """The KernelError for a failed compile: at the kernel's line when clang names one."""
        return compile_error(self.name, clang_errors(failure.log), failure, kernel, target,
                             include_dirs)

    def gate(self, entry: CacheEntry, kernel: str, target, *, warps: int, lds_bytes: int,
             limits, loc: SourceLoc | None) -> tuple[ResourceReport, AmdReport]:
        """cocheck over the code object: the build's resources and report, or the refusal."""
        threads = warps * target.wave_size
        checked = _checked_kernel(entry.code_path, kernel, target, limits, loc)
        _refuse_failing(checked, target, loc, kernel)
        report = AmdReport(kernel, target.name, threads, lds_bytes, checked, entry.code_path)
        _refuse_oversized(report, target, loc)
        res = checked.resources
        resources = ResourceReport(kernel=kernel, target=target.name, registers=res.vgprs or 0,
                                   stack_bytes=res.scratch_bytes, shared_static=res.lds_bytes,
                                   shared_dynamic=lds_bytes, threads=threads)
        return resources, report


def clang_errors(log: str) -> list[Diagnostic]:
    """clang's errors, each with the lines its `in instantiation of ...` notes name."""
    errors: list[Diagnostic] = []
    current: Diagnostic | None = None
    for line in log.splitlines():
        m = _DIAGNOSTIC.match(line)
        if m is None:
            continue
        kind, file, number = m.group("kind"), m.group("file"), int(m.group("line"))
        if "error" in kind:
            current = Diagnostic(file, number, m.group("message"), line)
            errors.append(current)
        elif kind == "note" and current is not None:
            if m.group("message").startswith("in instantiation of"):
                current.instantiated_at.append((file, number))
        else:
            current = None
    return errors


# ---- the gate: cocheck's result as the build's -----------------------------------------

def _checked_kernel(code: Path, kernel: str, target, limits, loc) -> FunctionReport:
    options = Options(Limits(max_vgprs=limits.max_vgprs, min_occupancy=limits.min_occupancy),
                      mcpu=target.name)
    try:
        checked: ObjectReport = check_code_object(CodeObjectFile(str(code), code), options)
    except ToolMissing as missing:
        raise KernelError(f"the AMD build gate cannot read the code object: {missing}",
                          kernel=kernel, hint=INSTALL_HINT) from None
    if checked.error is not None:
        raise KernelError(f"the {target.name} code object cannot be checked: {checked.error}",
                          loc=loc, kernel=kernel, hint="report it with the code object")
    found = next((f for f in checked.functions if f.is_kernel and f.name == kernel), None)
    if found is None:
        names = ", ".join(f.name for f in checked.functions if f.is_kernel) or "none"
        raise KernelError(f"the {target.name} code object has no kernel named '{kernel}' "
                          f"(kernels: {names})", loc=loc, kernel=kernel,
                          hint="the kernel must be `extern \"C\" __global__` under this name")
    return found


def _refuse_failing(checked: FunctionReport, target, loc, kernel: str) -> None:
    """A spill, scratch, hazard or broken limit: the first one, with its fix, as the error."""
    failing = [f for f in checked.findings if f.failing]
    if not failing:
        return
    first = failing[0]
    where = f" (at 0x{first.address:x} in the code object)" if first.address is not None else ""
    more = "" if len(failing) == 1 else \
        f"; also: {', '.join(f.kind for f in failing[1:])}"
    raise KernelError(f"the {target.name} build is refused by the code-object check "
                      f"({first.kind}){where}: {first.message}{more}", loc=loc, kernel=kernel,
                      hint=first.fix)


def _refuse_oversized(report: AmdReport, target, loc) -> None:
    """What the launch would be refused for: more LDS, or more threads, than the kernel has."""
    res = report.checked.resources
    if res.lds_bytes + report.lds_dynamic > target.lds_bytes:
        raise KernelError(f"the kernel needs {res.lds_bytes} bytes of static and "
                          f"{report.lds_dynamic} bytes of dynamic LDS, over the "
                          f"{target.lds_bytes} bytes a workgroup has on {target.name}", loc=loc,
                          kernel=report.kernel, hint="use smaller or fewer shared tiles")
    if res.max_threads is not None and report.threads > res.max_threads:
        raise KernelError(f"the launch uses {report.threads} threads per block, but the code "
                          f"object was compiled for at most {res.max_threads}", loc=loc,
                          kernel=report.kernel,
                          hint=f"declare __launch_bounds__({report.threads}) on the kernel")
