"""int8 per-token quantisation, symmetric: for each row, scale = max|x| / 127 and
q = round(x / scale) to the nearest integer, ties to even, as int8; the scales are written out
(one float32 per row) for the matmul that reads q. A row of zeros gets scale 0 and q = 0."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ktile as hk  # noqa: E402
from common import example_main, max_abs_error, runner, torch_rand  # noqa: E402

ROWS_OF_X = [
    (lambda p: p.x.batch * p.x.depth == 1,
     "x must be 2-D [tokens, hidden]: fold batch and depth into tokens"),
    (lambda p: p.q.shape == p.x.shape, "q must have x's shape"),
    (lambda p: p.scales.cols == p.x.rows and p.scales.rows == 1,
     "scales must hold one float32 per row of x: torch.empty(x.shape[0], dtype=torch.float32)"),
]


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), warps=4, requires=ROWS_OF_X)
def quant_int8(x: hk.Tensor[hk.bf16], q: hk.Tensor[hk.i8], scales: hk.Tensor[hk.fp32], *,
               COLS: hk.Constexpr[int] = 64):
    r, warp, warps = hk.arch.block_idx.x, hk.arch.warp_id, hk.arch.num_warps
    t = hk.RT(hk.bf16, 16, COLS)
    tiles = hk.cdiv(x.cols, COLS)
    amax = hk.zeros(hk.RV(hk.fp32, 16))          # columns past the edge load 0: |0| adds nothing
    for c in range(warp, tiles, warps):
        xs = x[hk.tile_coord(0, 0, r, c)].load(t).to(hk.fp32)
        amax = hk.maximum(amax, hk.row_max(hk.abs(xs)))
    scale = hk.group.max(amax) / 127.0           # every warp gets the row's max|x|
    for c in range(warp, tiles, warps):
        xs = x[hk.tile_coord(0, 0, r, c)].load(t).to(hk.fp32)
        # round to nearest, ties to even; the conversion saturates at [-128, 127] and sends
        # the NaN of 0 / 0 (a row of zeros) to 0
        q[hk.tile_coord(0, 0, r, c)] = hk.round(xs / scale).to(hk.i8)
    if warp == 0:
        scales[hk.tile_coord(0, 0, 0, r)] = scale    # 16 rows' scales: elements [16r, 16r + 16)


def reference(x):
    """(q, scales) from x ([tokens, hidden]) in float32: scale = max|x| / 127 per row,
    q = rint(x / scale) clipped to int8, 0 where the scale is 0."""
    import numpy as np
    xs = np.asarray(x, np.float32)
    scale = np.max(np.abs(xs), axis=-1) / np.float32(127)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.rint(xs / scale[:, None])
    q = np.where(scale[:, None] == 0, 0, np.clip(q, -128, 127)).astype(np.int8)
    return q, scale


KERNELS = [(quant_int8, {})]
CASES = [(1, 64), (21, 300), (40, 1024)]         # (tokens, hidden)


def run_case(case, backend="interpret", target=None, device="cpu"):
    """q and the scales must equal the reference's exactly: max|x| is exact, and the division
    and the rounding are IEEE on every target. Row 0 is zeros (scale 0, q 0) when there are
    several rows."""
    import torch
    tokens, hidden = case
    x = torch_rand((tokens, hidden), torch.bfloat16, 51, scale=3.0)
    if tokens > 1:
        x[0] = 0
    q = torch.full((tokens, hidden), 99, dtype=torch.int8)
    scales = torch.full((tokens,), float("nan"))
    runner(quant_int8, backend, device)(x, q, scales, target=target)
    want_q, want_scales = reference(x.float().numpy())
    errors = [max_abs_error(q.numpy(), want_q), max_abs_error(scales.numpy(), want_scales)]
    return max(errors), 0.0


if __name__ == "__main__":
    example_main(globals())
