"""Rotary embedding kernels, one factory per dtype of q and k.

q is `[tokens, q_heads · HEAD]`, k `[tokens, k_heads · HEAD]` (k_heads ≤ q_heads); a block takes
16 tokens of one head. Only the first ROT columns of a head rotate (partial rotary); the rest
are neither read nor written.

- NeoX (rotate halves), `rope_neox_heads`: one tensor a launch (the op launches it for q, then
  k), in place: x1 = columns [0, ROT/2), x2 = [ROT/2, ROT); out = [x1·cos − x2·sin,
  x2·cos + x1·sin], cos and sin gathered by position from the `[max_position, ROT]` float32
  cache (cos | sin). Each tile is loaded once and stored once at the same coordinates by the
  block's one warp: the kernel declares `in_place={"x_out": "x"}`.
- GPT-J (interleaved pairs), `rope_gptj`: q and k in one launch, out of place (head h of k
  when k has it). The pair (x[2i], x[2i+1]) rotates by angle i. The op gathers each token's
  row of the cache and spreads it to `[tokens, 2·ROT]`: cos[i] at columns 2i and 2i+1, then
  −sin[i] at 2i and +sin[i] at 2i+1; the kernel reads each element's pair partner with loads
  one column to the right and to the left (no in-place declaration covers those):
  out = x·cos + partner·signed_sin.
"""
import functools

import ktile as hk

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


@functools.cache
def halves_rotation(dtype: str, cache_dtype: str = "fp32"):
    """The NeoX rotation of one head of 16 tokens, for x of `dtype` and a cos | sin cache of
    `cache_dtype` (gathered in its own type, widened to float32 in registers)."""
    dt, ct = getattr(hk, dtype), getattr(hk, cache_dtype)

    def gathered(cos_sin, pos, angle, col):
        values = hk.gather(cos_sin, pos, angle, col=col)
        return values if cache_dtype == "fp32" else values.to(hk.fp32)

    @hk.func
    def rotate_halves(x, out, r, h, pos, cos_sin, HEAD, ROT, COLS):
        """Head h of tokens [16r, 16r + 16), COLS columns of each half at a time (a 64-wide
        half in fp32 at once would hold too many registers on sm_90a)."""
        half = ROT // 2
        t, angle = hk.RT(dt, 16, COLS), hk.RT(ct, 16, COLS)
        for j in range(half // COLS):            # a Python loop: unrolled while tracing
            cos = gathered(cos_sin, pos, angle, j)
            sin = gathered(cos_sin, pos, angle, half // COLS + j)
            first = hk.elem_coord(0, 0, r * 16, h * HEAD + j * COLS)
            second = hk.elem_coord(0, 0, r * 16, h * HEAD + half + j * COLS)
            x1, x2 = x[first].load(t).to(hk.fp32), x[second].load(t).to(hk.fp32)
            out[first] = (x1 * cos - x2 * sin).to(dt)
            out[second] = (x2 * cos + x1 * sin).to(dt)
    return rotate_halves


ONE_TENSOR = [
    (lambda p: p.x.cols % p.HEAD == 0, "x must be [tokens, heads * HEAD]: pass HEAD=head_size"),
    (lambda p: p.ROT % (2 * p.COLS) == 0 and p.ROT <= p.HEAD,
     "ROT (the rotary dimension) must be a multiple of 2 * COLS and at most HEAD"),
    (lambda p: p.x_out.shape == p.x.shape, "x_out must have the shape of x"),
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D [tokens, heads * head_size]"),
    (lambda p: p.cos_sin.cols == p.ROT, "cos_sin must be [max_position, ROT]: cos | sin"),
    (lambda p: p.positions.cols == p.x.rows, "positions must hold one position per token"),
]


@functools.cache
def neox_in_place(dtype: str, cache_dtype: str = "fp32"):
    """NeoX on one tensor (q, then k: two launches), x_out declared the very view x may be:
    each tile of x is loaded once and stored once at the same coordinates, by one warp, so
    the op rotates q and k where they lie (2 passes over them, not the 4 of a scratch and a
    copy back). Columns past ROT are neither read nor written."""
    dt, ct = getattr(hk, dtype), getattr(hk, cache_dtype)
    rotate_halves = halves_rotation(dtype, cache_dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16), p.x.cols // p.HEAD), requires=ONE_TENSOR,
               in_place={"x_out": "x"})
    def rope_neox_heads(positions: hk.Tensor[hk.i32], x: hk.Tensor[dt],
                        cos_sin: hk.Tensor[ct], x_out: hk.Tensor[dt], *,
                        HEAD: hk.Constexpr[int] = 128, ROT: hk.Constexpr[int] = 128,
                        COLS: hk.Constexpr[int] = 32):
        r, h = hk.arch.block_idx.x, hk.arch.block_idx.y
        pos = positions[hk.tile_coord(0, 0, 0, r)].load(hk.RV(hk.i32, 16))   # past the end: 0
        rotate_halves(x, x_out, r, h, pos, cos_sin, HEAD, ROT, COLS)
    return rope_neox_heads


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


KERNELS = {"rope_neox_heads": neox_in_place,
           "rope_neox_heads_own_cache": lambda dtype: neox_in_place(dtype, dtype),
           "rope_gptj": gptj}
