"""The kt dialect's named barriers: `bar.sync id, threads` and `bar.arrive id, threads`.

A named barrier (`hk.bar_sync` / `hk.bar_arrive`, lang/named_barriers.py) orders warps of a
block without meeting all of them: its phase completes once `threads` threads have arrived,
counted per warp (a warp arrives for its 32 lanes). `sync` arrives and waits for the phase to
complete; `arrive` arrives and goes on. Ids 1..15 (sm_90a has 16; 0 is `__syncthreads`'s);
`threads` a multiple of 32. The passes check the rest per kernel (passes/named_barriers.py):
one thread count per id, within the block.
"""
from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, StringAttr, i64
from xdsl.irdl import irdl_op_definition, prop_def

from . import verifiers as check
from .ops import KtOp
from .verifiers import IRError

MODES = ("sync", "arrive")
IDS = range(1, 16)      # PTX ISA: 16 barriers a block; 0 is __syncthreads' (kt.barrier)
THREADS_UNIT = 32       # bar.sync's count: a multiple of the warp size


@irdl_op_definition
class NamedBarrierOp(KtOp):
    """`bar.{sync,arrive} id, threads` by every lane of the warp that reaches it."""
    name = "kt.named_barrier"
    mode = prop_def(StringAttr)
    id = prop_def(IntegerAttr)
    threads = prop_def(IntegerAttr)

    def __init__(self, mode: str, barrier: int, threads: int):
        super().__init__(properties={"mode": StringAttr(mode), "id": IntegerAttr(barrier, i64),
                                     "threads": IntegerAttr(threads, i64)})

    def verify_(self) -> None:
        check.check_choice(self, "mode", self.mode.data, MODES)
        barrier, threads = self.prop_int("id"), self.prop_int("threads")
        if barrier not in IDS:
            raise IRError(self, f"a named barrier's id is 1..15, got {barrier}")
        if threads < THREADS_UNIT or threads % THREADS_UNIT:
            raise IRError(self, f"a named barrier counts whole warps: threads must be a "
                                f"positive multiple of {THREADS_UNIT}, got {threads}")


NAMED_BARRIER_OPS = [NamedBarrierOp]
