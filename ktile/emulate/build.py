"""The host build of an emulated kernel: the generated AMD C++ and a `main` (harness.hpp),
compiled for the CPU with the emulated instruction layer first on the include path.

    clang++-22 -x c++ -std=c++17 -O0 -gline-tables-only -Wno-psabi \
        -I ktile/emulate/include -I ktile/include emulator.cpp -o emulator

`ktile/emulate/include` holds ktile/amd/device.hpp, common/isa_lanes.hpp, common/isa_memory.hpp
and <family>/isa.hpp — the instruction layer — and ktile/emulation/ (the emulated machine);
every other header is found in ktile/include, the device code unchanged. Line tables map a
violation's stack to the kernel's Python line (the generated C++'s `#line` directives). -O0:
compiling dominates (the examples' launches run in well under a second), and -O0 compiles in
about 60% of -O1's time (every example on gfx1100 and gfx950, the project's 2-core machine).

The compiler is `KTILE_CLANG` when set, else `clang++-22` on PATH, else
/usr/lib/llvm-22/bin/clang++ (as for the AMD device builds; the host build needs a clang that
knows `__bf16`, 17 or later). Executables go through the build cache, keyed by the program, both
header trees, the compiler's identity and the flags.
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from .. import config
from ..errors import KernelError
from ..runtime.cache import (INCLUDE_DIR, BuildCache, BuildFailed, build_key, header_hash,
                             run_command)
from ..runtime.toolchains.amd import CLANG_FALLBACK, CLANG_NAMES, INSTALL_HINT, clang_errors
from ..runtime.toolchains.diagnostics import compile_error
from ..runtime.toolchains.version import version_text

EMULATION_INCLUDE = Path(__file__).resolve().parent / "include"
INCLUDE_DIRS = (EMULATION_INCLUDE, INCLUDE_DIR)       # the emulated layer shadows the device's
FLAGS = ("-x", "c++", "-std=c++17", "-O0", "-gline-tables-only", "-Wno-psabi")
SOURCE_NAME = "emulator.cpp"
PROGRAM_NAME = "emulator"
COMPILE_TIMEOUT_S = 600

_ENTRY = re.compile(r'extern "C" __global__ __launch_bounds__\((\d+)\) void (\w+)\(([^)]*)\)')
_MAIN = """
#include "ktile/emulation/harness.hpp"
int main(int argc, char** argv) {{
  return kt::emulation::with_scalars<{scalars}>::run_kernel({kernel}, {kernel}__grid, argc, argv);
}}
"""
# the C++ types of a kernel's runtime scalar parameters (codegen/cpp_types.py spells them)
_SCALAR_PARAM = re.compile(r"^(float|int32_t) v\d+$")


@dataclass(frozen=True)
class Emulator:
    """A kernel's host executable: `program LAUNCH RESULT` runs every block of one launch."""
    program: Path
    kernel: str
    threads: int            # the kernel's launch bounds: threads per block


def find_host_compiler() -> str:
    """KTILE_CLANG, else clang++-22 on PATH, else Debian's LLVM 22 clang++."""
    named = config.CLANG.get()
    if named:
        found = named if os.path.sep in named else shutil.which(named)
        if found and os.access(found, os.X_OK):
            return found
        raise KernelError(f"{config.CLANG.name}={named} is not an executable file",
                          hint=f"point {config.CLANG.name} at clang++, or unset it")
    for name in CLANG_NAMES:
        if found := shutil.which(name):
            return found
    if os.access(CLANG_FALLBACK, os.X_OK):
        return CLANG_FALLBACK
    raise KernelError("wave emulation compiles the kernel for the host with clang++-22; found none "
                      f"({config.CLANG.name}, clang++-22 on PATH, {CLANG_FALLBACK})",
                      hint=INSTALL_HINT)


def _identity(path: str) -> str:
    """The compiler's path and `--version` text: part of every cache key (asked once)."""
    return f"{os.path.realpath(path)}\n{version_text(path, INSTALL_HINT)}"


def program_source(source: str) -> tuple[str, str, int]:
    """The generated C++ with its `main`; the kernel's C++ name and its threads per block."""
    found = _ENTRY.search(source)
    if found is None or f"{found.group(2)}__grid(" not in source:
        raise KernelError("the C++ has no ktile kernel entry (extern \"C\" __global__ "
                          "__launch_bounds__(N) void name(...) and name__grid)",
                          hint="emulate C++ that ktile generated for an AMD target")
    kernel = found.group(2)
    scalars = [m.group(1) for p in found.group(3).split(",")
               if (m := _SCALAR_PARAM.match(p.strip()))]
    return (source + _MAIN.format(kernel=kernel, scalars=", ".join(scalars)), kernel,
            int(found.group(1)))


def build_emulator(source: str, target, *, cache: BuildCache | None = None) -> Emulator:
    """The host executable of generated C++ `source` for AMD `target`, built or from the cache."""
    program, kernel, threads = program_source(source)
    compiler = find_host_compiler()
    headers = "\n".join(header_hash(d) for d in INCLUDE_DIRS)
    key = build_key(source=program, headers=headers, toolchain=_identity(compiler),
                    flags=list(FLAGS), target=f"emulate-{target.name}")
    command = [compiler, *FLAGS, *(arg for d in INCLUDE_DIRS for arg in ("-I", str(d)))]

    def compile_program(source_path: Path, program_path: Path):
        return run_command([*command, str(source_path), "-o", str(program_path)],
                           timeout=COMPILE_TIMEOUT_S)
    cache = cache or BuildCache.default()
    meta = {"kernel": kernel, "target": target.name, "emulation": True, "flags": list(FLAGS)}
    try:
        entry, _ = cache.get_or_build(key, program, compile_program, source_name=SOURCE_NAME,
                                      code_name=PROGRAM_NAME, meta=meta)
    except BuildFailed as failure:
        raise compile_error(os.path.basename(compiler), clang_errors(failure.log), failure,
                            kernel, target, list(INCLUDE_DIRS)) from None
    return Emulator(entry.code_path, kernel, threads)
