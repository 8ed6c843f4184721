"""The C++ text being written: indentation, the op each line translates, and `#line`.

A `#line N "file"` directive numbers the *next* physical line N, and every later line one
more. So the writer tracks the line the compiler believes comes next, and before a line that
translates an op it emits a directive whenever that belief differs from the op's Python line:
two statements from one Python line each get one, so a compiler error in either names the
kernel's line, never the line after it.
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation

from ..errors import SourceLoc
from ..ir.query import loc_of

INDENT = "  "


@dataclass(frozen=True)
class CppLine:
    """One line of the generated file and the op it translates (None: prologue, directive)."""
    text: str
    op: Operation | None = None

    @property
    def is_directive(self) -> bool:
        return self.text.startswith("#")


class CppWriter:
    def __init__(self) -> None:
        self.lines: list[CppLine] = []
        self.depth = 0
        self._next: tuple[str, int] | None = None   # (file, line) the compiler gives the next line

    def text(self) -> str:
        return "".join(line.text + "\n" for line in self.lines)

    def plain(self, text: str = "") -> None:
        """A line no op produced: the include, comments, blank lines."""
        self._append(CppLine(text))

    def statement(self, text: str, op: Operation, *, locate: bool = True) -> None:
        """A line translating `op`; `locate` False for closing braces, which need no `#line`."""
        if locate:
            self._locate(loc_of(op))
        self._append(CppLine(INDENT * self.depth + text, op))

    def open(self, text: str, op: Operation) -> None:
        """`text` ends with `{`; what follows is indented one level."""
        self.statement(text, op)
        self.depth += 1

    def close(self, op: Operation, text: str = "}") -> None:
        self.depth -= 1
        self.statement(text, op, locate=False)

    def reopen(self, text: str, op: Operation) -> None:
        """`} else {`: closes one block and opens the next at the same depth."""
        self.close(op, text)
        self.depth += 1

    def _locate(self, loc: SourceLoc | None) -> None:
        if loc is None or self._next == (loc.file, loc.line):
            return
        same_file = self._next is not None and self._next[0] == loc.file
        file_part = "" if same_file else f" {_quoted(loc.file)}"  # `#line N` keeps the file
        self.lines.append(CppLine(f"#line {loc.line}{file_part}"))
        self._next = (loc.file, loc.line)

    def _append(self, line: CppLine) -> None:
        self.lines.append(line)
        if self._next is not None:
            self._next = (self._next[0], self._next[1] + 1)


def _quoted(path: str) -> str:
    escaped = path.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
