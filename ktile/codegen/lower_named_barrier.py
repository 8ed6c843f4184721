"""Named barriers' C++ (ir/ops_named_barrier.py): `kt::bar_sync<ID, THREADS>()` and
`kt::bar_arrive<ID, THREADS>()` (ktile/include/ktile/nvidia/hopper/named_barrier.hpp), PTX's
`bar.sync` / `bar.arrive` with the id and count as immediates."""
from __future__ import annotations

from ..ir.ops_named_barrier import NamedBarrierOp
from .emitter import Emitter


def lower_named_barrier(e: Emitter, op: NamedBarrierOp) -> None:
    e.statement(op, f"kt::bar_{op.mode.data}<{op.prop_int('id')}, {op.prop_int('threads')}>();")


NAMED_BARRIER_LOWERINGS = {NamedBarrierOp: lower_named_barrier}
