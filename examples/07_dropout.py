"""07 dropout: Triton's low-memory dropout tutorial; hk.rand gives the draws of tl.rand, so the
same elements are kept for the same seed and offsets."""
import numpy as np

import ktile as hk

from common import example_main, max_abs_error, runner, torch_rand


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, 64), hk.cdiv(p.x.rows, 16)),
           requires=[(lambda p: p.x.batch == 1,
                      "x.batch must be 1: the grid does not cover batch (one call per batch)"),
                     (lambda p: p.x.depth == 1,
                      "x.depth must be 1: the grid does not cover depth (reshape it into rows)")])
def dropout(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, P: hk.Constexpr[float] = 0.5,
            SEED: hk.Constexpr[int] = 123):
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    idx = hk.tile_coord(0, 0, r, c)
    rows = hk.iota(hk.RT(hk.i32, 16, 64), "row") + r * 16
    cols = hk.iota(hk.RT(hk.i32, 16, 64), "col") + c * 64
    offsets = rows * x.cols + cols                 # the flat element index, as in the tutorial
    keep = hk.rand(SEED, offsets) > P
    xs = x[idx].load(hk.RT(hk.fp32, 16, 64))
    kept_share = float(np.float32(1) - np.float32(P))   # in float32, as Triton and the reference
    o[idx] = hk.where(keep, xs / kept_share, 0.0)


KERNELS = [(dropout, {})]
CASES = [((1, 1000), 0.5, 123), ((16, 64), 0.25, 7), ((37, 90), 0.75, 2024)]


def run_case(case, backend="interpret", target=None, device="cpu"):
    import torch
    from ktile.ops.dropout.reference import dropout as reference
    (rows, cols), p, seed = case
    x = torch_rand((1, 1, rows, cols), torch.float32, 12)
    o = torch.full_like(x, float("nan"))
    runner(dropout, backend, device)(x, o, target=target, P=p, SEED=seed)
    want, _ = reference(x.numpy().reshape(-1), p, seed)
    return max_abs_error(o.numpy().reshape(-1), want), 1e-6


if __name__ == "__main__":
    example_main(globals())
