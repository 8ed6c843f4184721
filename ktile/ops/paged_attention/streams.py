"""`paged_decode_streams`: paged decode attention (issue #12) with the block's warps on different
pages, its K and V in flight held in registers: the benchmark's variant `KERNEL=streams` beside
sm_90a's route, ring.py's `paged_decode_ring` (the same split, the pages staged in shared
memory). Not routed on the AMD targets: a warp holding a whole head of Q and O passes gfx1100's
256 VGPRs.

A block per (partition, 16-head chunk, seq · kv head), as `paged_decode` (same layout, same
partials, the same `paged_decode_combine`), but each of its WARPS warps owns the head's whole
D columns and its own pages: warp w takes the partition's steps w, w + WARPS, ..., a step being
PAGES consecutive pages. A step reads its PAGES block-table entries, issues every page's K load
(16 x D tiles, 16-byte loads) before any use, makes the PAGES score tiles (16 x 16, no
cross-warp sum: the warp has all of D), then issues the step's V loads, which fly while the
softmax of the step runs (one running-max update and one rescale of O a step, not a page). So a
warp has PAGES pages of K, then of V, in flight, and a block WARPS times that, where
`paged_decode` had one 16 x 64 tile a warp. Tokens at or past the limit (seq_len, or the
partition's end) are -inf and their V rows zero, so neither a stale NaN nor a neighbouring
partition's token counts. The warps' (m, l, O) are folded once, after the loop: the block's
max by `hk.group.max`, then l and O rescaled and summed by `hk.group.sum` (a fixed tree: the
same bits every run), and warp 0 stores.

Registers (sm_90a, a lane): Q and a page of K or V 32 each at D 128, O 64: ptxas gives 255 at
PAGES 1 (two pages pass the 255 a lane can address), 168 at D 64 PAGES 2 (docs/attention.md
"Paged decode")."""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes
import functools

import ktile as hk

from .kernels import FLOOR, grid, partition

SHAPES = [
    (lambda p: p.q.cols == p.D and p.out.cols == p.D and p.k_cache.cols % p.D == 0,
     "q and out must be [seqs * kv_heads, group, D], the caches [blocks * 16, kv_heads * D]"),
    (lambda p: p.k_cache.rows % 16 == 0 and p.v_cache.rows == p.k_cache.rows
     and p.v_cache.cols == p.k_cache.cols,
     "key_cache and value_cache must be [blocks * 16, kv_heads * D], alike"),
    (lambda p: p.q.depth == p.block_tables.rows * (p.k_cache.cols // p.D)
     and p.seq_lens.cols == p.block_tables.rows and p.seq_lens.rows == 1,
     "q's depth must be seqs * kv_heads, with one block-table row and one length per seq"),
    (lambda p: p.out.depth == p.q.depth and p.out.rows == p.q.rows,
     "out must be shaped like q"),
    (lambda p: p.q.batch * p.out.batch * p.k_cache.batch * p.k_cache.depth
     * p.v_cache.batch * p.v_cache.depth == 1,
     "q and out must be 3-D views, the caches 2-D"),
    (lambda p: p.PAGES >= 1 and p.WARPS >= 1, "PAGES and WARPS must be at least 1"),
]


@functools.cache
def paged_decode_streams(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=grid,
               warps="WARPS", requires=SHAPES)
    def paged_decode_streams(q: hk.Tensor[DT], k_cache: hk.Tensor[DT], v_cache: hk.Tensor[DT],
                             block_tables: hk.Tensor[hk.i32], seq_lens: hk.Tensor[hk.i32],
                             out: hk.Tensor[DT], part_out: hk.Tensor[hk.fp32],
                             part_stats: hk.Tensor[hk.fp32], scale: float, *,
                             D: hk.Constexpr[int] = 128, WARPS: hk.Constexpr[int] = 4,
                             PAGES: hk.Constexpr[int] = 2,
                             PART_PAGES: hk.Constexpr[int] = 1 << 20,
                             SPLIT: hk.Constexpr[bool] = False):
        part, chunk, row = hk.arch.block_idx.x, hk.arch.block_idx.y, hk.arch.block_idx.z
        warp = hk.arch.warp_id
        seq, kv_head, seq_len, first, pages = partition(row, part, k_cache, block_tables,
                                                        seq_lens, D, PART_PAGES)
        limit = hk.minimum(seq_len, pages * 16)           # tokens at or past it do not count
        m = hk.full(hk.RV(hk.fp32, 16), FLOOR)
        l = hk.zeros(hk.RV(hk.fp32, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, D))
        qt = q[hk.tile_coord(0, row, chunk, 0)].load(hk.RT(DT, 16, D))
        for step in range(first + warp * PAGES, pages, WARPS * PAGES):
            # every table entry, then every K load of the step, before any use; an entry past
            # the partition reads block 0 (loaded, then masked: never out of the cache)
            ats = []
            for i in range(PAGES):
                block = hk.load_scalar(block_tables, seq, step + i)
                ats.append(hk.tile_coord(0, 0, hk.where(step + i < pages, block, 0), kv_head))
            keys = [k_cache[at].load(hk.RT(DT, 16, D)) for at in ats]
            scores = []
            for i in range(PAGES):
                s = hk.zeros(hk.RT(hk.fp32, 16, 16))
                s += qt @ keys[i].T
                token = hk.iota(hk.RT(hk.i32, 16, 16), "col") + (step + i) * 16
                scores.append(hk.where(token >= limit, float("-inf"), s * scale))
            # V is loaded once K is dead and flies during the softmax
            values = [_page_values(v_cache, ats[i], limit, (step + i) * 16, D, DT)
                      for i in range(PAGES)]
            new_max = m
            for s in scores:
                new_max = hk.maximum(new_max, hk.row_max(s))
            rescale = hk.exp(m - new_max)
            probs = [hk.exp(s - new_max) for s in scores]
            total = hk.row_sum(probs[0])
            for p in probs[1:]:
                total = total + hk.row_sum(p)
            l = l * rescale + total
            acc = acc * rescale
            for i in range(PAGES):
                acc += probs[i].to(DT) @ values[i]
            m = new_max
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
    return paged_decode_streams


def _page_values(v_cache, at, limit, first_token, D, DT):
    """V of one page (col layout, all D columns), its rows at or past `limit` zeroed, so no
    stale value (a NaN) in the page reaches P·V."""
    vt = v_cache[at].load(hk.RT(DT, 16, D, "col"))
    row = hk.iota(hk.RT(DT, 16, D, "col"), "row")        # 0..15: exact in 16 bits
    return hk.where(row < hk.to_float(limit - first_token), vt, 0.0)
