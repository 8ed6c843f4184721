"""Paged decode attention (issue #12): `paged_decode` and, for the split form,
`paged_decode_combine`, one kernel per dtype.

Layout (what op.py hands the kernels): the query `[seqs · kv_heads, group, D]`, so a kv head's
`group` query heads are one depth slice whose 16-row tile stops at the group's edge (rows past
it load as zeros and are never stored); key_cache and value_cache `[blocks · 16, kv_heads · D]`,
so a page of one kv head is the 16 x 64 tile at row tile `page`, column tile `kv_head · WARPS
+ warp` (each row 64 contiguous elements: 16-byte loads); block_tables `[seqs, max_pages]` and
seq_lens `[1, seqs]` int32, read with `hk.load_scalar`.

`paged_decode`: a block per (partition, 16-head chunk, seq · kv head) of WARPS = D / 64 warps,
warp w owning the head's columns [64 w, 64 w + 64). It walks its partition's pages
(PART_PAGES of them; all of the sequence when the route sets PART_PAGES past any table), each
page's K and V read once for every query head of the kv head: the warps' partial Q·Kᵀ
(16 x 16, fp32) summed across the block (`hk.group.sum`, a fixed order), tokens at or past
seq_len masked to -inf and their V rows zeroed (a stale NaN in the page never reaches P·V), an
online softmax in fp32 (running max m, sum l), O += P·V with P rounded to the input dtype
(flash attention's rounding). Unsplit, it stores O / l. Split, it stores the unnormalised O
(fp32) and (m, l) per head into the partials, which `paged_decode_combine` folds in partition
order (deterministic: no atomics). The running max starts at -1e30, not -inf, so an empty
partition keeps l = 0 and O = 0 with no NaN (exp(-1e30 - m) is 0).

P·V's K dimension is one page (16 tokens): the CDNA targets' bf16/fp16 MFMA needs 32, so
gfx942 and gfx950 are not routed yet (op.py refuses them, naming the target)."""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes
import functools

import ktile as hk

FLOOR = -1.0e30        # the running max's start: below every score, finite (no inf - inf)
COLS = 64              # a warp's columns of the head: WARPS = D / COLS warps a block

SHAPES = [
    (lambda p: p.q.cols == p.D and p.out.cols == p.D and p.k_cache.cols % p.D == 0,
     "q and out must be [seqs * kv_heads, group, D], the caches [blocks * 16, kv_heads * D]"),
    (lambda p: p.D == p.WARPS * COLS, "WARPS must be D / 64: a warp takes 64 columns"),
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
]

COMBINE_SHAPES = [
    (lambda p: p.out.cols == p.D and p.part_out.cols == p.D and p.part_stats.cols == 2,
     "part_out must be [seqs * kv_heads * parts, group, D], part_stats [..., group, 2]"),
    (lambda p: p.D == p.WARPS * COLS, "WARPS must be D / 64: a warp takes 64 columns"),
    (lambda p: p.part_out.depth % p.out.depth == 0
     and p.part_stats.depth == p.part_out.depth and p.part_out.rows == p.out.rows,
     "the partials must hold a whole number of partitions per (seq, kv head)"),
    (lambda p: p.out.depth % p.seq_lens.cols == 0 and p.seq_lens.rows == 1,
     "out's depth must be seqs * kv_heads, one length per seq"),
]


def grid(p):
    """A decode kernel's blocks: (partition, 16-query-head chunk, seq x kv head)."""
    return (hk.cdiv(p.block_tables.cols, p.PART_PAGES), hk.cdiv(p.q.rows, 16), p.q.depth)


def partition(row, part, k_cache, block_tables, seq_lens, D, PART_PAGES):
    """(seq, kv_head, seq_len, first, pages) of a block's (seq x kv head) `row` and partition
    `part`: it reads pages [first, pages) of the sequence's block table."""
    kv_heads = k_cache.cols // D
    seq, kv_head = row // kv_heads, row % kv_heads
    seq_len = hk.load_scalar(seq_lens, 0, seq)
    first = part * PART_PAGES
    pages = hk.minimum(hk.minimum(hk.cdiv(seq_len, 16), block_tables.cols),
                       first + PART_PAGES)            # a length past the table: cut
    return seq, kv_head, seq_len, first, pages


def page_values(v_cache, at, seq_len, first_token, DT):
    """V of one page (col layout), its rows at or past seq_len zeroed, so no stale value (a
    NaN) in the page reaches P·V."""
    vt = v_cache[at].load(hk.RT(DT, 16, COLS, "col"))
    row = hk.iota(hk.RT(DT, 16, COLS, "col"), "row")      # 0..15: exact in 16 bits, and
    return hk.where(row < hk.to_float(seq_len - first_token), vt, 0.0)   # half an i32 tile


