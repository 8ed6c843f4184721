"""The dropout kernel, one per dtype: Triton's low-memory dropout with a runtime seed and
probability (a new seed or p is no new trace or build). Element (r, c) of x `[rows, cols]` draws
`hk.rand(seed, r · cols + c)`, its index in the flattened tensor; it is kept when the draw
exceeds p and becomes x / (1 − p) (in float32, rounded once to the dtype), else 0."""
import functools

import ktile as hk

SHAPES = [
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D [rows, cols]: fold leading dimensions"),
    (lambda p: p.out.shape == p.x.shape, "out must have x's shape"),
]


@functools.cache
def dropout(dtype: str):
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, p.COLS), hk.cdiv(p.x.rows, 16)),
               requires=SHAPES)
    def dropout_seeded(x: hk.Tensor[dt], out: hk.Tensor[dt], p: float, seed: int, *,
                       COLS: hk.Constexpr[int] = 64):
        r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
        idx = hk.tile_coord(0, 0, r, c)
        rows = hk.iota(hk.RT(hk.i32, 16, COLS), "row") + r * 16
        cols = hk.iota(hk.RT(hk.i32, 16, COLS), "col") + c * COLS
        keep = hk.rand(seed, rows * x.cols + cols) > p
        xs = x[idx].load(hk.RT(dt, 16, COLS)).to(hk.fp32)
        out[idx] = hk.where(keep, xs / (1.0 - p), 0.0).to(dt)
    return dropout_seeded


KERNELS = {"dropout_seeded": dropout}
