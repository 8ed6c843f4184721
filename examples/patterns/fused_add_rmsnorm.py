"""Fused add + RMSNorm: h = x + residual, o = h · rsqrt(mean(h²) + eps) · w, and h kept as the
next layer's residual (a transformer block's pre-norm). eps is a runtime float: one build
serves every model.

The sum is written to `residual_out`, not over `residual`: the second pass adds x and residual
again, which over a residual already replaced by the sum would add x twice; and the aliasing rule
(docs/runtime.md, "Aliasing and in-place") lets a kernel write an input in place only with one
warp that reads it with one load and writes it with one store, where this kernel has four warps
that read each column tile twice, in loops (docs/patterns.md)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ktile as hk  # noqa: E402
from common import example_main, max_abs_error, runner, torch_rand  # noqa: E402

ROWS_OF_X = [
    (lambda p: p.x.batch * p.x.depth == 1,
     "x must be 2-D [tokens, hidden]: fold batch and depth into tokens"),
    (lambda p: p.residual.shape == p.x.shape, "residual must have x's shape"),
    (lambda p: p.o.shape == p.x.shape, "o must have x's shape"),
    (lambda p: p.residual_out.shape == p.x.shape, "residual_out must have x's shape"),
    (lambda p: p.w.cols == p.x.cols, "w must hold one weight per column of x (w.cols == x.cols)"),
]


@hk.func
def added(x, residual, idx, t):
    """x + residual at idx, rounded to bf16 as the residual is stored, then widened."""
    return (x[idx].load(t).to(hk.fp32) + residual[idx].load(t).to(hk.fp32)).to(hk.bf16)


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), warps=4, requires=ROWS_OF_X)
def fused_add_rmsnorm(x: hk.Tensor[hk.bf16], residual: hk.Tensor[hk.bf16],
                      w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16],
                      residual_out: hk.Tensor[hk.bf16], eps: float, *,
                      COLS: hk.Constexpr[int] = 64):
    r, warp, warps = hk.arch.block_idx.x, hk.arch.warp_id, hk.arch.num_warps
    t = hk.RT(hk.bf16, 16, COLS)
    tiles = hk.cdiv(x.cols, COLS)
    squares = hk.zeros(hk.RV(hk.fp32, 16))
    for c in range(warp, tiles, warps):          # warp w: column tiles w, w + 4, ...
        idx = hk.tile_coord(0, 0, r, c)
        h = added(x, residual, idx, t)
        residual_out[idx] = h
        hf = h.to(hk.fp32)
        squares += hk.row_sum(hf * hf)
    inv_rms = hk.rsqrt(hk.group.sum(squares) / hk.to_float(x.cols) + eps)
    for c in range(warp, tiles, warps):          # the same tiles: x + residual once more
        idx = hk.tile_coord(0, 0, r, c)
        hf = added(x, residual, idx, t).to(hk.fp32)
        ws = w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.bf16, COLS, "col")).to(hk.fp32)
        o[idx] = (hf * inv_rms * ws).to(hk.bf16)


def reference(x, residual, w, eps):
    """(o, residual_out) in float32 from the bf16 inputs: h rounded to bf16 once, o rounded once."""
    import numpy as np
    h = hk.bf16.round(np.asarray(x, np.float32) + np.asarray(residual, np.float32))
    ms = np.mean(h * h, axis=-1, keepdims=True, dtype=np.float32)
    o = hk.bf16.round(h / np.sqrt(ms + np.float32(eps)) * np.asarray(w, np.float32))
    return o, h


def tolerance(want) -> float:
    """One bf16 rounding of the output's magnitude, plus the sum's order (warps, then tiles)."""
    import numpy as np
    return float(np.max(np.abs(want), initial=0.0)) * 2.0 ** -7 + 1e-3


KERNELS = [(fused_add_rmsnorm, {})]
CASES = [(1, 64, 1e-6), (21, 300, 1e-5), (40, 1024, 1e-6)]   # (tokens, hidden, eps)


def run_case(case, backend="interpret", target=None, device="cpu"):
    """o and residual_out against the reference; the larger error counts."""
    import torch
    tokens, hidden, eps = case
    x = torch_rand((tokens, hidden), torch.bfloat16, 31)
    residual = torch_rand((tokens, hidden), torch.bfloat16, 32)
    w = torch_rand((hidden,), torch.bfloat16, 33)
    o, residual_out = (torch.full_like(x, float("nan")) for _ in range(2))
    runner(fused_add_rmsnorm, backend, device)(x, residual, w, o, residual_out, eps,
                                               target=target)
    want_o, want_h = reference(x.float().numpy(), residual.float().numpy(), w.float().numpy(), eps)
    errors = [max_abs_error(o.float().numpy(), want_o),
              max_abs_error(residual_out.float().numpy(), want_h)]
    return max(errors), tolerance(want_o)


if __name__ == "__main__":
    example_main(globals())