@functools.cache
def paged_decode(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=grid,
               warps="WARPS", requires=SHAPES)
    def paged_decode(q: hk.Tensor[DT], k_cache: hk.Tensor[DT], v_cache: hk.Tensor[DT],
                     block_tables: hk.Tensor[hk.i32], seq_lens: hk.Tensor[hk.i32],
                     out: hk.Tensor[DT], part_out: hk.Tensor[hk.fp32],
                     part_stats: hk.Tensor[hk.fp32], scale: float, *,
                     D: hk.Constexpr[int] = 128, WARPS: hk.Constexpr[int] = 2,
                     PART_PAGES: hk.Constexpr[int] = 1 << 20,
                     SPLIT: hk.Constexpr[bool] = False):
        part, chunk, row = hk.arch.block_idx.x, hk.arch.block_idx.y, hk.arch.block_idx.z
        warp = hk.arch.warp_id                       # owns columns [64 warp, 64 warp + 64)
        seq, kv_head, seq_len, first, pages = partition(row, part, k_cache, block_tables,
                                                        seq_lens, D, PART_PAGES)
        col = kv_head * WARPS + warp
        m = hk.full(hk.RV(hk.fp32, 16), FLOOR)
        l = hk.zeros(hk.RV(hk.fp32, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, COLS))
        qt = q[hk.tile_coord(0, row, chunk, warp)].load(hk.RT(DT, 16, COLS))
        block = hk.load_scalar(block_tables, seq, first)
        for page in range(first, pages):
            # the next page's block number is read a step ahead: the table read is then off
            # the path of this page's K load (the entry past the sequence's last is unused)
            later = hk.load_scalar(block_tables, seq, page + 1)
            at = hk.tile_coord(0, 0, block, col)
            s = hk.zeros(hk.RT(hk.fp32, 16, 16))
            s += qt @ k_cache[at].load(hk.RT(DT, 16, COLS)).T   # this warp's 64 columns
            # V is loaded once K is dead and flies during the softmax: K, V and Q live at once
            # would cost sm_90a a resident warp in four (132 registers a lane, not 124)
            vt = page_values(v_cache, at, seq_len, page * 16, DT)
            if WARPS > 1:
                s = hk.group.sum(s)
            token = hk.iota(hk.RT(hk.i32, 16, 16), "col") + page * 16
            s = hk.where(token >= seq_len, float("-inf"), s * scale)
            new_max = hk.maximum(m, hk.row_max(s))
            p = hk.exp(s - new_max)
            rescale = hk.exp(m - new_max)
            l = l * rescale + hk.row_sum(p)
            acc = acc * rescale
            acc += p.to(DT) @ vt
            m = new_max
            block = later
        if SPLIT:
            parts = part_out.depth // q.depth
            at = hk.tile_coord(0, row * parts + part, chunk, warp)
            part_out[at] = acc
            stats = hk.zeros(hk.RT(hk.fp32, 16, 16))
            which = hk.iota(hk.RT(hk.i32, 16, 16), "col")
            part_stats[hk.tile_coord(0, row * parts + part, chunk, 0)] = \
                hk.where(which == 0, stats + m, stats + l)
        else:
            out[hk.tile_coord(0, row, chunk, warp)] = (acc / hk.maximum(l, 1e-30)).to(DT)
    return paged_decode


@functools.cache
def paged_decode_combine(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.rows, 16), p.out.depth), warps="WARPS",
               requires=COMBINE_SHAPES)
    def paged_decode_combine(part_out: hk.Tensor[hk.fp32], part_stats: hk.Tensor[hk.fp32],
                             seq_lens: hk.Tensor[hk.i32], out: hk.Tensor[DT], *,
                             D: hk.Constexpr[int] = 128, WARPS: hk.Constexpr[int] = 2,
                             PART_PAGES: hk.Constexpr[int] = 32):
        chunk, row, warp = hk.arch.block_idx.x, hk.arch.block_idx.y, hk.arch.warp_id
        seq = row // (out.depth // seq_lens.cols)
        seq_len = hk.load_scalar(seq_lens, 0, seq)
        parts = part_out.depth // out.depth
        used = hk.minimum(hk.cdiv(seq_len, PART_PAGES * 16), parts)
        m = hk.full(hk.RV(hk.fp32, 16), FLOOR)
        l = hk.zeros(hk.RV(hk.fp32, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, COLS))
        # in partition order: the same sum every run. (Loads of two partitions issued before
        # the first is folded made ptxas spill on sm_90a: 168 registers, 16 bytes of stack; the
        # long-context routes keep partitions few instead: 1 x 32K has 32)
        for part in range(used):
            stats, values = _partial(part_out, part_stats, row * parts + part, chunk, warp)
            m, l, acc = _fold(m, l, acc, stats, values)
        out[hk.tile_coord(0, row, chunk, warp)] = (acc / hk.maximum(l, 1e-30)).to(DT)
    return paged_decode_combine


def _partial(part_out, part_stats, at_row, chunk, warp):
    """One partition's (m, l) tile and this warp's columns of its unnormalised O."""
    stats = part_stats[hk.tile_coord(0, at_row, chunk, 0)].load(hk.RT(hk.fp32, 16, 16))
    values = part_out[hk.tile_coord(0, at_row, chunk, warp)].load(hk.RT(hk.fp32, 16, COLS))
    return stats, values


def _fold(m, l, acc, stats, values):
    """(m, l, O) with one more partition folded in."""
    col = hk.iota(hk.RT(hk.i32, 16, 16), "col")
    part_max = hk.row_max(hk.where(col == 0, stats, FLOOR))
    part_sum = hk.row_sum(hk.where(col == 1, stats, 0.0))
    new_max = hk.maximum(m, part_max)
    old, this = hk.exp(m - new_max), hk.exp(part_max - new_max)
    return new_max, l * old + part_sum * this, acc * old + values * this


KERNELS = {"paged_decode": paged_decode, "paged_decode_combine": paged_decode_combine}
