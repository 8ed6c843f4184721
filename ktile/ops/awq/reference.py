"""W4A16 reference in AWQ's GEMM layout (AutoAWQ / vLLM `awq`), float64 numpy.

The layout, learned from AutoAWQ's packer and vLLM's AWQ dequantiser (public sources):
- qweight int32 [K, N/8]: word p of row k holds the 4-bit codes of columns 8p..8p+7, the code
  of column 8p + ORDER[i] in bits [4i, 4i + 4) (ORDER = [0, 2, 4, 6, 1, 3, 5, 7]); so column
  8p + j sits at nibble REVERSE[j] (REVERSE = [0, 4, 1, 5, 2, 6, 3, 7]);
- qzeros int32 [K/G, N/8]: the zero codes of each group of G rows, packed the same way;
- scales fp16 / bf16 [K/G, N];
- w[k, n] = (q[k, n] − z[k // G, n]) · s[k // G, n].

Tolerance of the op against `awq_gemm`: the kernels form each weight in fp32 from its 16-bit
scale (exact: a code difference of at most 15 times a 16-bit value), multiply by x in fp32 and
accumulate in fp32 in another order, then round once: K · max|x| · max|w| · 2⁻²² plus one ulp
of the output dtype at the largest result plus 1e-3 (matmul's rule). The prefill route rounds
the weights to x's dtype first (awq_dequantize), so its tolerance adds max over outputs of
Σ_k |x| · |w| · ulp(dtype) / 2 (`tolerance(..., rounded_weights=True)`). `awq_dequantize` itself is exact
up to that one rounding of each weight (half an ulp of the dtype).
"""
from __future__ import annotations

import numpy as np

ORDER = (0, 2, 4, 6, 1, 3, 5, 7)      # nibble i of a word holds column ORDER[i] of its 8
REVERSE = (0, 4, 1, 5, 2, 6, 3, 7)    # column j of a word's 8 sits at nibble REVERSE[j]
PACK = 8                              # 4-bit codes per int32 word
ULP = {"bf16": 2.0 ** -7, "fp16": 2.0 ** -10, "fp32": 2.0 ** -23}


def unpack(packed: np.ndarray) -> np.ndarray:
    """int32 [R, N/8] in AWQ's order → the codes int64 [R, N] in column order."""
    words = np.asarray(packed).astype(np.int64) & 0xFFFFFFFF
    shifts = 4 * np.asarray(REVERSE, np.int64)
    codes = (words[:, :, None] >> shifts[None, None, :]) & 0xF
    return codes.reshape(words.shape[0], -1)


def pack(codes: np.ndarray) -> np.ndarray:
    """Codes [R, N] (0..15, N a multiple of 8) → int32 [R, N/8] in AWQ's order: the packer
    of the public format, written from its description (ORDER), for tests to build inputs."""
    codes = np.asarray(codes, np.int64)
    rows, cols = codes.shape
    words = np.zeros((rows, cols // PACK), np.int64)
    for nibble, column in enumerate(ORDER):
        words |= (codes[:, column::PACK] & 0xF) << (4 * nibble)
    return words.astype(np.uint32).view(np.int32)


def dequantize(qweight: np.ndarray, scales: np.ndarray, qzeros: np.ndarray,
               group_size: int = 128) -> np.ndarray:
    """w [K, N] in float64: (q − z) · s with each group's zero and scale."""
    q, z = unpack(qweight), unpack(qzeros)
    s = np.asarray(scales, np.float64)
    z = np.repeat(z, group_size, axis=0)[:q.shape[0]]
    s = np.repeat(s, group_size, axis=0)[:q.shape[0]]
    return (q - z) * s


def awq_gemm(x: np.ndarray, qweight: np.ndarray, scales: np.ndarray, qzeros: np.ndarray,
             group_size: int = 128) -> np.ndarray:
    """x [M, K] · w [K, N] in float64 (unrounded: compare after the output's rounding)."""
    return np.asarray(x, np.float64) @ dequantize(qweight, scales, qzeros, group_size)


def tolerance(x: np.ndarray, w: np.ndarray, want: np.ndarray, out_dtype: str, *,
              rounded_weights: bool = False) -> float:
    """The bound the module docstring states, for x [M, K], w [K, N] and the result."""
    k = x.shape[-1]
    xw = k * float(np.abs(x).max()) * float(np.abs(w).max())
    top = float(np.max(np.abs(want), initial=0.0))
    rounding = 0.0
    if rounded_weights:      # each weight off by at most half an ulp of its own size
        spread = np.abs(np.asarray(x, np.float64)) @ np.abs(np.asarray(w, np.float64))
        rounding = float(spread.max()) * ULP[out_dtype] / 2
    return xw * 2.0 ** -22 + rounding + top * ULP[out_dtype] + 1e-3
