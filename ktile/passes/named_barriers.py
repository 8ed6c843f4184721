"""The named barriers' per-kernel rules, checked by the verify pass (verify.py).

Invariant established: every kt.named_barrier of the kernel is on a target with warp
specialisation, counts at most the block's threads, and every use of one id counts the same
threads (the hardware barrier's count is the one of its phase: two counts for one id would
complete a phase early or never). The op's own checks (id 1..15, a multiple of 32) are its
verifier's (ir/ops_named_barrier.py).
"""
from __future__ import annotations

from xdsl.dialects.func import FuncOp

from ..ir.ops_named_barrier import NamedBarrierOp
from ..ir.query import error_at
from ..targets.base import Target
from .common import OpIndex


def check_named_barriers(fn: FuncOp, n_warps: int, target: Target, index: OpIndex) -> None:
    counts: dict[int, NamedBarrierOp] = {}
    for op in index.of(NamedBarrierOp):
        check_target(op, target)
        check_within_block(op, n_warps * target.wave_size)
        first = counts.setdefault(op.prop_int("id"), op)
        if first.prop_int("threads") != op.prop_int("threads"):
            raise error_at(op, f"named barrier {op.prop_int('id')} counts "
                               f"{op.prop_int('threads')} threads here and "
                               f"{first.prop_int('threads')} at an earlier use: one id, one count",
                           what=f"bar_{op.mode.data}",
                           hint="give each group of warps that meet its own id")


def check_target(op: NamedBarrierOp, target: Target) -> None:
    if not target.warp_specialization:
        raise error_at(op, f"a named barrier on {target.name}, which has no warp "
                           f"specialisation", what=f"bar_{op.mode.data}",
                       hint="named barriers are sm_90a's (bar.sync / bar.arrive)")


def check_within_block(op: NamedBarrierOp, block_threads: int) -> None:
    if op.prop_int("threads") > block_threads:
        raise error_at(op, f"named barrier {op.prop_int('id')} waits for "
                           f"{op.prop_int('threads')} threads; the block has {block_threads}, "
                           f"so its phase never completes", what=f"bar_{op.mode.data}",
                       hint="count only the threads that sync or arrive on it")
