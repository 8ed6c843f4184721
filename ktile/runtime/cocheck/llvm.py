"""Finding and running the LLVM tools cocheck reads code objects with.

cocheck needs two tools of Debian's llvm-22 package: llvm-readelf (the ELF header, the symbols
and the AMDGPU metadata note) and llvm-objdump (the disassembly). llvm-cxxfilt, from the same
package, demangles kernel names when present. They are looked for in $KTILE_LLVM_BIN alone
when it is set, else in /usr/lib/llvm-22/bin, else on PATH as `name-22` or `name`.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ...config import LLVM_BIN

DEBIAN_BIN = Path("/usr/lib/llvm-22/bin")
INSTALL_HINT = ("install Debian's LLVM 22 (apt-get install -y llvm-22), or point "
                f"{LLVM_BIN.name} at a folder holding LLVM 22's tools")


class ToolMissing(Exception):
    """A required LLVM tool is not installed where cocheck looks."""


class ToolFailed(Exception):
    """An LLVM tool ran and refused the input; carries the tool's own words."""


def find_tool(name: str) -> Path | None:
    """The tool `name` (llvm-readelf, llvm-objdump, llvm-cxxfilt), or None."""
    explicit = LLVM_BIN.get()
    if explicit:
        candidate = Path(explicit) / name
        return candidate if _is_executable(candidate) else None
    if _is_executable(DEBIAN_BIN / name):
        return DEBIAN_BIN / name
    for spelled in (f"{name}-22", name):
        found = shutil.which(spelled)
        if found:
            return Path(found)
    return None


def require_tool(name: str) -> Path:
    tool = find_tool(name)
    if tool is not None:
        return tool
    where = (f"in {LLVM_BIN.name}={LLVM_BIN.get()}" if LLVM_BIN.get()
             else f"in {DEBIAN_BIN} or on PATH (as {name}-22 or {name})")
    raise ToolMissing(f"{name} not found {where}; {INSTALL_HINT}")


def run_tool(name: str, *args: str, stdin: str | None = None) -> str:
    """The tool's standard output; ToolFailed with its message when it exits non-zero."""
    tool = require_tool(name)
    result = subprocess.run([str(tool), *args], input=stdin, capture_output=True, text=True)
    if result.returncode != 0:
        said = result.stderr.strip().splitlines()
        raise ToolFailed(f"{name}: {said[-1] if said else f'exit status {result.returncode}'}")
    return result.stdout


def demangle(names: list[str]) -> dict[str, str]:
    """Readable names for mangled ones; identity where llvm-cxxfilt is missing."""
    if not names or find_tool("llvm-cxxfilt") is None:
        return {name: name for name in names}
    out = run_tool("llvm-cxxfilt", stdin="\n".join(names) + "\n").splitlines()
    if len(out) != len(names):
        return {name: name for name in names}
    return dict(zip(names, out))


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)
