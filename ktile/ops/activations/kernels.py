"""Gated activation kernels: o[r, j] = act(x[r, j]) · x[r, d + j] for x of [rows, 2d] and o
of [rows, d], any d. Each warp owns one 16 x COLS tile of o; the up half is read at an element
offset of d columns (`hk.elem_coord`), so x stays one tensor and its edge bounds both halves'
loads. Math is float32, rounded once to o's dtype. `ACT`: "silu", "gelu" (erf) or
"gelu_tanh", a compile-time constant.
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtype

import functools

import ktile as hk

from ..elementwise.kernels import APPLY, ROW_TILE

HALVES = [
    (lambda p: p.x.batch * p.x.depth * p.o.batch * p.o.depth == 1,
     "x and o must be 2-D [rows, cols]: fold batch and depth into rows"),
    (lambda p: p.x.cols == 2 * p.o.cols,
     "x must hold gate and up side by side: x.cols == 2 * o.cols"),
    (lambda p: p.x.rows == p.o.rows, "x and o must have the same rows"),
]


@functools.lru_cache(maxsize=None)
def act_and_mul_kernel(dtype: str):
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, p.COLS), hk.cdiv(p.o.rows, ROW_TILE * p.WARPS)),
               warps="WARPS", name=f"act_and_mul_{dtype}", requires=HALVES)
    def act_and_mul(x: hk.Tensor[dt], o: hk.Tensor[dt], *, ACT: hk.Constexpr[str] = "silu",
                    COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        r = hk.arch.block_idx.y * hk.arch.num_warps + hk.arch.warp_id
        c = hk.arch.block_idx.x
        t = hk.RT(dt, ROW_TILE, COLS)
        d = o.cols                                   # where the up half starts, in elements
        gate = x[hk.elem_coord(0, 0, r * ROW_TILE, c * COLS)].load(t).to(hk.fp32)
        up = x[hk.elem_coord(0, 0, r * ROW_TILE, c * COLS + d)].load(t).to(hk.fp32)
        o[hk.tile_coord(0, 0, r, c)] = (APPLY[ACT](gate) * up).to(dt)

    return act_and_mul


KERNELS = {"act_and_mul": act_and_mul_kernel}
