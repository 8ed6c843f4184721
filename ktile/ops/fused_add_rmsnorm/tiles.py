"""Fused add + RMSNorm over rows viewed as tiles (as ktile/ops/rmsnorm/tiles.py, which says how
a row becomes a 16-row tile held in flat tiles): the fast kernel for rows whose width is a
multiple of 16.

One block per row; warp w loads tiles w, w + WARPS, ... (HELD of them) of x and residual, and
the weight's, all issued before any is used; it holds their sum h (rounded to the dtype, the
next layer's residual) in registers, stores it to `h`, and after the block's sum of squares
(whole-tile sums, then `hk.group.sum`) stores the norm to `o`. Each lane reads x and residual
only at the elements it then writes to o and h, before it writes them, so the kernel declares
`in_place={"o": "x", "h": "residual"}`: vLLM's in-place form passes x as o and residual as h
with no copy (docs/runtime.md, "Aliasing and in-place").
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtype DT

import functools

import ktile as hk

from .._library import Route
from ..rmsnorm.tiles import (ROW_TILE, TILED_ROWS, flat, inv_rms, load, load_all, normalised,
                             early, shares, split)

REQUIRES = TILED_ROWS + [
    (lambda p: p.residual.shape == p.x.shape, "residual must have x's shape"),
    (lambda p: p.h.shape == p.x.shape, "h must have x's shape"),
]


@functools.lru_cache(maxsize=None)
def fused_add_rms_norm_tiles(dtype: str):
    DT = getattr(hk, dtype)
    EARLY = early(DT)

    @hk.kernel(grid=lambda p: (p.x.rows // ROW_TILE,), warps="WARPS", requires=REQUIRES,
               in_place={"o": "x", "h": "residual"})
    def fused_add_rms_norm_tiles(x: hk.Tensor[DT], residual: hk.Tensor[DT], w: hk.Tensor[DT],
                                 o: hk.Tensor[DT], h: hk.Tensor[DT], eps: float, *,
                                 C: hk.Constexpr[int] = 64, HELD: hk.Constexpr[int] = 1,
                                 WARPS: hk.Constexpr[int] = 4):
        r, warp = hk.arch.block_idx.x, hk.arch.warp_id
        SPLIT = split(DT, C)
        t = flat(DT, C // SPLIT)
        chunks = shares(warp, WARPS, HELD, SPLIT)
        ws, sums = None, []
        for group in stages(chunks, EARLY, SPLIT):
            xs, rs = load_all(x, r, group, t), load_all(residual, r, group, t)
            if EARLY and HELD == 1:
                ws = load_all(w, 0, chunks, t)
            part = [(a.to(hk.fp32) + b.to(hk.fp32)).to(DT) for a, b in zip(xs, rs)]
            for c, hs in zip(group, part):
                h[hk.tile_coord(0, 0, r, c)] = hs
            sums += part
        inv = inv_rms(sums, x, eps)
        for i, (c, hs) in enumerate(zip(chunks, sums)):
            wt = ws[i] if ws else load(w, 0, c, t)
            o[hk.tile_coord(0, 0, r, c)] = normalised(hs, wt, inv, DT)
    return fused_add_rms_norm_tiles


def stages(chunks: list, early: bool, split: int) -> list[list]:
    """The groups of `chunks` whose x and residual are loaded together: all of them in 16-bit
    dtypes; one share (`split` tiles) at a time in fp32, where x and residual of two shares
    in flight at once put a 4-warp block past a quarter of sm_90a's warps (160 registers)."""
    size = len(chunks) if early else split
    return [chunks[i:i + size] for i in range(0, len(chunks), size)]


def tiles_route(max_cols: int, warps: int, cols: int = 64, *, held: int = 1,
                targets: tuple[str, ...] | None = None, max_rows: int | None = None) -> Route:
    """The tile kernel for rows up to `max_cols` wide (a multiple of 16) and up to `max_rows`
    of them (None: any): `warps` warps of `held` flat tiles 16 x `cols` of the view each."""
    assert held * cols * warps * ROW_TILE >= max_cols, (max_cols, warps, cols, held)
    return Route("fused_add_rms_norm_tiles", {"C": cols, "HELD": held, "WARPS": warps},
                 max_rows=max_rows, max_cols=max_cols, targets=targets,
                 cols_multiple=ROW_TILE, sample=(3, max_cols - 48))
