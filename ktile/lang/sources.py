"""A kernel's source lines, read once per code object.

Decorating a kernel reads its source three times (its text for the trace key, its parameters'
lines, the control-flow rewrite); `inspect` tokenizes the file each time. A kernel defined
anew by a factory (the same `def` run again) has the same code object, so it is read once.
"""
from __future__ import annotations

import inspect
from typing import Callable

_LINES: dict = {}


def source_lines(fn: Callable) -> tuple[list[str], int]:
    """`inspect.getsourcelines(fn)`, cached by `fn.__code__`; raises as it does (OSError,
    TypeError) when Python kept no source."""
    code = fn.__code__
    found = _LINES.get(code)
    if found is None:
        found = _LINES[code] = inspect.getsourcelines(fn)
    return found
