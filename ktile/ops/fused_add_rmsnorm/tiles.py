"""Fused add + RMSNorm over rows viewed as tiles (as ktile/ops/rmsnorm/tiles.py, which says how
a row becomes a 16-row tile): the fast kernel for rows whose width is a multiple of 16.

One block per row; warp w loads tiles w, w + WARPS, ... (HELD of them) of x and residual, holds
their sum h (rounded to the dtype, the next layer's residual) in registers, stores it to `h`,
and after the block's sum of squares stores the norm to `o`. Each lane reads x and residual
only at the elements it then writes to o and h, before it writes them, so the kernel declares
`in_place={"o": "x", "h": "residual"}`: vLLM's in-place form passes x as o and residual as h
with no copy (docs/runtime.md, "Aliasing and in-place").
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtype DT

import functools

import ktile as hk

from .._library import Route
from ..rmsnorm.tiles import ROW_TILE, TILED_ROWS, normalised, sum_of_squares, weights

REQUIRES = TILED_ROWS + [
    (lambda p: p.residual.shape == p.x.shape, "residual must have x's shape"),
    (lambda p: p.h.shape == p.x.shape, "h must have x's shape"),
]


@functools.lru_cache(maxsize=None)
def fused_add_rms_norm_tiles(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.x.rows // ROW_TILE,), warps="WARPS", requires=REQUIRES,
               in_place={"o": "x", "h": "residual"})
    def fused_add_rms_norm_tiles(x: hk.Tensor[DT], residual: hk.Tensor[DT], w: hk.Tensor[DT],
                                 o: hk.Tensor[DT], h: hk.Tensor[DT], eps: float, *,
                                 C: hk.Constexpr[int] = 32, HELD: hk.Constexpr[int] = 1,
                                 WARPS: hk.Constexpr[int] = 4):
        r, warp = hk.arch.block_idx.x, hk.arch.warp_id
        t = hk.RT(DT, ROW_TILE, C)
        chunks = [warp + i * WARPS for i in range(HELD)]     # unrolled: held in registers
        sums = []
        for c in chunks:
            idx = hk.tile_coord(0, 0, r, c)
            hs = (x[idx].load(t).to(hk.fp32) + residual[idx].load(t).to(hk.fp32)).to(DT)
            h[idx] = hs
            sums.append(hs)
        ws = weights(w, chunks, DT, C)
        total = sum_of_squares(sums, C)
        inv_rms = hk.rsqrt(total / hk.to_float(x.cols * ROW_TILE) + eps)
        for c, hs, wt in zip(chunks, sums, ws):
            o[hk.tile_coord(0, 0, r, c)] = normalised(hs, wt, inv_rms, DT)
    return fused_add_rms_norm_tiles


def tiles_route(max_cols: int, warps: int, cols: int, *, held: int = 1,
                targets: tuple[str, ...] | None = None) -> Route:
    """The tile kernel for rows up to `max_cols` wide (a multiple of 16): `warps` warps of
    `held` tiles 16 x `cols` of the view each."""
    assert held * cols * warps * ROW_TILE >= max_cols, (max_cols, warps, cols, held)
    return Route("fused_add_rms_norm_tiles", {"C": cols, "HELD": held, "WARPS": warps},
                 max_cols=max_cols, targets=targets, cols_multiple=ROW_TILE,
                 sample=(3, max_cols - 48))
