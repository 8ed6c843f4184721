"""Reference for elementwise ops: computed in fp32, rounded once to the output dtype.

Correct means bit-exact: a + b of two bf16 values computed in fp32 and rounded to nearest
even at bf16 is what the kernel stores (tolerance 0)."""
from __future__ import annotations

import numpy as np

from ...dtypes import DType


def add(a: np.ndarray, b: np.ndarray, out_dtype: DType) -> np.ndarray:
    return out_dtype.round(np.asarray(a, np.float32) + np.asarray(b, np.float32))
