"""RMSNorm reference: y = x · rsqrt(mean(x², over the last axis) + eps) · w.

Computed in fp32 from the bf16 inputs, rounded once to the output dtype. The kernel sums
squares per column tile then across tiles and warps, so it differs from this fp32 sum by
rounding only: tolerance one bf16 ulp of the output's magnitude (2⁻⁷ relative) plus 1e-3."""
from __future__ import annotations

import numpy as np

from ...dtypes import DType


def rmsnorm(x: np.ndarray, w: np.ndarray, eps: float, out_dtype: DType) -> np.ndarray:
    x = np.asarray(x, np.float32)
    ms = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    return out_dtype.round(x / np.sqrt(ms + np.float32(eps)) * np.asarray(w, np.float32))


def tolerance(y: np.ndarray) -> float:
    return float(np.max(np.abs(y))) * 2.0 ** -7 + 1e-3


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float, out_dtype: DType) -> np.ndarray:
    """The library op's semantics (vLLM's RMSNorm.forward_native, transformers' LlamaRMSNorm):
    x · rsqrt(mean(x²) + eps) in fp32, rounded to the dtype, times w, rounded again. Within
    `tolerance` of `rmsnorm` (one more rounding)."""
    x = np.asarray(x, np.float32)
    ms = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    normed = out_dtype.round(x / np.sqrt(ms + np.float32(eps)))
    return out_dtype.round(normed * np.asarray(w, np.float32))
