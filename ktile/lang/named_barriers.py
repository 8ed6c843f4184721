"""`hk.bar_sync(id, threads)` / `hk.bar_arrive(id, threads)`: named barriers (sm_90a).

A named barrier orders some warps of a block without meeting all of them (`hk.barrier()` is the
whole block's, refused inside a pipeline role). Its phase completes once `threads` threads have
arrived, a warp arriving for its 32 lanes: `bar_sync` arrives and waits for that, `bar_arrive`
arrives and goes on. Two consumer warpgroups take turns with two ids (FlashAttention-3's
ping-pong): each syncs on its own id before its MMAs and arrives on the other's after them,
`threads` = 256 (the 128 that sync and the 128 that arrive); one of them arrives once first.

Checked here, where the author wrote it: an int id in 1..15 (0 is the block barrier's), a
thread count that is a positive multiple of 32 within the block, a target with warp
specialisation (the interpreter traced for sm_90a runs them too). The verify pass checks one
thread count per id over the kernel (passes/named_barriers.py).
"""
from __future__ import annotations

from ..ir.ops_named_barrier import IDS, THREADS_UNIT, NamedBarrierOp
from . import tracer


def bar_sync(barrier: int, threads: int) -> None:
    """Arrive on named barrier `barrier` and wait until `threads` threads have arrived."""
    _named_barrier("sync", barrier, threads)


def bar_arrive(barrier: int, threads: int) -> None:
    """Arrive on named barrier `barrier` (counted towards `threads`) without waiting."""
    _named_barrier("arrive", barrier, threads)


def _named_barrier(mode: str, barrier, threads) -> None:
    what = f"bar_{mode}"
    trace = tracer.current()
    if not trace.target.warp_specialization:
        raise tracer.error(f"{what}: named barriers order warpgroups that run apart, and "
                           f"{trace.target.name} has no warp specialisation", op=what,
                           hint="trace for sm_90a (KTILE_TARGET=sm_90a on the interpreter); "
                                "elsewhere use hk.barrier() outside a pipeline's roles")
    if not _is_int(barrier) or barrier not in IDS:
        raise tracer.error(f"{what}: the barrier id must be an int in 1..15, got {barrier!r}",
                           op=what, hint="0 is the block barrier's (hk.barrier()); pick a "
                                         "constant id per use, e.g. 1 + the warpgroup")
    block = trace.warps * trace.target.wave_size
    if not _is_int(threads) or threads < THREADS_UNIT or threads % THREADS_UNIT \
            or threads > block:
        raise tracer.error(f"{what}: threads must be a multiple of {THREADS_UNIT} in "
                           f"{THREADS_UNIT}..{block} (the block's threads), got {threads!r}",
                           op=what, hint="count every thread that syncs or arrives on the "
                                         "barrier: two warpgroups taking turns are 256")
    tracer.current().builder.insert(NamedBarrierOp(mode, barrier, threads))


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
