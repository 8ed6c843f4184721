"""Fused add + RMSNorm reference (vLLM's fused_add_rms_norm): h = x + residual rounded to the
dtype (the next layer's residual), o = (h · rsqrt(mean(h²) + eps)) rounded to the dtype, times
w, rounded again. Computed in fp32. Tolerance: one rounding of o's magnitude (2⁻⁷ relative, a
bf16 ulp) plus 1e-3, for the order of the kernel's sums; h is exact."""
from __future__ import annotations

import numpy as np

from ...dtypes import DType
from ..rmsnorm.reference import rms_norm, tolerance  # noqa: F401 - the same tolerance


def fused_add_rms_norm(x, residual, w, eps: float, dtype: DType):
    """(o, h) in float32."""
    h = dtype.round(np.asarray(x, np.float32) + np.asarray(residual, np.float32))
    return rms_norm(h, w, eps, dtype), h
