"""RMSNorm over narrow rows, many rows a warp: the kernel for head-dim widths (Qwen3's q_norm
and k_norm: rows of 128 over every head of every token, 65536 of them in a 2048-token prefill).

The row-tile kernel (tiles.py) gives each row a block and views it as a 16-row tile, so a row of
128 values is a 16 x 8 band of which a warp's 16 x 64 flat tile holds 8 columns: 87% of its
lanes idle, one 1-warp block per row. Here x is viewed as it is, [rows, cols], and a register
tile 16 x C in the row layout holds 16 whole rows of x (docs/language.md: a row layout has row
reductions and vector broadcasts, which a flat tile has not). Warp w of a block takes row tile
`block · WARPS/SPLIT + w / SPLIT` and its column tile `w % SPLIT`:

- SPLIT = 1: each warp holds 16 rows of up to C columns; a block is WARPS row tiles (16 · WARPS
  rows), no cross-warp step.
- SPLIT = WARPS: the block's warps share one row tile, each holding C of its columns; the sums
  of squares (one fp32 per row, `hk.row_sum`) are combined with `hk.group.sum` (warp order: the
  same result every run). For rows wider than one warp's tile (256 at C = 128).

Each row's sum of squares is a row reduction in fp32, the mean a product with 1 / cols, then
x · rsqrt(mean + eps) rounded to the dtype, times the weight (a column vector, broadcast over
the rows), rounded again: the row-tile kernel's rounding (tiles.normalised). Rows past the last
(a ragged row count) and columns past the last (a width below C · SPLIT) read 0 and are not
written. In 16-bit dtypes the weight is loaded with x, before the reduction; in fp32 after it
(registers: tiles.early).

Registers as built by ptxas for sm_90a (nvcc 13, 2026-12-02, no spills), bf16 / fp32: C = 64
at (WARPS, SPLIT) (4, 1) 72 / 88, (2, 2) 68 / 72, (4, 4) 68 / 72; C = 128 at (4, 1) 118 / 148
(fp32 over the budgets' occupancy estimate), (2, 2) 120 / 141. gfx1100 and gfx950 (clang-22,
cocheck) build all of them clean. Speed: not measured yet (`python -m
ktile.ops.rmsnorm.sweep_rows` on the H200).
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtype DT

import functools

import ktile as hk

from .. import _library
from .tiles import early, normalised

ROW_TILE = 16    # rows of x per register tile

ROWS_AS_THEY_ARE = [
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D (rows, cols): fold the leading dims"),
    (lambda p: p.o.shape == p.x.shape, "o must have x's shape"),
    (lambda p: p.w.rows == 1 and p.w.cols == p.x.cols,
     "w must hold one weight per column of x (w.cols == x.cols)"),
    (lambda p: p.SPLIT == 1 or p.SPLIT == p.WARPS,
     "SPLIT must be 1 (a row tile per warp) or WARPS (the block's warps share one row tile)"),
    (lambda p: p.C * p.SPLIT >= p.x.cols,
     "C x SPLIT (the columns a row tile's warps hold) must be at least x.cols: choose "
     "another route"),
]


def _grid(p):
    return (hk.cdiv(p.x.rows, ROW_TILE * (p.WARPS // p.SPLIT)),)


@functools.lru_cache(maxsize=None)
def rms_norm_rows(dtype: str):
    DT = getattr(hk, dtype)
    EARLY = early(DT)

    @hk.kernel(grid=_grid, warps="WARPS", requires=ROWS_AS_THEY_ARE, in_place={"o": "x"})
    def rms_norm_rows(x: hk.Tensor[DT], w: hk.Tensor[DT], o: hk.Tensor[DT], eps: float, *,
                      C: hk.Constexpr[int] = 128, WARPS: hk.Constexpr[int] = 4,
                      SPLIT: hk.Constexpr[int] = 1):
        warp = hk.arch.warp_id
        if SPLIT == 1:
            r, c = hk.arch.block_idx.x * WARPS + warp, 0
        else:
            r, c = hk.arch.block_idx.x, warp
        at = hk.tile_coord(0, 0, r, c)
        weights = hk.RV(DT, C, "col")
        xs = x[at].load(hk.RT(DT, ROW_TILE, C))
        ws = w[hk.tile_coord(0, 0, 0, c)].load(weights) if EARLY else None
        per_value = 1.0 / hk.to_float(x.cols)
        f = xs.to(hk.fp32)
        squares = hk.row_sum(f * f)
        if SPLIT > 1:
            squares = hk.group.sum(squares)
        inv = hk.rsqrt(squares * per_value + eps)
        if ws is None:
            ws = w[hk.tile_coord(0, 0, 0, c)].load(weights)
        o[at] = normalised(xs, ws, inv, DT)
    return rms_norm_rows


def rows_route(max_cols: int, cols: int, warps: int, split: int = 1, *,
               targets: tuple[str, ...] | None = None) -> _library.Route:
    """The narrow-row kernel for rows up to `max_cols` wide (a multiple of 16): tiles of
    16 x `cols`, `warps` warps a block, `split` of them sharing a row tile (1 or `warps`)."""
    assert cols * split >= max_cols and split in (1, warps), (max_cols, cols, warps, split)
    return _library.Route("rms_norm_rows", {"C": cols, "WARPS": warps, "SPLIT": split},
                          max_cols=max_cols, targets=targets, cols_multiple=ROW_TILE,
                          sample=(37, max_cols - 16))
