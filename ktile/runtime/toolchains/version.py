"""A compiler's `--version` text, asked once per path: part of every build's cache key, and the
first time ktile runs the compiler a toolchain knob names, so the place where a knob pointing
at something that is no compiler (a text file, a script that fails) is refused.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess

from ...errors import KernelError

VERSION_TIMEOUT_S = 60


def named_executable(named: str, knob: str, hint: str) -> str:
    """The compiler a toolchain knob names (`knob=named`): a path, or a bare name looked up on
    PATH. It must be an executable file; else a KernelError with `hint` as its fix."""
    found = named if os.path.sep in named else shutil.which(named)
    if found and os.path.isfile(found) and os.access(found, os.X_OK):
        return found
    where = "" if os.path.sep in named else " on PATH"
    raise KernelError(f"{knob}={named} is not an executable file{where}", hint=hint)


@functools.lru_cache(maxsize=None)
def version_text(path: str, hint: str) -> str:
    """`path --version`'s output; a KernelError, with `hint` as its fix, when it cannot run or
    fails. Asked directly (not through the build cache's runner) so that a file the system
    cannot execute is told apart from a compiler that failed."""
    try:
        done = subprocess.run([path, "--version"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace",
                              timeout=VERSION_TIMEOUT_S)
    except OSError as exc:
        raise KernelError(f"{path} cannot be run as a compiler ({exc.strerror or exc})",
                          hint=hint) from None
    except subprocess.TimeoutExpired:
        raise KernelError(f"{path} --version did not answer in {VERSION_TIMEOUT_S} s",
                          hint=hint) from None
    said = done.stdout.strip()
    if done.returncode != 0:
        first = said.splitlines()[0][:200] if said else "no output"
        raise KernelError(f"{path} --version failed (exit {done.returncode}: {first}), so it is "
                          f"not a compiler ktile can use", hint=hint)
    return said
