"""GEMM reference: C = A·Bᵀ with A (M×K) and B (N×K) in bf16, products and sums in fp32.

The kernel accumulates in fp32 in K-tile order; this sums in float64, so they differ by fp32
rounding of the accumulation: tolerance 1e-5·K·max|A|·max|B| plus 1e-4."""
from __future__ import annotations

import numpy as np


def gemm_abt(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (np.asarray(a, np.float64) @ np.swapaxes(np.asarray(b, np.float64), -1, -2)).astype(np.float32)


def tolerance(a: np.ndarray, b: np.ndarray) -> float:
    k = a.shape[-1]
    return 1e-5 * k * float(np.abs(a).max()) * float(np.abs(b).max()) + 1e-4
