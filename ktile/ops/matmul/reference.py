"""Matmul reference: out = a · b (+ bias), products and sums in float64 from the 16-bit
inputs, the bias added before the one rounding to the output dtype.

The kernels accumulate in fp32 in another order (K tiles per warp, warps, then splits), so
they differ from this by fp32 accumulation over K products plus one rounding of the output:
tolerance K · max|a| · max|b| · 2⁻²² plus one ulp of the output dtype at the largest result
(bf16 2⁻⁷, fp16 2⁻¹⁰, fp32 2⁻²³ relative) plus 1e-3."""
from __future__ import annotations

import numpy as np

from ...dtypes import DType

ULP = {"bf16": 2.0 ** -7, "fp16": 2.0 ** -10, "fp32": 2.0 ** -23}


def matmul(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None, out_dtype: DType) -> np.ndarray:
    """a [M, K] · b [K, N] (+ bias [N]), rounded once to `out_dtype`."""
    out = np.asarray(a, np.float64) @ np.asarray(b, np.float64)
    if bias is not None:
        out = out + np.asarray(bias, np.float64)
    return out_dtype.round(out.astype(np.float32))


def tolerance(a: np.ndarray, b: np.ndarray, want: np.ndarray, out_dtype: str) -> float:
    k = a.shape[-1]
    top = float(np.max(np.abs(want), initial=0.0))
    accumulation = k * float(np.abs(a).max()) * float(np.abs(b).max()) * 2.0 ** -22
    return accumulation + top * ULP[out_dtype] + 1e-3
