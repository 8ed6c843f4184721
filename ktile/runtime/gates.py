"""The resource gate: what a code object uses, and the refusal of any spill.

A register spill moves values through scratch memory behind the kernel's back, and that
traffic is reordered against the hand-placed waits (trap 2 of docs/DESIGN.md): a spilling
build is an error, never a slow kernel. A stack frame is refused with it, since it is the same
scratch memory (a local array indexed at run time lands there).

Each toolchain driver reads its compiler's report (ptxas -v on NVIDIA) into a
`ResourceReport`; the gate and the report text are the same for every backend.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import KernelError, SourceLoc


@dataclass(frozen=True)
class Occupancy:
    """How many warps of this kernel one multiprocessor (CU) holds at once, and what limits it."""
    warps: int
    max_warps: int
    limited_by: str          # "registers", "shared memory", "blocks", "threads"

    @property
    def fraction(self) -> float:
        return self.warps / self.max_warps if self.max_warps else 0.0


@dataclass(frozen=True)
class ResourceReport:
    kernel: str
    target: str
    registers: int                   # per thread (NVIDIA) / VGPRs per lane (AMD)
    spill_stores: int = 0            # bytes
    spill_loads: int = 0             # bytes
    stack_bytes: int = 0             # the stack frame, callees included
    shared_static: int = 0           # bytes the code object declares itself
    shared_dynamic: int = 0          # bytes the launcher passes (kt.lds_bytes)
    threads: int = 0                 # per block
    occupancy: Occupancy | None = None

    @property
    def shared_bytes(self) -> int:
        return self.shared_static + self.shared_dynamic

    @property
    def spills(self) -> bool:
        return bool(self.spill_stores or self.spill_loads)

    def report(self) -> str:
        lines = [f"kernel '{self.kernel}' for {self.target}: {self.threads} threads per block",
                 f"  registers     {self.registers} per thread",
                 f"  spills        {self.spill_stores} bytes stored, "
                 f"{self.spill_loads} bytes loaded",
                 f"  stack frame   {self.stack_bytes} bytes",
                 f"  shared memory {self.shared_bytes} bytes ({self.shared_static} static + "
                 f"{self.shared_dynamic} dynamic)"]
        if self.occupancy is not None:
            occ = self.occupancy
            lines.append(f"  occupancy     {occ.warps} of {occ.max_warps} warps per "
                         f"multiprocessor ({occ.fraction:.0%}, limited by {occ.limited_by})")
        return "\n".join(lines)


def resource_gate(report: ResourceReport, loc: SourceLoc | None = None) -> ResourceReport:
    """`report` itself when the kernel neither spills nor uses a stack frame; else the error."""
    if not report.spills and not report.stack_bytes:
        return report
    used = (f"{report.spill_stores} bytes spill stores, {report.spill_loads} bytes spill loads, "
            f"{report.stack_bytes} bytes stack frame, at {report.registers} registers per thread")
    what = "spills registers" if report.spills else "uses a stack frame (local memory)"
    raise KernelError(
        f"the {report.target} build {what}: {used}. Scratch traffic is reordered against the "
        f"kernel's waits, so ktile refuses a build that spills or keeps a stack",
        loc=loc, kernel=report.kernel,
        hint="use smaller tiles, keep fewer tiles live at once (finish with one before loading "
             "the next), or spread the work over more warps")
