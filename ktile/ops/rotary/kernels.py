"""Rotary embedding kernels, one factory per dtype of q and k.

q is `[tokens, q_heads · HEAD]`, k `[tokens, k_heads · HEAD]` (k_heads ≤ q_heads); a block takes
16 tokens of one head. Only the first ROT columns of a head rotate (partial rotary); the rest
are neither read nor written. Positions are `[tokens, W]` int32: int64 ones as their two 32-bit
words (W = 2, `embedding.kernels.row_ids`), int32 ones W = 1.

- NeoX (rotate halves), `rope_neox_qk` (`neox_heads`): q and k in one launch, in place
  (`in_place={"q_out": "q", "k_out": "k"}`): x1 = columns [0, ROT/2), x2 = [ROT/2, ROT);
  out = [x1·cos − x2·sin, x2·cos + x1·sin], cos and sin gathered by position from the
  `[max_position, ROT]` cache (cos | sin, float32 or x's dtype). WARPS = ROT / (2·COLS) warps
  a block, one column tile of each half each; `rope_neox_q` is the same without k.
- NeoX at few tokens, `rope_neox_flat` (`neox_flat`): a block per 16 heads of one token, flat
  tiles, the position read with `hk.load_scalar` and cos / sin loaded from a 0-row-stride view
  of the cache (every row of the tile the position's): no gather.
- GPT-J (interleaved pairs), `rope_gptj`: q and k in one launch, out of place (head h of k
  when k has it). The pair (x[2i], x[2i+1]) rotates by angle i. The op gathers each token's
  row of the cache and spreads it to `[tokens, 2·ROT]`: cos[i] at columns 2i and 2i+1, then
  −sin[i] at 2i and +sin[i] at 2i+1; the kernel reads each element's pair partner with loads
  one column to the right and to the left (no in-place declaration covers those):
  out = x·cos + partner·signed_sin.
"""
import functools

import ktile as hk

from ..embedding.kernels import row_ids

HEADS = [
    (lambda p: p.q.cols % p.HEAD == 0 and p.k.cols % p.HEAD == 0,
     "q and k must be [tokens, heads * HEAD]: pass HEAD=head_size"),
    (lambda p: p.k.cols <= p.q.cols, "k must have no more heads than q"),
    (lambda p: p.ROT % (2 * p.COLS) == 0 and p.ROT <= p.HEAD,
     "ROT (the rotary dimension) must be a multiple of 2 * COLS and at most HEAD"),
    (lambda p: p.k.rows == p.q.rows, "q and k must have one row per token"),
    (lambda p: p.q_out.shape == p.q.shape and p.k_out.shape == p.k.shape,
     "q_out and k_out must have the shapes of q and k"),
    (lambda p: p.q.batch * p.q.depth * p.k.batch * p.k.depth == 1,
     "q and k must be 2-D [tokens, heads * head_size]"),
]
GPTJ = HEADS + [
    (lambda p: p.cos_sin.cols == 2 * p.ROT and p.cos_sin.rows == p.q.rows,
     "cos_sin must be [tokens, 2 * ROT]: each token's cos and signed sin, spread to pairs"),
]


