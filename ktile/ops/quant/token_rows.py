"""Per-token quantisation and dequantisation with one warp per token: the kernels the ops run
where the hidden size is a multiple of 16 (every model's) and, for quantisation, wider than the
widest one-block-per-token route (token_block.py, config.BLOCK_WIDTHS: past 16384).

The op views x `[tokens, hidden]` as `[tokens · 16, hidden / 16]` (`token_view`): token r is
tile-row r of that view, its 16 rows the 16 sixteenths of the token. Its tiles are flat-layout
16 x COLS tiles (memory order: docs/language.md, "The flat layout"), so a per-token statistic
is a whole-tile reduction (`hk.tile_max`) and a per-token scale a scalar of the warp: no vector
broadcast, no block reduce, no shared memory. A warp reads its token's tiles once for max|x|
and again to quantise; the second read follows the first within a few microseconds and hits the
cache, where the 16-token-block kernels (kernels.py) re-read a block's 16 rows × hidden after 4
warps have streamed them, long enough at large token counts for the rows to leave L2 (2 reads +
1 write from DRAM, against 1 + 1 here). A whole tile moves in 16-byte units of the float side
and 8-byte units of the 8-bit side whenever hidden / 16 fills whole units (hidden a multiple of
128); a tile at the view's right edge moves element by element. Tokens past the last (the
block's last warps) read zeros and store nothing: no branch.

The semantics are the 16-token kernels', bit for bit (same float32 operations; a max is
exact in any order).
"""
import functools

import ktile as hk

from ..elementwise.kernels import flat
from .kernels import FP8_MAX, INT8_MAX, MIN_FP8_SCALE

ROWS_PER_TOKEN = 16

TOKEN_ROWS = [
    (lambda p: p.x.batch * p.x.depth == 1 and p.x.rows % ROWS_PER_TOKEN == 0,
     "x must be the [tokens * 16, hidden / 16] view of [tokens, hidden] (token_view)"),
]
QUANTISED = TOKEN_ROWS + [
    (lambda p: p.q.shape == p.x.shape, "q must be viewed like x (token_view)"),
    (lambda p: p.scales.rows * ROWS_PER_TOKEN == p.x.rows and p.scales.cols == 1,
     "scales must be [tokens, 1]: one float32 per token"),
]
MAXIMA = TOKEN_ROWS + [
    (lambda p: p.amax.rows * ROWS_PER_TOKEN == p.x.rows and p.amax.cols == 1,
     "amax must be [tokens, 1]: one float32 per token"),
]


