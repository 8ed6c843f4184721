"""SiLU-and-mul: o = silu(gate) · up, where gate and up are the two halves of one [rows, 2·d]
tensor (a gated MLP's fused gate_up projection).

Two spellings of "the second half": `silu_mul` reads both halves of `x` itself, the up half
at an element offset of d columns (`hk.elem_coord`, any d); `silu_mul_views` takes the halves
as two parameters, column views that the caller slices (`x[..., :d]`, `x[..., d:]`)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ktile as hk  # noqa: E402
from common import example_main, max_abs_error, runner, torch_rand  # noqa: E402

HALVES = [
    (lambda p: p.x.cols == 2 * p.o.cols,
     "x must hold gate and up side by side: x.cols == 2 * o.cols"),
    (lambda p: p.x.rows == p.o.rows, "x and o must have the same rows"),
    (lambda p: p.x.batch * p.x.depth == 1,
     "x must be 2-D [rows, 2*d]: fold batch and depth into rows"),
]


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, p.COLS), hk.cdiv(p.o.rows, 16)), requires=HALVES)
def silu_mul(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *, COLS: hk.Constexpr[int] = 64):
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    t = hk.RT(hk.bf16, 16, COLS)
    d = o.cols                                   # where the up half starts, in elements
    gate = x[hk.elem_coord(0, 0, r * 16, c * COLS)].load(t).to(hk.fp32)
    up = x[hk.elem_coord(0, 0, r * 16, c * COLS + d)].load(t).to(hk.fp32)
    o[hk.tile_coord(0, 0, r, c)] = (hk.silu(gate) * up).to(hk.bf16)


VIEWS = [
    (lambda p: p.gate.shape == p.o.shape and p.up.shape == p.o.shape,
     "gate, up and o must have one shape: pass x[..., :d], x[..., d:] and o of [rows, d]"),
    (lambda p: p.o.batch * p.o.depth == 1,
     "o must be 2-D [rows, d]: fold batch and depth into rows"),
]


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, p.COLS), hk.cdiv(p.o.rows, 16)), requires=VIEWS)
def silu_mul_views(gate: hk.Tensor[hk.bf16], up: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *,
                   COLS: hk.Constexpr[int] = 64):
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    idx = hk.tile_coord(0, 0, r, c)
    t = hk.RT(hk.bf16, 16, COLS)
    g, u = gate[idx].load(t).to(hk.fp32), up[idx].load(t).to(hk.fp32)
    o[idx] = (hk.silu(g) * u).to(hk.bf16)


def reference(x):
    """silu(x[..., :d]) · x[..., d:] in float32 from the bf16 inputs, rounded once to bf16."""
    import numpy as np
    xs = np.asarray(x, np.float32)
    d = xs.shape[-1] // 2
    gate, up = xs[..., :d], xs[..., d:]
    return hk.bf16.round(gate / (np.float32(1) + np.exp(-gate)) * up)


def tolerance(want) -> float:
    """One bf16 rounding of the output's magnitude (exp differs by an ulp across targets)."""
    import numpy as np
    return float(np.max(np.abs(want), initial=0.0)) * 2.0 ** -7 + 1e-3


KERNELS = [(silu_mul, {}), (silu_mul_views, {})]
CASES = [(1, 64), (21, 200), (40, 96)]           # (rows, d): one row, ragged rows and d


def run_case(case, backend="interpret", target=None, device="cpu"):
    """Both spellings against the reference; the larger error counts."""
    import torch
    rows, d = case
    x = torch_rand((rows, 2 * d), torch.bfloat16, 21)
    want = reference(x.float().numpy())
    by_offset, by_views = (torch.full((rows, d), float("nan"), dtype=torch.bfloat16)
                           for _ in range(2))
    runner(silu_mul, backend, device)(x, by_offset, target=target)
    runner(silu_mul_views, backend, device)(x[..., :d], x[..., d:], by_views, target=target)
    errors = [max_abs_error(o.float().numpy(), want) for o in (by_offset, by_views)]
    return max(errors), tolerance(want)


if __name__ == "__main__":
    example_main(globals())