def grid(p):
    return (hk.cdiv(p.q.rows, 16), p.q.cols // p.HEAD)


NEOX = [
    (lambda p: p.ROT == 2 * p.COLS * p.WARPS and p.ROT <= p.HEAD,
     "ROT (the rotary dimension) must be 2 * COLS * WARPS (one column tile of each half a "
     "warp) and at most HEAD"),
    (lambda p: p.positions.cols in (1, 2) and p.positions.rows == p.q.rows,
     "positions must be [tokens, 1] int32 or [tokens, 2] (int64 viewed as int32 words)"),
    (lambda p: p.q_out.shape == p.q.shape, "q_out must have the shape of q"),
    (lambda p: p.q.cols % p.HEAD == 0, "q must be [tokens, heads * HEAD]: pass HEAD=head_size"),
    (lambda p: p.q.batch * p.q.depth == 1, "q must be 2-D [tokens, heads * head_size]"),
    (lambda p: p.cos_sin.cols == p.ROT, "cos_sin must be [max_position, ROT]: cos | sin"),
]
NEOX_QK = NEOX + [
    (lambda p: p.k_out.shape == p.k.shape, "k_out must have the shape of k"),
    (lambda p: p.k.cols % p.HEAD == 0 and p.k.cols <= p.q.cols,
     "k must be [tokens, heads * HEAD] with at most q's heads"),
    (lambda p: p.k.rows == p.q.rows and p.k.batch * p.k.depth == 1,
     "k must be 2-D with one row per token, as q"),
]

GROUPS = [
    (lambda p: p.q.cols % (p.HEAD * p.HEADS) == 0 and p.k.cols % (p.HEAD * p.HEADS) == 0,
     "HEADS (heads a block) must divide q's and k's head counts"),
]


@functools.cache
def neox_heads(dtype: str, cache_dtype: str = "fp32", keyed: bool = True):
    """NeoX on q and k in one launch, in place (`in_place={"q_out": "q", "k_out": "k"}`; each
    lane loads a tile once and stores it once at the same coordinates). A block takes 16
    tokens of HEADS heads, sharing their cos and sin: the first q heads / HEADS blocks of grid
    y rotate q's heads, the next k's. Warp w
    takes column tile w of each half (x1 = columns [w·COLS, w·COLS + COLS), x2 = x1 + ROT/2) with
    its cos and sin, so a head is WARPS warps side by side, each loading everything before it
    stores. q or k is picked without a branch: the other tensor's accesses name batch 1, a
    plane it has not, which the tile headers skip whole (no memory access). `keyed=False`: q
    alone (vLLM's key None). Columns past ROT are neither read nor written."""
    dt, ct = getattr(hk, dtype), getattr(hk, cache_dtype)

    def gathered(cos_sin, pos, col, COLS):
        values = hk.gather(cos_sin, pos, hk.RT(ct, 16, COLS), col=col)
        return values if cache_dtype == "fp32" else values.to(hk.fp32)

    def load_halves(x, plane, head, HEAD, ROT, COLS):
        r, w = hk.arch.block_idx.x, hk.arch.warp_id
        first = hk.elem_coord(plane, 0, r * 16, head * HEAD + w * COLS)
        second = hk.elem_coord(plane, 0, r * 16, head * HEAD + ROT // 2 + w * COLS)
        t = hk.RT(dt, 16, COLS)
        return first, second, x[first].load(t).to(hk.fp32), x[second].load(t).to(hk.fp32)

    def store_rotated(out, halves, cos, sin):
        first, second, x1, x2 = halves
        out[first] = (x1 * cos - x2 * sin).to(dt)
        out[second] = (x2 * cos + x1 * sin).to(dt)

    if not keyed:
        @hk.kernel(grid=lambda p: (hk.cdiv(p.q.rows, 16), p.q.cols // p.HEAD), warps="WARPS",
                   requires=NEOX, in_place={"q_out": "q"})
        def rope_neox_q(positions: hk.Tensor[hk.i32], q: hk.Tensor[dt], cos_sin: hk.Tensor[ct],
                        q_out: hk.Tensor[dt], *, HEAD: hk.Constexpr[int] = 128,
                        ROT: hk.Constexpr[int] = 128, COLS: hk.Constexpr[int] = 16,
                        WARPS: hk.Constexpr[int] = 4):
            pos, w = row_ids(positions, hk.arch.block_idx.x), hk.arch.warp_id
            halves = load_halves(q, 0, hk.arch.block_idx.y, HEAD, ROT, COLS)
            cos, sin = gathered(cos_sin, pos, w, COLS), gathered(cos_sin, pos, WARPS + w, COLS)
            store_rotated(q_out, halves, cos, sin)
        return rope_neox_q

    @hk.kernel(grid=lambda p: (hk.cdiv(p.q.rows, 16),
                               (p.q.cols + p.k.cols) // (p.HEAD * p.HEADS)),
               warps="WARPS", requires=NEOX_QK + GROUPS, in_place={"q_out": "q", "k_out": "k"})
    def rope_neox_qk(positions: hk.Tensor[hk.i32], q: hk.Tensor[dt], k: hk.Tensor[dt],
                     cos_sin: hk.Tensor[ct], q_out: hk.Tensor[dt], k_out: hk.Tensor[dt], *,
                     HEAD: hk.Constexpr[int] = 128, ROT: hk.Constexpr[int] = 128,
                     COLS: hk.Constexpr[int] = 16, WARPS: hk.Constexpr[int] = 4,
                     HEADS: hk.Constexpr[int] = 1):
        pos, w, g = row_ids(positions, hk.arch.block_idx.x), hk.arch.warp_id, hk.arch.block_idx.y
        q_groups = q.cols // (HEAD * HEADS)
        of_k = g // q_groups                            # 0: a group of q's heads, 1: of k's
        q_halves = [load_halves(q, of_k, g * HEADS + i, HEAD, ROT, COLS) for i in range(HEADS)]
        k_halves = [load_halves(k, 1 - of_k, (g - q_groups) * HEADS + i, HEAD, ROT, COLS)
                    for i in range(HEADS)]
        cos, sin = gathered(cos_sin, pos, w, COLS), gathered(cos_sin, pos, WARPS + w, COLS)
        for halves in q_halves:                         # each head's cos and sin are the same
            store_rotated(q_out, halves, cos, sin)
        for halves in k_halves:
            store_rotated(k_out, halves, cos, sin)
    return rope_neox_qk


FLAT = [
    (lambda p: p.ROT == 2 * p.COLS * p.WARPS and p.ROT <= p.HEAD,
     "ROT (the rotary dimension) must be 2 * COLS * WARPS and at most HEAD"),
    (lambda p: p.positions.cols in (1, 2) and p.positions.rows == p.q.batch,
     "positions must be [tokens, 1] int32 or [tokens, 2] (int64 viewed as int32 words)"),
    (lambda p: p.q.cols == p.HEAD and p.k.cols == p.HEAD and p.k.batch == p.q.batch
     and p.q.depth * p.k.depth == 1, "q and k must be viewed [tokens, 1, heads, HEAD]"),
    (lambda p: p.k.rows <= p.q.rows, "k must have no more heads than q"),
    (lambda p: p.q_out.shape == p.q.shape and p.k_out.shape == p.k.shape,
     "q_out and k_out must have the shapes of q and k"),
    (lambda p: p.cos_sin.cols == p.ROT and p.cos_sin.rows == 16 and p.cos_sin.depth == 1,
     "cos_sin must be viewed [max_position, 1, 16, ROT] (each row repeated by a 0 stride)"),
]


@functools.cache
def neox_flat(dtype: str, cache_dtype: str = "fp32"):
    """NeoX for few tokens, in place, flat tiles: block (t, g) rotates 16 heads of token t
    (g < cdiv(q heads, 16): q's, else k's), so a token's q and k take cdiv(q heads, 16) +
    cdiv(k heads, 16) blocks where `rope_neox_qk` takes one per head. q and k are viewed
    `[tokens, 1, heads, HEAD]` (a tile's rows are heads; rows past the last head are outside:
    neither read nor written), the cache `[max_position, 1, 16, ROT]` with a 0 row stride, so a
    flat 16 x COLS tile at batch = position holds that position's cos (or sin) in every row: no
    gather, no broadcast. The position is one `hk.load_scalar` (an int64 one's two words; a
    high word not 0, or a position past the cache, reads zeros as the gather kernel does).
    Warp w takes column tile w of each half, everything loaded before it stores; q or k is
    picked by the depth plane, as in `neox_heads`."""
    dt, ct = getattr(hk, dtype), getattr(hk, cache_dtype)

    @hk.kernel(grid=lambda p: (p.q.batch, hk.cdiv(p.q.rows, 16) + hk.cdiv(p.k.rows, 16)),
               warps="WARPS", requires=FLAT, in_place={"q_out": "q", "k_out": "k"})
    def rope_neox_flat(positions: hk.Tensor[hk.i32], q: hk.Tensor[dt], k: hk.Tensor[dt],
                       cos_sin: hk.Tensor[ct], q_out: hk.Tensor[dt], k_out: hk.Tensor[dt], *,
                       HEAD: hk.Constexpr[int] = 128, ROT: hk.Constexpr[int] = 128,
                       COLS: hk.Constexpr[int] = 16, WARPS: hk.Constexpr[int] = 4):
        token, g, w = hk.arch.block_idx.x, hk.arch.block_idx.y, hk.arch.warp_id
        low, high = hk.load_scalar(positions, token, 0), hk.load_scalar(positions, token, 1)
        pos = hk.where(high == 0, low, -1)
        q_groups = hk.cdiv(q.rows, 16)
        of_k = g // q_groups                              # 0: 16 of q's heads, 1: of k's
        t, ct_tile = hk.RT(dt, 16, COLS, "flat"), hk.RT(ct, 16, COLS, "flat")
        cos = cos_sin[hk.elem_coord(pos, 0, 0, w * COLS)].load(ct_tile).to(hk.fp32)
        sin = cos_sin[hk.elem_coord(pos, 0, 0, ROT // 2 + w * COLS)].load(ct_tile).to(hk.fp32)
        halves = []
        for x, plane, heads in ((q, of_k, g * 16), (k, 1 - of_k, (g - q_groups) * 16)):
            first = hk.elem_coord(token, plane, heads, w * COLS)
            second = hk.elem_coord(token, plane, heads, ROT // 2 + w * COLS)
            halves.append((first, second, x[first].load(t).to(hk.fp32),
                           x[second].load(t).to(hk.fp32)))
        for out, (first, second, x1, x2) in zip((q_out, k_out), halves):
            out[first] = (x1 * cos - x2 * sin).to(dt)
            out[second] = (x2 * cos + x1 * sin).to(dt)
    return rope_neox_flat


@functools.cache
def gptj(dtype: str):
    dt = getattr(hk, dtype)

    @hk.func
    def rotate_pairs(x, out, r, h, cos_sin, HEAD, ROT, COLS):
        """Head h of tokens [16r, 16r + 16), COLS columns at a time; an even column's partner is
        the column to its right, an odd one's the column to its left."""
        t, angle = hk.RT(dt, 16, COLS), hk.RT(hk.fp32, 16, COLS)
        halves = hk.iota(angle, "col") * 0.5       # COLS is even: column parity is the tile's
        odd = hk.floor(halves) < halves
        for j in range(ROT // COLS):
            col = h * HEAD + j * COLS
            here = hk.elem_coord(0, 0, r * 16, col)
            xs = x[here].load(t).to(hk.fp32)
            right = x[hk.elem_coord(0, 0, r * 16, col + 1)].load(t).to(hk.fp32)
            left = x[hk.elem_coord(0, 0, r * 16, col - 1)].load(t).to(hk.fp32)
            cos = cos_sin[hk.tile_coord(0, 0, r, j)].load(angle)
            sin = cos_sin[hk.tile_coord(0, 0, r, ROT // COLS + j)].load(angle)
            out[here] = (xs * cos + hk.where(odd, left, right) * sin).to(dt)

    @hk.kernel(grid=grid, requires=GPTJ)
    def rope_gptj(q: hk.Tensor[dt], k: hk.Tensor[dt], cos_sin: hk.Tensor[hk.fp32],
                  q_out: hk.Tensor[dt], k_out: hk.Tensor[dt], *,
                  HEAD: hk.Constexpr[int] = 128, ROT: hk.Constexpr[int] = 128,
                  COLS: hk.Constexpr[int] = 32):
        r, h = hk.arch.block_idx.x, hk.arch.block_idx.y
        rotate_pairs(q, q_out, r, h, cos_sin, HEAD, ROT, COLS)
        if h < k.cols // HEAD:
            rotate_pairs(k, k_out, r, h, cos_sin, HEAD, ROT, COLS)
    return rope_gptj


KERNELS = {"rope_neox_flat": neox_flat,
           "rope_neox_flat_own_cache": lambda dtype: neox_flat(dtype, dtype),
           "rope_neox_qk": neox_heads,
           "rope_neox_qk_own_cache": lambda dtype: neox_heads(dtype, dtype),
           "rope_neox_q": lambda dtype: neox_heads(dtype, keyed=False),
           "rope_gptj": gptj}
