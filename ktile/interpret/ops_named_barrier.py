"""Named barriers (ir/ops_named_barrier.py) on the interpreter.

Each (block, id) keeps how many warps have arrived in the phase now open and how many phases
have completed; a phase completes at threads / 32 arrivals. `bar_arrive` arrives; `bar_sync`
arrives and spins (machine.SPIN) until the phase it arrived in has completed, while the
block's other warps run, so a turn never given shows as a deadlock at the sync.
"""
from __future__ import annotations

from ..ir.ops_named_barrier import THREADS_UNIT, NamedBarrierOp
from .machine import SPIN


class NamedBarrierState:
    """One named barrier of one block: arrivals in the open phase, phases completed."""

    def __init__(self):
        self.arrived = 0
        self.completed = 0

    def arrive(self, warps: int) -> int:
        """Counts one warp; returns the number of the phase it arrived in."""
        phase = self.completed
        self.arrived += 1
        if self.arrived == warps:
            self.arrived = 0
            self.completed += 1
        return phase


def _named_barrier(op: NamedBarrierOp, c):
    barrier, warps = op.prop_int("id"), op.prop_int("threads") // THREADS_UNIT
    sync = op.mode.data == "sync"

    def h(r, w):
        state = w.block.shared.setdefault(("named_barrier", barrier), NamedBarrierState())
        phase = state.arrive(warps)
        if sync and state.completed <= phase:
            yield op, lambda: state.completed > phase, SPIN
    return h


HANDLERS = {NamedBarrierOp: _named_barrier}
