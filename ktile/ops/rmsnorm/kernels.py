"""RMSNorm kernels: one block per row, the row spread over the block's warps.

- `rms_norm_tiles` (tiles.py): rows whose width is a multiple of 16, viewed as 16-row tiles,
  held in registers (x read once), wide accesses; the fast kernel.
- `rms_norm_rows` (rows.py): rows up to 256 wide (head dimensions), 16 whole rows of x a warp
  in a row-layout tile, several row tiles a block.
- `rms_norm_loop` (here): any width, the fallback. A row of `cols` values is cut into VEC-wide
  vectors; warp w takes vectors w, w + WARPS, ...; x is read a second time for the store (from
  L2 on a GPU). A VEC-wide vector is laid out as an MMA fragment's column replicated over the
  fragment's rows, so every lane of a replica group loads the same elements: correct, slow.

Either way 1 row costs one block of one launch, and a ragged row's edge is the bounds of its
last tile or vector (elements past the row read 0 and are not written). eps is a runtime
scalar: one build serves every model.
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtype DT

import functools

import ktile as hk

from . import rows, tiles

ROWS_AND_WEIGHT = [
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D (rows, cols): fold the leading dims"),
    (lambda p: p.o.shape == p.x.shape, "o must have x's shape"),
    (lambda p: p.w.cols == p.x.cols and p.w.rows == 1,
     "w must hold one weight per column of x (w.cols == x.cols)"),
]


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


KERNELS = {"rms_norm_rows": rows.rms_norm_rows, "rms_norm_tiles": tiles.rms_norm_tiles,
           "rms_norm_loop": rms_norm_loop}
