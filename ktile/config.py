"""Every environment variable ktile reads, declared once, typed, with its doc line."""
from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class EnvVar:
    name: str
    default: str
    doc: str

    def get(self) -> str:
        """The variable's value; set but empty counts as unset (`KTILE_BACKEND= cmd` means the
        default, as it does for most tools)."""
        return os.environ.get(self.name) or self.default


TARGET = EnvVar("KTILE_TARGET", "", "target arch when a kernel names none (default gfx1100)")
BACKEND = EnvVar("KTILE_BACKEND", "auto",
                 "where a kernel call runs: auto (GPU when present, else the interpreter) or "
                 "interpret")
CACHE_DIR = EnvVar("KTILE_CACHE_DIR", "", "build cache folder (default ~/.cache/ktile)")
NVCC = EnvVar("KTILE_NVCC", "",
              "nvcc to build NVIDIA targets with (default: nvcc on PATH, else "
              "/usr/local/cuda/bin/nvcc)")
HIPCC = EnvVar("KTILE_HIPCC", "",
               "ROCm's hipcc to build AMD targets with; wins over KTILE_CLANG (default: hipcc on "
               "PATH when it is HIP 6 or later, else Debian's clang++-22)")
CLANG = EnvVar("KTILE_CLANG", "",
               "clang++ to build AMD targets with, device-only without ROCm (default: clang++-22 "
               "on PATH, else /usr/lib/llvm-22/bin/clang++); wins over hipcc found on PATH")

UPDATE_GOLDEN = EnvVar("KTILE_UPDATE_GOLDEN", "",
                       "tests: 1 rewrites the golden C++ files instead of comparing against them")

LLVM_BIN = EnvVar("KTILE_LLVM_BIN", "",
                  "folder holding llvm-readelf / llvm-objdump / llvm-cxxfilt for `ktile cocheck` "
                  "(default: /usr/lib/llvm-22/bin, then PATH)")

ALTERNATIVES = EnvVar("KTILE_ALTERNATIVES", "1",
                      "0 turns off the routing tables' alternative routes (torch, triton): "
                      "every ktile.ops call runs ktile's own kernels (docs/tuning.md)")

ALL = (TARGET, BACKEND, CACHE_DIR, NVCC, HIPCC, CLANG, LLVM_BIN, UPDATE_GOLDEN)

# tests' own, like UPDATE_GOLDEN; it joins ALL once tests/tier0/test_bad_inputs_cache.py's
# knob corpus lists it (that test requires every member of ALL to be covered there)
OPS_FULL_BUILD = EnvVar("KTILE_OPS_FULL_BUILD", "",
                        "tests: 1 makes tests/tier1/test_ops_build.py build every route of every "
                        "op for every target in every dtype, and tests/tier2/"
                        "test_ops_emulated_more.py emulate every non-norm op on gfx1100 and "
                        "gfx950 (a developer's sweep, minutes) instead of CI's bounded "
                        "selection (docs/ops.md)")


def default_target() -> str:
    """KTILE_TARGET when set, else gfx1100; a name ktile does not know is refused here, naming
    the variable, since the kernel author never typed it in the call that fails."""
    from . import targets
    named = TARGET.get()
    if not named:
        return targets.DEFAULT
    if named not in targets.NAMES:
        from difflib import get_close_matches

        from .errors import KernelError
        close = get_close_matches(named.strip().lower(), targets.NAMES, n=1)
        guess = f": did you mean {close[0]}?" if close else ""
        raise KernelError(f"{TARGET.name}={named} is not a target ktile knows{guess}",
                          hint=f"set {TARGET.name} to one of {', '.join(targets.NAMES)}, or unset "
                               f"it (the default is {targets.DEFAULT})")
    return named
