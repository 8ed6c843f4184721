"""The bad-input corpus's assertions, shared by every `tests/tier0/test_bad_inputs_*.py` file.

A case is *clear* when ktile refuses it with one of its user-error kinds (`KernelError`,
`InputError`; a command line exits 1 or 2 with a one-line message) whose text holds the words
that name the problem and the fix, and, for a kernel, points at the kernel's own line. Anything
else — a raw Python, numpy, torch or xDSL exception, an `InternalError`, a traceback, a silent
acceptance — fails the case.
"""
from __future__ import annotations

import inspect
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from ktile.errors import InternalError, KernelError

MARK = "# <- here"


def marked_line(fn: Callable, marker: str = MARK) -> int:
    """The line of `fn`'s source that carries `marker` (a kernel's bad line)."""
    target = getattr(fn, "fn", fn)
    lines, first = inspect.getsourcelines(target)
    for k, line in enumerate(lines):
        if marker in line:
            return first + k
    raise AssertionError(f"no {marker!r} in {target.__name__}")


def refused(action: Callable[[], object], *words: str, kind: type = KernelError) -> KernelError:
    """Run `action`; it must raise `kind` (a KernelError kind) whose text holds every word.

    Words are matched case-insensitively. The message must not be an internal error or carry
    a traceback."""
    assert issubclass(kind, KernelError)
    try:
        action()
    except kind as err:
        text = str(err)
        low = text.lower()
        for word in words:
            assert word.lower() in low, f"{word!r} not in the message:\n{text}"
        assert "traceback" not in low and "internal error" not in low, text
        return err
    except InternalError as err:
        pytest.fail(f"an internal error for a user's mistake: {err}")
    except Exception as err:  # noqa: BLE001 - the corpus exists to catch exactly these
        pytest.fail(f"unclear error: raw {type(err).__module__}.{type(err).__name__}: {err}")
    pytest.fail("silent acceptance: nothing was refused")


def points_at(err: KernelError, fn: Callable, marker: str = MARK) -> None:
    """The error names the kernel's marked line, and shows it."""
    assert err.loc is not None, f"no location in:\n{err}"
    assert err.loc.line == marked_line(fn, marker), f"points at line {err.loc.line}:\n{err}"
    shown = err.loc.source_line().strip()
    assert shown and shown in str(err), str(err)


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def run_cli(*argv: str, stdin: str | None = None, timeout: float = 120) -> CliResult:
    """Run a ktile console entry point (`ktile`, `ktile-opt`, `ktile-translate`) in a fresh
    interpreter, as a user would."""
    module = {"ktile": "ktile.tools.cli", "ktile-opt": "ktile.tools.opt",
              "ktile-translate": "ktile.tools.translate"}[argv[0]]
    code = f"import sys; from {module} import main; sys.exit(main())"
    proc = subprocess.run([sys.executable, "-c", code, *argv[1:]], input=stdin,
                          capture_output=True, text=True, timeout=timeout)
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def cli_refused(result: CliResult, *words: str, codes: tuple[int, ...] = (1, 2)) -> None:
    """A command line refused its input clearly: exit 1 or 2, a short message holding every
    word, no Python traceback."""
    text = result.err + result.out
    assert result.code in codes, f"exit {result.code}:\n{text}"
    assert "Traceback" not in text, text
    assert text.strip(), "no message"
    for word in words:
        assert word.lower() in text.lower(), f"{word!r} not in:\n{text}"
