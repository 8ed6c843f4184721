"""`paged_decode_ring`: paged decode attention (issue #12) whose pages reach shared memory by
asynchronous block copies STAGES steps ahead, so the bytes in flight do not cost registers (the
limit of streams.py's `paged_decode_streams`, whose K and V in flight are register tiles).

A block per (partition, 16-head chunk, seq · kv head), as the other forms (same layout, same
partials, the same `paged_decode_combine`). A step is WARPS consecutive pages, one a warp; its
K and V pages (16 x D tiles) are copied by the whole block (`hk.group.load`: TMA on sm_90a)
into one of STAGES stages of shared tiles (2 by default), STAGES steps before the step runs.
The step at hand waits for its stage; each warp reads Q (kept in shared memory: in registers
it would be live beside O and V) and its page's K, makes its 16 x 16 scores and their online
softmax, then reads its page's V; the block meets, the stage is refilled with the step STAGES
ahead (whose table entries were read before the wait, so their latency passes under it), and
P·V runs while STAGES steps of copies fly. A page past the partition's (or the sequence's)
last is copied from the block past the cache's end: the copy zero-fills with no memory
traffic, and its tokens are masked. Tokens at or past the limit (seq_len, or the partition's
end) are -inf; on the page holding the limit the V rows past it are zeroed (a stale NaN there
never reaches P·V; the pages before it hold only real tokens). The warps' (m, l, O) are folded
once after the loop (`hk.group.max`, `hk.group.sum`: a fixed tree, the same bits every run)
and warp 0 stores.

Shared memory: STAGES x WARPS pages x (K + V) x 16 x D x 2 bytes (WARPS 4, D 128: 64 KiB a
block) plus `hk.group.sum`'s scratch. On sm_90a the copies are TMA copies, one mbarrier a
shared tile, at most 16 of them: STAGES x WARPS x 2 <= 16 (lds-alloc refuses more)."""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes
import functools

import ktile as hk

from .kernels import FLOOR, grid, partition
from .streams import SHAPES


