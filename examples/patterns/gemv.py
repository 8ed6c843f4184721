"""Decode GEMV: out = x · wᵀ for a few rows of activations x ([M, K], M = 1 to 16) and a weight
w ([N, K]). Each block computes BN columns of out; its warps split K (warp w takes K tiles
w, w + WARPS, ...) and accumulate their own fp32 partial tile with the matrix cores, then
`hk.group.sum` adds the warps' partial tiles in a fixed tree order. No atomics: the result is
the same bits every run."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ktile as hk  # noqa: E402
from common import example_main, max_abs_error, runner, torch_rand  # noqa: E402

SHAPES = [
    (lambda p: p.x.rows <= 16, "x must have at most 16 rows (decode: one per sequence)"),
    (lambda p: p.w.cols == p.x.cols, "w must be [N, K] for x of [M, K] (w.cols == x.cols)"),
    (lambda p: p.out.rows == p.x.rows and p.out.cols == p.w.rows, "out must be [M, N]"),
    (lambda p: p.x.batch * p.x.depth * p.w.batch * p.w.depth == 1, "x and w must be 2-D"),
]


@hk.kernel(grid=lambda p: (hk.cdiv(p.w.rows, p.BN),), warps="WARPS", requires=SHAPES)
def gemv_split_k(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], out: hk.Tensor[hk.bf16], *,
                 BN: hk.Constexpr[int] = 32, BK: hk.Constexpr[int] = 32,
                 WARPS: hk.Constexpr[int] = 4):
    n, warp, warps = hk.arch.block_idx.x, hk.arch.warp_id, hk.arch.num_warps
    acc = hk.zeros(hk.RT(hk.fp32, 16, BN))       # rows of x past M load as zeros
    for k in range(warp, hk.cdiv(x.cols, BK), warps):
        xs = x[hk.tile_coord(0, 0, 0, k)].load(hk.RT(hk.bf16, 16, BK))
        ws = w[hk.tile_coord(0, 0, n, k)].load(hk.RT(hk.bf16, BN, BK))
        acc += xs @ ws.T
    total = hk.group.sum(acc)                    # every warp gets the sum over warps
    if warp == 0:
        out[hk.tile_coord(0, 0, 0, n)] = total.to(hk.bf16)   # rows past M are not written


def reference(x, w):
    """x · wᵀ in float64 from the bf16 inputs (the kernel accumulates in fp32)."""
    import numpy as np
    return np.asarray(x, np.float64) @ np.asarray(w, np.float64).T


def tolerance(want, k: int) -> float:
    """One bf16 rounding of the output, plus fp32 accumulation over k products in another order."""
    import numpy as np
    top = float(np.max(np.abs(want), initial=0.0))
    return top * 2.0 ** -7 + k * top * 2.0 ** -24 + 1e-3


KERNELS = [(gemv_split_k, {})]
CASES = [(1, 64, 256), (5, 70, 200), (16, 96, 1000)]   # (M, N, K): one row, ragged N and K


def run_case(case, backend="interpret", target=None, device="cpu"):
    """4 and 8 warps against the reference; the larger error counts."""
    import torch
    m, n, k = case
    x = torch_rand((m, k), torch.bfloat16, 61)
    w = torch_rand((n, k), torch.bfloat16, 62)
    want = reference(x.float().numpy(), w.float().numpy())
    errors = []
    for warps in (4, 8):
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
        runner(gemv_split_k, backend, device)(x, w, out, target=target, WARPS=warps)
        errors.append(max_abs_error(out.float().numpy(), want))
    return max(errors), tolerance(want, k)


if __name__ == "__main__":
    example_main(globals())
