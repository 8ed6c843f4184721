"""Fused add + RMSNorm kernels: one block per row (as ktile/ops/rmsnorm/kernels.py), x and
residual read once and held in registers; the sum h is written to `h` and the norm to `o`.

- `fused_add_rms_norm_tiles` (tiles.py): rows whose width is a multiple of 16, as 16-row
  tiles; declared in place (o may be x, h may be residual).
- `fused_add_rms_norm_held` (here): other widths, narrow replicated vectors (the fallback).
  Replicas of a vector element sit in several lanes, so no lane alone reads before it writes:
  the kernel declares nothing in place and the engine's in-place form runs it into separate
  outputs and copies back (op.py)."""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtype DT
import functools

import ktile as hk

from .._library import Route
from . import tiles

REQUIRES = [
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D (rows, cols): fold the leading dims"),
    (lambda p: p.residual.shape == p.x.shape, "residual must have x's shape"),
    (lambda p: p.o.shape == p.x.shape and p.h.shape == p.x.shape, "o and h must have x's shape"),
    (lambda p: p.w.cols == p.x.cols and p.w.rows == 1,
     "w must hold one weight per column of x (w.cols == x.cols)"),
    (lambda p: p.HELD * p.VEC * p.WARPS >= p.x.cols,
     "HELD x VEC x WARPS (the columns a block holds) must be at least x.cols"),
]


@functools.lru_cache(maxsize=None)
def fused_add_rms_norm_held(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.x.rows,), warps="WARPS", requires=REQUIRES)
    def fused_add_rms_norm_held(x: hk.Tensor[DT], residual: hk.Tensor[DT], w: hk.Tensor[DT],
                                o: hk.Tensor[DT], h: hk.Tensor[DT], eps: float, *,
                                VEC: hk.Constexpr[int] = 256, HELD: hk.Constexpr[int] = 4,
                                WARPS: hk.Constexpr[int] = 4):
        r, warp = hk.arch.block_idx.x, hk.arch.warp_id
        v = hk.RV(DT, VEC, "col")
        chunks = [warp + i * WARPS for i in range(HELD)]     # unrolled: held in registers
        sums = []
        squares = hk.zeros(hk.RV(hk.fp32, VEC, "col"))
        for c in chunks:
            idx = hk.tile_coord(0, 0, r, c)
            hs = (x[idx].load(v).to(hk.fp32) + residual[idx].load(v).to(hk.fp32)).to(DT)
            h[idx] = hs
            hf = hs.to(hk.fp32)
            squares += hf * hf
            sums.append(hs)
        inv_rms = hk.rsqrt(hk.group.sum(hk.sum(squares)) / hk.to_float(x.cols) + eps)
        for c, hs in zip(chunks, sums):
            ws = w[hk.tile_coord(0, 0, 0, c)].load(v).to(hk.fp32)
            o[hk.tile_coord(0, 0, r, c)] = ((hs.to(hk.fp32) * inv_rms).to(DT).to(hk.fp32)
                                            * ws).to(DT)
    return fused_add_rms_norm_held


KERNELS = {"fused_add_rms_norm_tiles": tiles.fused_add_rms_norm_tiles,
           "fused_add_rms_norm_held": fused_add_rms_norm_held}


def held_route(max_cols: int, warps: int, *, vec: int = 256,
               targets: tuple[str, ...]) -> Route:
    """The held kernel for rows up to `max_cols` wide on `targets`, with `warps` warps of
    `vec`-wide vectors (HELD: as many as the width needs)."""
    held = -(-max_cols // (vec * warps))
    return Route("fused_add_rms_norm_held", {"VEC": vec, "HELD": held, "WARPS": warps},
                 max_cols=max_cols, targets=targets, sample=(3, max_cols - 37))
