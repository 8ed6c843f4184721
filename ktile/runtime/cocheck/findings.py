"""A finding: one thing cocheck refuses (or warns about) in one kernel, with its fix.

Findings print as ktile's diagnostics do (`place: error: in kernel 'k': what` then `fix:`),
and travel as JSON with the same fields.
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass, field

from .isa import Reg

# kinds; every one but the warnings makes the check fail (exit status 1)
SPILL = "spill"
SCRATCH = "scratch"
MAX_VGPRS = "max-vgprs"
MIN_OCCUPANCY = "min-occupancy"
LDS_LIMIT = "lds-limit"
WAIT_HAZARD = "wait-hazard"
LDS_DMA_HAZARD = "lds-dma-hazard"
NOT_CONVERGED = "not-converged"         # the check could not conclude: fails closed
LEGACY_WAIT = "legacy-wait"             # warning
NOT_CHECKED = "not-checked"             # warning


@dataclass(frozen=True)
class Finding:
    kind: str
    kernel: str                     # the kernel's readable name
    message: str
    fix: str
    failing: bool = True
    address: int | None = None      # of the instruction at fault, for disassembly findings
    source: str | None = None       # its file:line where the code object has line tables
    details: dict = field(default_factory=dict)

    def render(self, label: str) -> str:
        place = self.source or (f"{label}+0x{self.address:x}" if self.address is not None
                                else label)
        severity = "error" if self.failing else "warning"
        lines = [f"{place}: {severity}: in kernel '{self.kernel}': {self.message}"]
        text = _source_text(self.source)
        if text:
            lines.append(f"    {text.strip()}")
        lines.append(f"  fix: {self.fix}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"kind": self.kind, "kernel": self.kernel, "failing": self.failing,
                "message": self.message, "fix": self.fix,
                "address": self.address, "source": self.source, **self.details}


def format_registers(regs: frozenset[Reg] | set[Reg]) -> str:
    """v[0:3], s4 — consecutive registers of a bank as one range."""
    spans = []
    for bank in ("v", "a", "s"):
        indices = sorted(i for b, i in regs if b == bank)
        spans.extend(_ranges(bank, indices))
    return ", ".join(spans)


def _ranges(bank: str, indices: list[int]) -> list[str]:
    spans, start = [], None
    for position, index in enumerate(indices):
        start = index if start is None else start
        last = position + 1 == len(indices) or indices[position + 1] != index + 1
        if last:
            spans.append(f"{bank}{index}" if start == index else f"{bank}[{start}:{index}]")
            start = None
    return spans


def _source_text(source: str | None) -> str:
    if not source or ":" not in source:
        return ""
    path, _, line = source.rpartition(":")
    return linecache.getline(path, int(line)) if line.isdigit() else ""
