"""scaled_mm reference: out = (a · b) · scale_a · scale_b (+ bias), products and sums in
float64 from the e4m3 values, the scales (per tensor: one value; per token: [M, 1]; per
channel: [1, N]) and the bias applied in float64 before the one rounding to the output dtype.

The kernels accumulate the products in fp32 (each product of two e4m3 values is exact in fp32;
wgmma's accumulation order differs) and apply the scales in fp32, so they differ from this by
fp32 accumulation over K products, a few fp32 roundings of the epilogue and the output's one
rounding: tolerance K · max|a| · max|b| · max|scale_a| · max|scale_b| · 2⁻²² plus one ulp of the
output dtype at the largest result (bf16 2⁻⁷, fp16 2⁻¹⁰, fp32 2⁻²³ relative) plus 1e-3.

That holds on the interpreter, not for Hopper's fp8 wgmma: its accumulator adds with fewer
mantissa bits than fp32 (about 13). Accumulating all of K there, the H200 (2026-12-02) missed
by 3.9 at M 77, N 6144, K 4096, fp32 out (results near 1000; this tolerance 0.1), and the
bf16 results by 12 at K 12288 and 32 at K 8192 with per-token scales. The kernel promotes
each 128-wide K block into fp32 (kernels.py, PROMOTE), as torch._scaled_mm does by default
(use_fast_accum False), which leaves each block's reduced-precision sum. No formula of the
operands' maxima bounds that without admitting a missing bias, so on the GPU the tolerance
adds twice what that hardware's own promoted GEMM misses by at the same operands
(`on_hopper`: torch._scaled_mm at unit scales and fp32 out, against the float64 product),
times the scales: the same adds in the same blocks, twice for another order inside them."""
from __future__ import annotations

import numpy as np

from ...dtypes import DType
from ..matmul.reference import ULP


def scaled_mm(a: np.ndarray, b: np.ndarray, scale_a: np.ndarray, scale_b: np.ndarray,
              bias: np.ndarray | None, out_dtype: DType) -> np.ndarray:
    """a [M, K] · b [K, N] · scale_a (scalar or [M, 1]) · scale_b (scalar or [1, N]) (+ bias
    [N]), rounded once to `out_dtype`."""
    out = np.asarray(a, np.float64) @ np.asarray(b, np.float64)
    out = out * np.asarray(scale_a, np.float64) * np.asarray(scale_b, np.float64)
    if bias is not None:
        out = out + np.asarray(bias, np.float64)
    return out_dtype.round(out.astype(np.float32))


def tolerance(a: np.ndarray, b: np.ndarray, scale_a: np.ndarray, scale_b: np.ndarray,
              want: np.ndarray, out_dtype: str) -> float:
    return tolerance_of(a.shape[-1], float(np.abs(a).max()), float(np.abs(b).max()),
                        float(np.abs(scale_a).max()) * float(np.abs(scale_b).max()),
                        float(np.max(np.abs(want), initial=0.0)), out_dtype)


def tolerance_of(k: int, a_max: float, b_max: float, scales_max: float, top: float,
                 out_dtype: str) -> float:
    """The tolerance from its terms (a benchmark takes the maxima on the GPU): K, max|a|,
    max|b|, max|scale_a| · max|scale_b|, max|want|."""
    accumulation = k * a_max * b_max * scales_max * 2.0 ** -22
    return accumulation + top * ULP[out_dtype] + 1e-3


def on_hopper(tol: float, wgmma_error: float, scales_max: float) -> float:
    """The tolerance on an sm_90a GPU: `tol` plus twice `wgmma_error` (torch._scaled_mm's
    max error against the float64 a · b at unit scales, fp32 out, on that GPU) scaled by
    max|scale_a| · max|scale_b| (module docstring)."""
    return tol + 2.0 * wgmma_error * scales_max
