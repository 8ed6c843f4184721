"""Per-token quantisation with one block per token, the token held in registers: the kernels
the ops run where the hidden size is a multiple of 16 and at most the widest route's
(config.BLOCK_WARPS: 16384).

The op views x `[tokens, hidden]` as `[tokens · 16, hidden / 16]` (token_rows.token_view):
token r is tile-row r of that view. Block r takes token r; warp w holds the view's flat 16 x C
tiles w, w + WARPS, ... (HELD of them) of that tile-row, loaded once, all before the reduction
(the loads in flight together). max|x| is a whole-tile max per warp (`hk.tile_max`, an fp32
scalar) and `hk.group.max` over the warps; the quantised tiles are computed from the held
registers and stored as whole tiles (16-byte units of the float side, 8-byte ones of the 8-bit
side where hidden is a multiple of 128), and warp 0 writes the token's scale. x is read once
from DRAM, q written once; 1 token is one block of few dependent steps (load, two reductions,
store), where the one-warp-per-token kernels (token_rows.py) loop over the row twice.

A tile past the view's last column reads zeros (no max exceeds them) and stores nothing, so a
route serves every width up to HELD x C x WARPS x 16. The semantics are reference.py's, bit for
bit: the same float32 operations as the other per-token kernels, and a max is exact in any
order.
"""
import functools

import ktile as hk

from ..elementwise.kernels import flat
from .kernels import FP8_MAX, INT8_MAX, MIN_FP8_SCALE
from .token_rows import ROWS_PER_TOKEN, store_per_token

BLOCK = [
    (lambda p: p.x.batch * p.x.depth == 1 and p.x.rows % ROWS_PER_TOKEN == 0,
     "x must be the [tokens * 16, hidden / 16] view of [tokens, hidden] (token_view)"),
    (lambda p: p.q.shape == p.x.shape, "q must be viewed like x (token_view)"),
    (lambda p: p.scales.rows * ROWS_PER_TOKEN == p.x.rows and p.scales.cols == 1,
     "scales must be [tokens, 1]: one float32 per token"),
    (lambda p: p.HELD * p.C * p.WARPS >= p.x.cols,
     "HELD x C x WARPS (the view's columns a block holds) must be at least hidden / 16: "
     "choose a wider route (config.BLOCK_WARPS) or the one-warp-per-token kernel"),
]


def _grid(p):
    return (p.x.rows // ROWS_PER_TOKEN,)


def held_tiles(x, r, t, WARPS: int, HELD: int) -> list:
    """This warp's tiles of token r, each load issued before any is used:
    (column tile, tile loaded as float32)."""
    chunks = [hk.arch.warp_id + i * WARPS for i in range(HELD)]
    tiles = [x[hk.tile_coord(0, 0, r, c)].load(t) for c in chunks]
    return [(c, xs.to(hk.fp32)) for c, xs in zip(chunks, tiles)]


def block_absmax(held: list):
    """max|x| of the token over the block: per warp a whole-tile max of its tiles, then the
    warps' maxima (both exact)."""
    amax = None
    for _, xf in held:
        part = hk.tile_max(hk.abs(xf))
        amax = part if amax is None else hk.maximum(amax, part)
    return hk.group.max(amax)


@functools.cache
def int8_per_token_block(dtype: str):
    """kernels.int8_per_token, one block per token held in registers: q = rint(x · (127 /
    amax)) saturated, scale = amax / 127; a row of zeros gives NaN · 0 → q 0, scale 0."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_grid, warps="WARPS", requires=BLOCK)
    def quant_int8_token_block(x: hk.Tensor[dt], q: hk.Tensor[hk.i8],
                               scales: hk.Tensor[hk.fp32], *, C: hk.Constexpr[int] = 64,
                               HELD: hk.Constexpr[int] = 1, WARPS: hk.Constexpr[int] = 4):
        r = hk.arch.block_idx.x
        held = held_tiles(x, r, flat(dt, C), WARPS, HELD)
        amax = block_absmax(held)
        inverse = INT8_MAX / amax
        for c, xf in held:
            q[hk.tile_coord(0, 0, r, c)] = hk.round(xf * inverse).to(hk.i8)
        if hk.arch.warp_id == 0:
            store_per_token(scales, r, amax / INT8_MAX)
    return quant_int8_token_block


@functools.cache
def fp8_per_token_block(dtype: str):
    """kernels.fp8_per_token, one block per token held in registers: scale = max(amax / 448,
    1 / (448 · 512)), q = fp8(clamp(x · (1 / scale), ±448))."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_grid, warps="WARPS", requires=BLOCK)
    def quant_fp8_token_block(x: hk.Tensor[dt], q: hk.Tensor[hk.fp8],
                              scales: hk.Tensor[hk.fp32], *, C: hk.Constexpr[int] = 64,
                              HELD: hk.Constexpr[int] = 1, WARPS: hk.Constexpr[int] = 4):
        r = hk.arch.block_idx.x
        held = held_tiles(x, r, flat(dt, C), WARPS, HELD)
        scale = hk.maximum(block_absmax(held) / FP8_MAX, MIN_FP8_SCALE)
        inverse = 1.0 / scale
        for c, xf in held:
            xs = xf * inverse
            q[hk.tile_coord(0, 0, r, c)] = hk.minimum(hk.maximum(xs, -FP8_MAX),
                                                      FP8_MAX).to(hk.fp8)
        if hk.arch.warp_id == 0:
            store_per_token(scales, r, scale)
    return quant_fp8_token_block
