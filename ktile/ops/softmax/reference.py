"""Row softmax reference: y = exp(x - max) / sum(exp(x - max)) over the last axis, in fp32,
rounded once to the output dtype. The kernel's online form (running max and rescaled sum)
differs by fp32 rounding only: tolerance 1e-5 absolute plus one ulp of the output dtype."""
from __future__ import annotations

import numpy as np

from ...dtypes import DType


def softmax(x: np.ndarray, out_dtype: DType) -> np.ndarray:
    x = np.asarray(x, np.float32)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return out_dtype.round(e / e.sum(axis=-1, keepdims=True))


def tolerance(out_dtype: DType) -> float:
    return 1e-5 + (2.0 ** -8 if out_dtype.bits == 16 else 0.0)
