"""The trace in progress: its builder, kernel name, target, and the user's source location.

Every value and builtin asks `current()` for the trace it belongs to. Locations are taken
from the first stack frame outside the ktile package, so each op records the kernel line
that made it (the AST rewrite keeps the original line numbers).
"""
from __future__ import annotations

import difflib
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

from ..errors import KernelError, SourceLoc

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_state = threading.local()


def user_frame_loc(skip_package: str = _PACKAGE_DIR) -> SourceLoc | None:
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(skip_package) and not filename.startswith("<"):
            return SourceLoc(filename, frame.f_lineno, 0)
        frame = frame.f_back
    return None


@dataclass
class Trace:
    """State of one kernel being traced."""
    builder: Any                       # ktile.ir.emit.Builder
    kernel: str
    target: Any                        # ktile.targets.Target
    warps: int
    constants: dict[str, Any]
    coindexed: dict[tuple, list[int]] = field(default_factory=dict)
    divergence: int = 0                # > 0 inside a branch on a warp-varying condition
    func_depth: int = 0                # @hk.func calls in progress, nested
    loc_override: SourceLoc | None = None

    def loc(self) -> SourceLoc | None:
        return self.loc_override or user_frame_loc()

    def error(self, message: str, *, op: str | None = None, hint: str | None = None) -> KernelError:
        return KernelError(message, loc=self.loc(), kernel=self.kernel, op=op, hint=hint)


def current() -> Trace:
    trace = getattr(_state, "trace", None)
    if trace is None:
        raise KernelError("this ktile function can only be used inside a @kernel body while it "
                          "is traced", loc=user_frame_loc(),
                          hint="call it from a function decorated with @hk.kernel or @hk.func")
    return trace


def active() -> Trace | None:
    return getattr(_state, "trace", None)


class tracing:
    """`with tracing(trace):` makes `trace` current for the body."""

    def __init__(self, trace: Trace):
        self.trace = trace

    def __enter__(self) -> Trace:
        self.saved = getattr(_state, "trace", None)
        _state.trace = self.trace
        return self.trace

    def __exit__(self, *exc) -> None:
        _state.trace = self.saved


def error(message: str, *, op: str | None = None, hint: str | None = None) -> KernelError:
    """A user error at the current kernel line (also usable outside a trace)."""
    trace = active()
    if trace is None:
        return KernelError(message, loc=user_frame_loc(), op=op, hint=hint)
    return trace.error(message, op=op, hint=hint)


class UnknownName(KernelError, AttributeError):
    """A name looked up on `hk`, one of its namespaces or a traced value that does not exist.

    It is an AttributeError too, so `getattr(x, name, default)` and `hasattr` keep working."""


def unknown_name(owner: str, name: str, known: list[str]) -> UnknownName:
    """`owner` has no `name`: the error names the closest of `known` (or all of them), at the
    kernel's line when a trace is in progress, else at the caller's line."""
    public = sorted(k for k in known if not k.startswith("_"))
    close = difflib.get_close_matches(name, public, n=3, cutoff=0.6)
    if close:
        hint = "did you mean " + " or ".join(f"{owner}.{c}" for c in close) + "?"
    else:
        hint = f"{owner} has: {', '.join(public)}"
    trace = active()
    loc = trace.loc() if trace is not None else user_frame_loc()
    return UnknownName(f"{owner} has no {name!r}", loc=loc,
                       kernel=trace.kernel if trace is not None else None, hint=hint)
