"""RMSNorm kernels: one block per row, the row spread over the block's warps.

A row of `cols` values is cut into VEC-wide vectors (VEC × the element size bytes per warp per
access: 256 bf16 values are 16 bytes per lane of a 32-lane warp, one 128-bit access each);
warp w takes vectors w, w + WARPS, ... Two forms:

- `rms_norm_held`: each warp holds its HELD vectors in registers between the sum of squares
  and the store (x read once from memory); it serves rows up to HELD × VEC × WARPS columns.
- `rms_norm_loop`: any width; x is read a second time for the store (from L2 on a GPU).

Either way 1 row costs one block of one launch, not a 16-row tile with 15 rows wasted, and a
ragged row's edge is the bounds of its last vector (elements past the row read 0 and are not
written). eps is a runtime scalar: one build serves every model.
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtype DT

import functools

import ktile as hk

from .. import _library

ROWS_AND_WEIGHT = [
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D (rows, cols): fold the leading dims"),
    (lambda p: p.o.shape == p.x.shape, "o must have x's shape"),
    (lambda p: p.w.cols == p.x.cols and p.w.rows == 1,
     "w must hold one weight per column of x (w.cols == x.cols)"),
]

HOLDS_ROW = ROWS_AND_WEIGHT + [
    (lambda p: p.HELD * p.VEC * p.WARPS >= p.x.cols,
     "HELD x VEC x WARPS (the columns a block holds) must be at least x.cols: choose another "
     "route, or rms_norm_loop"),
]


@functools.lru_cache(maxsize=None)
def rms_norm_held(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.x.rows,), warps="WARPS", requires=HOLDS_ROW)
    def rms_norm_held(x: hk.Tensor[DT], w: hk.Tensor[DT], o: hk.Tensor[DT], eps: float, *,
                      VEC: hk.Constexpr[int] = 256, HELD: hk.Constexpr[int] = 4,
                      WARPS: hk.Constexpr[int] = 4):
        r, warp = hk.arch.block_idx.x, hk.arch.warp_id
        v = hk.RV(DT, VEC, "col")
        chunks = [warp + i * WARPS for i in range(HELD)]     # unrolled: held in registers
        held = [x[hk.tile_coord(0, 0, r, c)].load(v) for c in chunks]
        squares = hk.zeros(hk.RV(hk.fp32, VEC, "col"))
        for xs in held:
            xf = xs.to(hk.fp32)
            squares += xf * xf
        inv_rms = hk.rsqrt(hk.group.sum(hk.sum(squares)) / hk.to_float(x.cols) + eps)
        for c, xs in zip(chunks, held):
            ws = w[hk.tile_coord(0, 0, 0, c)].load(v).to(hk.fp32)
            # the engines' rounding: normalised, rounded to the dtype, then times the weight
            o[hk.tile_coord(0, 0, r, c)] = ((xs.to(hk.fp32) * inv_rms).to(DT).to(hk.fp32)
                                            * ws).to(DT)
    return rms_norm_held


@functools.lru_cache(maxsize=None)
def rms_norm_loop(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.x.rows,), warps="WARPS", requires=ROWS_AND_WEIGHT)
    def rms_norm_loop(x: hk.Tensor[DT], w: hk.Tensor[DT], o: hk.Tensor[DT], eps: float, *,
                      VEC: hk.Constexpr[int] = 256, WARPS: hk.Constexpr[int] = 16):
        r, warp = hk.arch.block_idx.x, hk.arch.warp_id
        v = hk.RV(DT, VEC, "col")
        chunks = hk.cdiv(x.cols, VEC)
        squares = hk.zeros(hk.RV(hk.fp32, VEC, "col"))
        for c in range(warp, chunks, WARPS):
            xf = x[hk.tile_coord(0, 0, r, c)].load(v).to(hk.fp32)
            squares += xf * xf
        inv_rms = hk.rsqrt(hk.group.sum(hk.sum(squares)) / hk.to_float(x.cols) + eps)
        for c in range(warp, chunks, WARPS):
            xf = x[hk.tile_coord(0, 0, r, c)].load(v).to(hk.fp32)
            ws = w[hk.tile_coord(0, 0, 0, c)].load(v).to(hk.fp32)
            o[hk.tile_coord(0, 0, r, c)] = ((xf * inv_rms).to(DT).to(hk.fp32) * ws).to(DT)
    return rms_norm_loop


KERNELS = {"rms_norm_held": rms_norm_held, "rms_norm_loop": rms_norm_loop}


def held_route(max_cols: int, warps: int, *, vec: int = 256, targets: tuple[str, ...],
               sample_cols: int | None = None) -> _library.Route:
    """The held kernel for rows up to `max_cols` wide on `targets`, with `warps` warps of
    `vec`-wide vectors (HELD: as many as the width needs)."""
    held = -(-max_cols // (vec * warps))
    return _library.Route("rms_norm_held", {"VEC": vec, "HELD": held, "WARPS": warps},
                          max_cols=max_cols, targets=targets,
                          sample=(3, sample_cols or max_cols - 37))
