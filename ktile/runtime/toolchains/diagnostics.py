"""A failed compile turned into a KernelError at the kernel's Python line, for every driver.

The generated C++ carries `#line N "kernel.py"` directives, so a compiler names the kernel's
own file and line in its diagnostics (nvcc: `kernel.py(25): error: ...`, clang:
`kernel.py:25:7: error: ...`). Each driver parses its compiler's spelling into `Diagnostic`s;
what is made of them is the same everywhere: the error at the kernel line when one is
involved, else an error naming the tile headers (a bug there) or the install (a missing
header), with the generated source and the compiler's log named in the fix.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...errors import KernelError, SourceLoc
from ..cache import BuildFailed

SHOWN_ERRORS = 3          # error lines quoted in a message; the log holds all of them


@dataclass
class Diagnostic:
    """One error as the compiler printed it, with the lines it was instantiated from."""
    file: str
    line: int
    message: str
    text: str                                   # the compiler's own line, quoted in messages
    instantiated_at: list[tuple[str, int]] = field(default_factory=list)  # innermost first

    def kernel_line(self, source: Path, include_dirs: list[Path]) -> SourceLoc | None:
        """The kernel's Python line this error is about: its own position when that is outside
        the generated file and the headers, else the last such line it was instantiated at."""
        candidates = [(self.file, self.line), *self.instantiated_at]
        kernel_lines = [(f, n) for f, n in candidates if is_kernel_file(f, source, include_dirs)]
        if not kernel_lines:
            return None
        file, line = kernel_lines[0] if kernel_lines[0] == candidates[0] else kernel_lines[-1]
        return SourceLoc(file, line)

    def in_headers(self, include_dirs: list[Path]) -> bool:
        return under(self.file, include_dirs)


def compile_error(compiler: str, errors: list[Diagnostic], failure: BuildFailed, kernel: str,
                  target, include_dirs: list[Path]) -> KernelError:
    """The KernelError for a failed compile: at the kernel's line when the compiler names one."""
    where = (f"the generated C++ is {failure.source_path}; {compiler}'s command and full log are "
             f"in {failure.folder}")
    if not errors:
        head = first_lines(failure.log)
        return KernelError(f"{compiler} failed for {target.name} (exit "
                           f"{failure.result.returncode}): {head}", kernel=kernel, hint=where)
    first = errors[0]
    shown = "\n  ".join(e.text for e in errors[:SHOWN_ERRORS])
    loc = first.kernel_line(failure.source_path, include_dirs)
    if loc is not None:
        return KernelError(f"{compiler} rejects the {target.name} C++ generated for this line:\n  "
                           f"{shown}", loc=loc, kernel=kernel,
                           hint=f"if the kernel line is right, ktile's {target.name} headers "
                                f"lack what it needs; {where}")
    if first.in_headers(include_dirs):
        return KernelError(f"ktile's {target.name} tile headers do not compile for this "
                           f"kernel (no line of the kernel is involved):\n  {shown}",
                           kernel=kernel, hint=f"report it with the log; {where}")
    return KernelError(f"{compiler} cannot compile the C++ generated for this kernel for "
                       f"{target.name}:\n  {shown}", kernel=kernel,
                       hint=f"check that ktile's {target.name} headers are installed; {where}")


def is_kernel_file(file: str, source: Path, include_dirs: list[Path]) -> bool:
    """A file that is neither the generated C++ nor a header: the kernel's Python file
    (clang's `<command line>` and `<built-in>` are not files)."""
    if file.startswith("<") or Path(file).resolve() == Path(source).resolve():
        return False
    return not under(file, include_dirs)


def under(file: str, folders: list[Path]) -> bool:
    path = Path(file).resolve()
    return any(path.is_relative_to(Path(d).resolve()) for d in folders)


def first_lines(log: str, count: int = 6) -> str:
    lines = [line for line in log.splitlines() if line.strip()]
    return "\n  ".join(lines[:count]) or "(no output)"
