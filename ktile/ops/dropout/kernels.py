"""The dropout kernel, one per dtype: Triton's low-memory dropout with a runtime seed and
probability (a new seed or p is no new trace or build). Element (r, c) of x `[rows, cols]` draws
`hk.rand(seed, r · cols + c)`, its index in the flattened tensor; it is kept when the draw
exceeds p and becomes x / (1 − p) (in float32, rounded once to the dtype), else 0.

Flat-layout tiles (docs/language.md), as the elementwise kernels: a block's WARPS warps take
adjacent 16 x COLS tiles (`elementwise.kernels.warp_tile_indices`), and the op reflows a
contiguous x as rows of 64 (the flat index of an element is the same in any row width)."""
import functools

import ktile as hk

from ..elementwise.kernels import ROW_TILE, flat, flat_grid, tiles_held, warp_tile_indices

SHAPES = [
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D [rows, cols]: fold leading dimensions"),
    (lambda p: p.out.shape == p.x.shape, "out must have x's shape"),
]


@functools.cache
def dropout(dtype: str):
    dt = getattr(hk, dtype)

    @hk.kernel(grid=flat_grid(dt, "out"), warps="WARPS", requires=SHAPES)
    def dropout_seeded(x: hk.Tensor[dt], out: hk.Tensor[dt], p: float, seed: int, *,
                       COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4,
                       HELD: hk.Constexpr[int] = 1):
        t, at = flat(dt, COLS), warp_tile_indices(out, COLS, tiles_held(dt, HELD))
        xs = [x[hk.tile_coord(0, 0, r, c)].load(t) for r, c in at]
        index_tile = flat(hk.i32, COLS)
        for (r, c), xt in zip(at, xs):
            rows = hk.iota(index_tile, "row") + r * ROW_TILE
            cols = hk.iota(index_tile, "col") + c * COLS
            keep = hk.rand(seed, rows * x.cols + cols) > p
            kept = xt.to(hk.fp32) / (1.0 - p)
            out[hk.tile_coord(0, 0, r, c)] = hk.where(keep, kept, 0.0).to(dt)
    return dropout_seeded


KERNELS = {"dropout_seeded": dropout}
