"""The two kinds of error: the kernel author's mistakes, and ours.

A `KernelError` says what is wrong, why, and how to fix it, and points at the kernel's own
line with that line shown. An `InternalError` is a bug in ktile and says so.
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    def source_line(self) -> str:
        return linecache.getline(self.file, self.line).rstrip("\n")


class KtileError(Exception):
    """Base of every error ktile raises on purpose."""


class KernelError(KtileError):
    """A mistake in a kernel, its call, or its inputs: fixable by the user."""

    def __init__(self, message: str, *, loc: SourceLoc | None = None, kernel: str | None = None,
                 op: str | None = None, hint: str | None = None):
        self.message = message
        self.loc = loc
        self.kernel = kernel
        self.op = op
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        where = f"{self.loc}: " if self.loc else ""
        who = f"in kernel '{self.kernel}'" if self.kernel else ""
        if self.op:
            who = f"{who}, {self.op}" if who else self.op
        head = f"{where}error: {who}: {self.message}" if who else f"{where}error: {self.message}"
        lines = [head]
        if self.loc:
            text = self.loc.source_line()
            if text:
                lines.append(f"    {text.strip()}")
        if self.hint:
            lines.append(f"  fix: {self.hint}")
        return "\n".join(lines)

    def with_context(self, *, kernel: str | None = None, loc: SourceLoc | None = None) -> "KernelError":
        """The same error, with the kernel name and location filled in where missing."""
        return KernelError(self.message, loc=self.loc or loc, kernel=self.kernel or kernel,
                           op=self.op, hint=self.hint)


class InputError(KernelError, TypeError):
    """Bad arguments at a kernel call: dtype, shape, rank, device, stride."""


class InternalError(KtileError):
    """A bug in ktile, not in the kernel."""

    def __init__(self, message: str):
        super().__init__(f"ktile internal error (please report): {message}")


class KernelWarning(UserWarning):
    """Shown to the user by the passes (budgets, occupancy); never stored silently."""
