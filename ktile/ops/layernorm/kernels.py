"""LayerNorm's vector kernels, for rows whose width is not a multiple of 16 (the others take
the row-tile kernels of row_tiles.py; config.py routes).

Forward (`layer_norm_held`): one block per row, as RMSNorm's (ktile/ops/rmsnorm/kernels.py):
the row held in registers over WARPS warps of HELD vectors of VEC values; the mean, then the
variance as the mean of (x − mean)² over the row's own columns (lanes past the row are
masked out of it), y = (x − mean) · rstd · w + b in fp32, rounded once (torch's layer_norm).

Backward (`layer_norm_dx` + `row_tiles.column_sums`, examples/10_layernorm_backward.py):
16-row tiles; dx per row, the weight and bias gradients as per-16-row-block partial sums
reduced in block order (no atomics: the same result every run)."""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtype DT
import functools

import ktile as hk

from .._library import Route
from . import row_tiles

FORWARD = [
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D (rows, cols): fold the leading dims"),
    (lambda p: p.o.shape == p.x.shape, "o must have x's shape"),
    (lambda p: p.w.cols == p.x.cols and p.b.cols == p.x.cols,
     "w and b must hold one value per column of x"),
    (lambda p: p.HELD * p.VEC * p.WARPS >= p.x.cols,
     "HELD x VEC x WARPS (the columns a block holds) must be at least x.cols"),
]


@functools.lru_cache(maxsize=None)
def layer_norm_held(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.x.rows,), warps="WARPS", requires=FORWARD)
    def layer_norm_held(x: hk.Tensor[DT], w: hk.Tensor[DT], b: hk.Tensor[DT], o: hk.Tensor[DT],
                        eps: float, *, VEC: hk.Constexpr[int] = 256,
                        HELD: hk.Constexpr[int] = 4, WARPS: hk.Constexpr[int] = 4):
        r, warp = hk.arch.block_idx.x, hk.arch.warp_id
        v = hk.RV(DT, VEC, "col")
        chunks = [warp + i * WARPS for i in range(HELD)]     # unrolled: held in registers
        held = [x[hk.tile_coord(0, 0, r, c)].load(v).to(hk.fp32) for c in chunks]
        n = hk.to_float(x.cols)
        total = hk.zeros(hk.RV(hk.fp32, VEC, "col"))
        for xf in held:
            total += xf                         # lanes past the row read 0
        mean = hk.group.sum(hk.sum(total)) / n
        deviations = hk.zeros(hk.RV(hk.fp32, VEC, "col"))
        lane = hk.iota(hk.RV(hk.i32, VEC, "col"), "col")
        for c, xf in zip(chunks, held):
            d = hk.where(lane + c * VEC < x.cols, xf - mean, 0.0)
            deviations += d * d
        rstd = hk.rsqrt(hk.group.sum(hk.sum(deviations)) / n + eps)
        for c, xf in zip(chunks, held):
            ws = w[hk.tile_coord(0, 0, 0, c)].load(v).to(hk.fp32)
            bs = b[hk.tile_coord(0, 0, 0, c)].load(v).to(hk.fp32)
            o[hk.tile_coord(0, 0, r, c)] = ((xf - mean) * rstd * ws + bs).to(DT)
    return layer_norm_held


BACKWARD = [
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D (rows, cols): fold the leading dims"),
    (lambda p: p.dy.shape == p.x.shape and p.dx.shape == p.x.shape, "dy, dx must have x's shape"),
    (lambda p: p.w.cols == p.x.cols, "w must hold one value per column of x"),
    (lambda p: p.mean.cols == p.x.rows and p.rstd.cols == p.x.rows,
     "mean and rstd must hold one value per row of x"),
    (lambda p: p.dw_part.rows == hk.cdiv(p.x.rows, 16) and p.dw_part.cols == p.x.cols,
     "dw_part and db_part must hold one row per 16 rows of x"),
]


@functools.lru_cache(maxsize=None)
def layer_norm_dx(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), warps="WARPS", requires=BACKWARD)
    def layer_norm_dx(dy: hk.Tensor[DT], x: hk.Tensor[DT], w: hk.Tensor[DT],
                      mean: hk.Tensor[hk.fp32], rstd: hk.Tensor[hk.fp32], dx: hk.Tensor[DT],
                      dw_part: hk.Tensor[hk.fp32], db_part: hk.Tensor[hk.fp32], *,
                      COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        r, warp = hk.arch.block_idx.x, hk.arch.warp_id
        t = hk.RT(DT, 16, COLS)
        wv = hk.RV(DT, COLS, "col")
        mu = mean[hk.tile_coord(0, 0, 0, r)].load(hk.RV(hk.fp32, 16))
        rs = rstd[hk.tile_coord(0, 0, 0, r)].load(hk.RV(hk.fp32, 16))
        tiles = hk.cdiv(x.cols, COLS)
        c1 = hk.zeros(hk.RV(hk.fp32, 16))          # Σ x̂·w·dy per row
        c2 = hk.zeros(hk.RV(hk.fp32, 16))          # Σ w·dy per row
        for c in range(warp, tiles, WARPS):
            idx = hk.tile_coord(0, 0, r, c)
            xhat = (x[idx].load(t).to(hk.fp32) - mu) * rs
            wdy = dy[idx].load(t).to(hk.fp32) * w[hk.tile_coord(0, 0, 0, c)].load(wv).to(hk.fp32)
            c1 += hk.row_sum(xhat * wdy)
            c2 += hk.row_sum(wdy)
        n = hk.to_float(x.cols)
        c1 = hk.group.sum(c1) / n
        c2 = hk.group.sum(c2) / n
        for c in range(warp, tiles, WARPS):
            idx = hk.tile_coord(0, 0, r, c)
            g = dy[idx].load(t).to(hk.fp32)
            xhat = (x[idx].load(t).to(hk.fp32) - mu) * rs
            # rows past x's edge read 0 but x̂ = -mean·rstd there: keep them out of the partials
            xhat = hk.where(hk.iota(hk.RT(hk.i32, 16, COLS), "row") + r * 16 < x.rows, xhat, 0.0)
            wdy = g * w[hk.tile_coord(0, 0, 0, c)].load(wv).to(hk.fp32)
            dx[idx] = ((wdy - (xhat * c1 + c2)) * rs).to(DT)
            dw_part[idx] = hk.col_sum(g * xhat)      # this block's partial, row r of dw_part
            db_part[idx] = hk.col_sum(g)
    return layer_norm_dx


KERNELS = {"layer_norm_held": layer_norm_held, **row_tiles.KERNELS}
BACKWARD_KERNELS = {"layer_norm_dx": layer_norm_dx, **row_tiles.BACKWARD_KERNELS}


def held_route(max_cols: int, warps: int, *, vec: int = 256,
               targets: tuple[str, ...]) -> Route:
    """The held kernel for rows up to `max_cols` wide on `targets`, with `warps` warps of
    `vec`-wide vectors (HELD: as many as the width needs)."""
    held = -(-max_cols // (vec * warps))
    return Route("layer_norm_held", {"VEC": vec, "HELD": held, "WARPS": warps},
                 max_cols=max_cols, targets=targets, sample=(3, max_cols - 37))
