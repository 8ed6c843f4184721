"""What the IR tools read: a kt module's text, from a file or stdin.

Anything that is not one — a missing path, a directory, a file it may not read, bytes that are
not UTF-8 text, an empty file — is a `ToolError` whose one line says which and what to give
instead; the tools print it and exit 1, never with a traceback.
"""
from __future__ import annotations

import sys


class ToolError(Exception):
    """A command-line mistake: `code` is the exit status (1 bad input, 2 bad usage)."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


EXPECTED = "a kt module in MLIR text (builtin.module { func.func ... })"


def read_source(path: str | None) -> str:
    """The text of `path` ('-' or None: stdin)."""
    name = input_name(path)
    data = sys.stdin.buffer.read() if name == "<stdin>" else _read_bytes(path)  # type: ignore
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ToolError(f"{name} is not text (byte {err.start} is not UTF-8): expected "
                        f"{EXPECTED}") from None
    if "\0" in text:
        raise ToolError(f"{name} is a binary file (it holds NUL bytes): expected {EXPECTED}")
    if not text.strip():
        raise ToolError(f"{name} is empty: expected {EXPECTED}")
    return text


def input_name(path: str | None) -> str:
    return "<stdin>" if path in (None, "-") else path  # type: ignore[return-value]


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise ToolError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ToolError(f"{path} is a directory: give the .mlir file inside it") from None
    except PermissionError:
        raise ToolError(f"{path}: permission denied (the file is not readable)") from None
    except OSError as err:
        raise ToolError(f"{path}: cannot read it ({err.strerror or err})") from None