def token_view(t):
    """[tokens, hidden] (hidden % 16 == 0, contiguous) as [tokens · 16, hidden / 16]."""
    return t.reshape(-1, t.shape[-1] // ROWS_PER_TOKEN)


def _grid(p):
    return (hk.cdiv(p.x.rows // ROWS_PER_TOKEN, p.WARPS),)


@hk.func
def token_absmax(x, r, t, COLS):
    """max|x| of token r (tile-row r of the view), a scalar held by every lane of the warp.
    Columns past the edge load 0, which no max exceeds."""
    amax = 0.0
    for c in range(hk.cdiv(x.cols, COLS)):
        xs = x[hk.tile_coord(0, 0, r, c)].load(t).to(hk.fp32)
        amax = hk.maximum(amax, hk.tile_max(hk.abs(xs)))
    return amax


@hk.func
def store_per_token(g, r, value):
    """g[r, 0] = value for g of [tokens, 1]: a vector stored at one column keeps element 0."""
    g[hk.elem_coord(0, 0, r, 0)] = hk.zeros(hk.RV(hk.fp32, 16)) + value


@hk.func
def load_per_token(g, r):
    """g[r, 0] of g [tokens, 1] as a scalar: a 16-vector read at that one column pads its other
    elements with -0.0, which leaves any value's sum unchanged (+0.0 and -0.0 included)."""
    return hk.sum(g[hk.elem_coord(0, 0, r, 0)].load(hk.RV(hk.fp32, 16), pad=-0.0))


def _token(r_block):
    return r_block * hk.arch.num_warps + hk.arch.warp_id


@functools.cache
def int8_per_token_rows(dtype: str):
    """kernels.int8_per_token, one warp per token."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_grid, warps="WARPS", requires=QUANTISED)
    def quant_int8_token_rows(x: hk.Tensor[dt], q: hk.Tensor[hk.i8],
                              scales: hk.Tensor[hk.fp32], *, COLS: hk.Constexpr[int] = 64,
                              WARPS: hk.Constexpr[int] = 4):
        r = _token(hk.arch.block_idx.x)
        t = flat(dt, COLS)
        amax = token_absmax(x, r, t, COLS)
        inverse = INT8_MAX / amax
        for c in range(hk.cdiv(x.cols, COLS)):
            idx = hk.tile_coord(0, 0, r, c)
            q[idx] = hk.round(x[idx].load(t).to(hk.fp32) * inverse).to(hk.i8)
        store_per_token(scales, r, amax / INT8_MAX)
    return quant_int8_token_rows


@functools.cache
def fp8_per_token_rows(dtype: str):
    """kernels.fp8_per_token, one warp per token."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_grid, warps="WARPS", requires=QUANTISED)
    def quant_fp8_token_rows(x: hk.Tensor[dt], q: hk.Tensor[hk.fp8],
                             scales: hk.Tensor[hk.fp32], *, COLS: hk.Constexpr[int] = 64,
                             WARPS: hk.Constexpr[int] = 4):
        r = _token(hk.arch.block_idx.x)
        t = flat(dt, COLS)
        scale = hk.maximum(token_absmax(x, r, t, COLS) / FP8_MAX, MIN_FP8_SCALE)
        inverse = 1.0 / scale
        for c in range(hk.cdiv(x.cols, COLS)):
            idx = hk.tile_coord(0, 0, r, c)
            xs = x[idx].load(t).to(hk.fp32) * inverse
            q[idx] = hk.minimum(hk.maximum(xs, -FP8_MAX), FP8_MAX).to(hk.fp8)
        store_per_token(scales, r, scale)
    return quant_fp8_token_rows


@functools.cache
def absmax_rows(dtype: str):
    """kernels.row_absmax_kernel (phase 1 of a dynamic per-tensor fp8 scale), one warp per
    token."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_grid, warps="WARPS", requires=MAXIMA)
    def token_absmax_of(x: hk.Tensor[dt], amax: hk.Tensor[hk.fp32], *,
                        COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        r = _token(hk.arch.block_idx.x)
        store_per_token(amax, r, token_absmax(x, r, flat(dt, COLS), COLS))
    return token_absmax_of


@functools.cache
def dequant_per_token_rows(q_dtype: str, dtype: str):
    """kernels.dequant_per_token (out = q · scale[token], rounded once to `dtype`), one warp per
    token: its scale a scalar of the warp."""
    qt, dt = getattr(hk, q_dtype), getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.q.rows // ROWS_PER_TOKEN, p.WARPS),), warps="WARPS",
               requires=[(lambda p: p.q.batch * p.q.depth == 1 and p.q.rows % ROWS_PER_TOKEN == 0,
                          "q must be the [tokens * 16, hidden / 16] view (token_view)"),
                         (lambda p: p.out.shape == p.q.shape, "out must be viewed like q"),
                         (lambda p: p.scales.rows * ROWS_PER_TOKEN == p.q.rows
                          and p.scales.cols == 1, "scales must be [tokens, 1]")])
    def dequant_token_rows(q: hk.Tensor[qt], scales: hk.Tensor[hk.fp32], out: hk.Tensor[dt], *,
                           COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        r = _token(hk.arch.block_idx.x)
        s = load_per_token(scales, r)
        t = flat(qt, COLS)
        for c in range(hk.cdiv(q.cols, COLS)):
            idx = hk.tile_coord(0, 0, r, c)
            out[idx] = (q[idx].load(t).to(hk.fp32) * s).to(dt)
    return dequant_token_rows
