"""A plain Triton W4A16 GEMV in AWQ's layout (ktile/ops/awq/reference.py), benchmarks/awq.py's
Triton baseline for the decode shapes: program (n, m) computes out[m, n·BLOCK_N : ...] over
all of K, one 128-row group a step: the group's words (each word loaded once per column it
holds, the 8 loads of a word coalescing into one), shifted by 4 · REVERSE[column % 8] and
masked, minus the group's zero codes, times its scales, times x's row, summed over the
group's rows in fp32. Rows of x are separate programs (the weights re-read per row, from L2
where they fit). Importing it needs triton."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK_N = 128
GROUP = 128


@triton.jit
def _awq_gemv(x, qweight, scales, qzeros, out, N, K, BLOCK_N: tl.constexpr,
              GROUP: tl.constexpr):
    pid_n, m = tl.program_id(0), tl.program_id(1)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    inside = cols < N
    words = cols // 8
    j = cols % 8
    shift = (j // 2 + (j % 2) * 4) * 4          # 4 · REVERSE[j], REVERSE = 0 4 1 5 2 6 3 7
    rows = tl.arange(0, GROUP)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for g in range(0, K // GROUP):
        k = g * GROUP + rows
        q = tl.load(qweight + k[:, None] * (N // 8) + words[None, :], mask=inside[None, :],
                    other=0)
        z = tl.load(qzeros + g * (N // 8) + words, mask=inside, other=0)
        s = tl.load(scales + g * N + cols, mask=inside, other=0.0).to(tl.float32)
        codes = ((q >> shift[None, :]) & 0xF).to(tl.float32)
        zero = ((z >> shift) & 0xF).to(tl.float32)
        xs = tl.load(x + m * K + k).to(tl.float32)
        acc += tl.sum(xs[:, None] * (codes - zero[None, :]), axis=0) * s
    tl.store(out + m * N + cols, acc.to(out.dtype.element_ty), mask=inside)


def awq_gemv(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor,
             qzeros: torch.Tensor) -> torch.Tensor:
    """x [M, K] · the AWQ weight [K, N] (group 128), x's dtype out."""
    m, k = x.shape
    n = scales.shape[1]
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    _awq_gemv[(triton.cdiv(n, BLOCK_N), m)](x, qweight, scales, qzeros, out, n, k,
                                            BLOCK_N=BLOCK_N, GROUP=GROUP)
    return out
