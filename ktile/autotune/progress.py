"""A progress bar on stderr, drawn only when stderr is a terminal or when asked."""
from __future__ import annotations

import sys


class Progress:
    def __init__(self, total: int, *, enabled: bool | None = None, stream=None, width: int = 30):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total, self.done, self.width = total, 0, width

    def add(self, count: int) -> None:
        self.total += count

    def step(self, label: str = "") -> None:
        self.done += 1
        if not self.enabled:
            return
        filled = min(self.width, self.width * self.done // max(self.total, 1))
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r[{bar}] {self.done}/{self.total} {label[:50]:<50}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
