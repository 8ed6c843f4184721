"""RoPE, NeoX layout: each head's first and second halves (x1, x2) are rotated by the angle of
the token's position, out = [x1·cos − x2·sin, x2·cos + x1·sin], for q and k in one launch.
cos and sin come from a [max_position, head_dim] float32 cache (cos in the first half of a row,
sin in the second), gathered by each token's position."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ktile as hk  # noqa: E402
from common import example_main, max_abs_error, runner, torch_rand  # noqa: E402

HEADS = [
    (lambda p: p.q.cols % p.HEAD_DIM == 0 and p.k.cols % p.HEAD_DIM == 0,
     "q and k must be [tokens, heads * HEAD_DIM]: pass HEAD_DIM=head_dim"),
    (lambda p: p.k.cols <= p.q.cols,
     "k must have no more heads than q (the grid covers q's heads)"),
    (lambda p: p.HEAD_DIM % (2 * p.COLS) == 0, "HEAD_DIM must be a multiple of 2 * COLS"),
    (lambda p: p.cos_sin.cols == p.HEAD_DIM, "cos_sin must be [max_position, HEAD_DIM]: cos | sin"),
    (lambda p: p.positions.cols == p.q.rows and p.k.rows == p.q.rows,
     "positions must hold one position per token of q and k"),
    (lambda p: p.q_out.shape == p.q.shape and p.k_out.shape == p.k.shape,
     "q_out and k_out must have the shapes of q and k"),
    (lambda p: p.q.batch * p.q.depth * p.k.batch * p.k.depth == 1,
     "q and k must be 2-D [tokens, heads * head_dim]"),
]


@hk.func
def rotate(x, out, r, h, positions, cos_sin, HEAD_DIM, COLS):
    """Rotate head h of tokens [16r, 16r + 16), COLS columns of each half at a time (a whole
    128-wide head in fp32 at once would hold 192 registers per lane on sm_90a)."""
    half = HEAD_DIM // (2 * COLS)                # column tiles per half head
    t, angle = hk.RT(hk.bf16, 16, COLS), hk.RT(hk.fp32, 16, COLS)
    for j in range(half):                        # a Python loop: unrolled while tracing
        cos = hk.gather(cos_sin, positions, angle, col=j)
        sin = hk.gather(cos_sin, positions, angle, col=half + j)
        first = hk.tile_coord(0, 0, r, 2 * h * half + j)
        second = hk.tile_coord(0, 0, r, 2 * h * half + half + j)
        x1, x2 = x[first].load(t).to(hk.fp32), x[second].load(t).to(hk.fp32)
        out[first] = (x1 * cos - x2 * sin).to(hk.bf16)
        out[second] = (x2 * cos + x1 * sin).to(hk.bf16)


@hk.kernel(grid=lambda p: (hk.cdiv(p.q.rows, 16), p.q.cols // p.HEAD_DIM), requires=HEADS)
def rope_neox(positions: hk.Tensor[hk.i32], q: hk.Tensor[hk.bf16], k: hk.Tensor[hk.bf16],
              cos_sin: hk.Tensor[hk.fp32], q_out: hk.Tensor[hk.bf16],
              k_out: hk.Tensor[hk.bf16], *, HEAD_DIM: hk.Constexpr[int] = 128,
              COLS: hk.Constexpr[int] = 32):
    r, h = hk.arch.block_idx.x, hk.arch.block_idx.y
    pos = positions[hk.tile_coord(0, 0, 0, r)].load(hk.RV(hk.i32, 16))   # 16 tokens' positions
    rotate(q, q_out, r, h, pos, cos_sin, HEAD_DIM, COLS)
    if h < k.cols // HEAD_DIM:                   # fewer k heads (grouped-query attention)
        rotate(k, k_out, r, h, pos, cos_sin, HEAD_DIM, COLS)


def cos_sin_cache(max_position, head_dim, base=10000.0):
    """[max_position, head_dim] float32: cos(p·θ_i) | sin(p·θ_i), θ_i = base^(−2i / head_dim)."""
    import numpy as np
    theta = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.arange(max_position, dtype=np.float64)[:, None] * theta[None, :]
    return np.concatenate([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)


def reference(positions, x, cache, head_dim):
    """x ([tokens, heads · head_dim]) rotated, in float32 from the inputs, rounded once to bf16."""
    import numpy as np
    tokens = x.shape[0]
    heads = np.asarray(x, np.float32).reshape(tokens, -1, head_dim)
    x1, x2 = heads[..., :head_dim // 2], heads[..., head_dim // 2:]
    cos, sin = np.split(cache[np.asarray(positions)][:, None, :], 2, axis=-1)
    out = np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    return hk.bf16.round(out.reshape(tokens, -1))


def tolerance(want) -> float:
    """One bf16 rounding of the output's magnitude (a fused multiply-add may round once less)."""
    import numpy as np
    return float(np.max(np.abs(want), initial=0.0)) * 2.0 ** -7 + 1e-3


KERNELS = [(rope_neox, {})]
# (tokens, q heads, k heads, head_dim): one token, ragged tokens, grouped-query heads
CASES = [(1, 2, 1, 128), (21, 4, 2, 64), (40, 3, 3, 128)]
MAX_POSITION = 4096


def run_case(case, backend="interpret", target=None, device="cpu"):
    """q_out and k_out against the reference; the larger error counts."""
    import torch
    tokens, q_heads, k_heads, head_dim = case
    g = torch.Generator().manual_seed(41)
    positions = torch.randint(0, MAX_POSITION, (tokens,), generator=g, dtype=torch.int32)
    cache = torch.from_numpy(cos_sin_cache(MAX_POSITION, head_dim))
    q = torch_rand((tokens, q_heads * head_dim), torch.bfloat16, 42)
    k = torch_rand((tokens, k_heads * head_dim), torch.bfloat16, 43)
    q_out, k_out = torch.full_like(q, float("nan")), torch.full_like(k, float("nan"))
    runner(rope_neox, backend, device)(positions, q, k, cache, q_out, k_out, target=target,
                                       HEAD_DIM=head_dim)
    errors, tolerances = [], []
    for x, out in ((q, q_out), (k, k_out)):
        want = reference(positions.numpy(), x.float().numpy(), cache.numpy(), head_dim)
        errors.append(max_abs_error(out.float().numpy(), want))
        tolerances.append(tolerance(want))
    return max(errors), min(tolerances)


if __name__ == "__main__":
    example_main(globals())