@functools.cache
def paged_decode_ring(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=grid,
               warps="WARPS", requires=SHAPES[:-1])
    def paged_decode_ring(q: hk.Tensor[DT], k_cache: hk.Tensor[DT], v_cache: hk.Tensor[DT],
                          block_tables: hk.Tensor[hk.i32], seq_lens: hk.Tensor[hk.i32],
                          out: hk.Tensor[DT], part_out: hk.Tensor[hk.fp32],
                          part_stats: hk.Tensor[hk.fp32], scale: float, *,
                          D: hk.Constexpr[int] = 128, WARPS: hk.Constexpr[int] = 4,
                          STAGES: hk.Constexpr[int] = 2,
                          PART_PAGES: hk.Constexpr[int] = 1 << 20,
                          SPLIT: hk.Constexpr[bool] = False):
        part, chunk, row = hk.arch.block_idx.x, hk.arch.block_idx.y, hk.arch.block_idx.z
        warp = hk.arch.warp_id
        seq, kv_head, seq_len, first, pages = partition(row, part, k_cache, block_tables,
                                                        seq_lens, D, PART_PAGES)
        limit = hk.minimum(seq_len, pages * 16)           # tokens at or past it do not count
        steps = hk.cdiv(hk.maximum(pages - first, 0), WARPS)
        keys = [[hk.shared(hk.ST(DT, 16, D)) for _ in range(WARPS)] for _ in range(STAGES)]
        values = [[hk.shared(hk.ST(DT, 16, D)) for _ in range(WARPS)] for _ in range(STAGES)]

        m = hk.full(hk.RV(hk.fp32, 16), FLOOR)
        l = hk.zeros(hk.RV(hk.fp32, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, D))
        table = (block_tables, seq, kv_head, first, pages, k_cache.rows // 16, WARPS)
        for stage in range(STAGES):
            _fill(keys[stage], values[stage], _pages(stage, *table), k_cache, v_cache)
        # Q waits in shared memory and is read each step (ldmatrix): held in registers it
        # would be live beside O, V and the probabilities (about 200 registers a lane at D 128)
        q_shared = hk.shared(hk.ST(DT, 16, D))
        q_shared.store(q[hk.tile_coord(0, row, chunk, 0)].load(hk.RT(DT, 16, D)))  # all alike
        for round_ in range(0, steps, STAGES):
            for stage in range(STAGES):
                step = round_ + stage
                # the table entries of the step STAGES ahead are read before the wait: their
                # latency passes under it and under Q·Kᵀ, not before the refill
                ahead = _pages(step + STAGES, *table)
                hk.wait_for(*keys[stage], *values[stage])
                hk.barrier()
                qt = q_shared.load(hk.RT(DT, 16, D))
                kt = keys[stage][warp].load(hk.RT(DT, 16, D))
                hk.wait_for(qt, kt)
                s = hk.zeros(hk.RT(hk.fp32, 16, 16))
                s += qt @ kt.T
                page = first + step * WARPS + warp
                token = hk.iota(hk.RT(hk.i32, 16, 16), "col") + page * 16
                s = hk.where(token >= limit, float("-inf"), s * scale)
                new_max = hk.maximum(m, hk.row_max(s))
                p = hk.exp(s - new_max)
                rescale = hk.exp(m - new_max)
                l = l * rescale + hk.row_sum(p)
                p = p.to(DT)
                # V is read once K and S are dead (shared memory: a short wait)
                vt = _page_values_shared(values[stage][warp], limit, page * 16, D, DT)
                hk.barrier()                   # every warp has read the stage: refill it
                _fill(keys[stage], values[stage], ahead, k_cache, v_cache)
                acc = acc * rescale
                acc += p @ vt
                m = new_max
        # the last STAGES fills were of steps past the end (zero fills, no memory traffic)
        hk.wait_for(*[t for stage in keys + values for t in stage])
        if WARPS > 1:                  # the warps' pages folded once: a fixed order
            top = hk.group.max(m)
            factor = hk.exp(m - top)
            l = hk.group.sum(l * factor)
            acc = hk.group.sum(acc * factor)
            m = top
        if warp == 0:
            if SPLIT:
                parts = part_out.depth // q.depth
                part_out[hk.tile_coord(0, row * parts + part, chunk, 0)] = acc
                stats = hk.zeros(hk.RT(hk.fp32, 16, 16))
                which = hk.iota(hk.RT(hk.i32, 16, 16), "col")
                part_stats[hk.tile_coord(0, row * parts + part, chunk, 0)] = \
                    hk.where(which == 0, stats + m, stats + l)
            else:
                out[hk.tile_coord(0, row, chunk, 0)] = (acc / hk.maximum(l, 1e-30)).to(DT)
    return paged_decode_ring


def _pages(step, block_tables, seq, kv_head, first, pages, nowhere, WARPS):
    """The tile coordinates of step `step`'s WARPS pages (a page past the last: the block past
    the cache's end, which a copy zero-fills with no memory traffic)."""
    ats = []
    for w in range(WARPS):
        page = first + step * WARPS + w
        block = hk.load_scalar(block_tables, seq, page)
        ats.append(hk.tile_coord(0, 0, hk.where(page < pages, block, nowhere), kv_head))
    return ats


def _fill(keys, values, ats, k_cache, v_cache):
    """The block copies a step's pages (at `ats`) into one stage's tiles."""
    for w, at in enumerate(ats):
        hk.group.load(keys[w], k_cache[at])
        hk.group.load(values[w], v_cache[at])


@hk.func
def _page_values_shared(tile, limit, first_token, D, DT):
    """V of one page from its shared tile (col layout), rows at or past `limit` zeroed."""
    vt = tile.load(hk.RT(DT, 16, D, "col"))
    hk.wait_for(vt)
    if first_token + 16 > limit:           # only the page holding the limit has stale rows
        row = hk.iota(hk.RT(DT, 16, D, "col"), "row")
        vt = hk.where(row < hk.to_float(limit - first_token), vt, 0.0)
    return vt
