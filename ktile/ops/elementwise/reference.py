"""Reference for elementwise ops: computed in fp32, rounded once to the output dtype.

Correct means bit-exact: a + b of two bf16 values computed in fp32 and rounded to nearest
even at bf16 is what the kernel stores (tolerance 0)."""
from __future__ import annotations

import numpy as np

from ...dtypes import DType


def add(a: np.ndarray, b: np.ndarray, out_dtype: DType) -> np.ndarray:
    return out_dtype.round(np.asarray(a, np.float32) + np.asarray(b, np.float32))


# ---- every elementwise op: float32 math, one rounding (tolerance 0 for arithmetic; exp, erf,
# tanh and sigmoid one float32 ulp of the target's math library, then the output rounding:
# `tolerance` below) ----------------------------------------------------------------------

def _f32(v):
    return np.asarray(v, np.float32)


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


def binary(op: str, a, b, out_dtype: DType) -> np.ndarray:
    """op(a, b) with numpy broadcasting; b may be a Python number (rounded to float32)."""
    return out_dtype.round(BINARY[op](_f32(a), _f32(b)))


def _gelu_erf(x):
    import math
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return np.float32(0.5) * x * (np.float32(1) + erf(x / math.sqrt(2.0)).astype(np.float32))


def _gelu_tanh(x):
    import math
    inner = np.float32(math.sqrt(2.0 / math.pi)) * (x + np.float32(0.044715) * x * x * x)
    return np.float32(0.5) * x * (np.float32(1) + np.tanh(inner))


UNARY = {
    "exp": np.exp,
    "relu": lambda x: np.maximum(x, np.float32(0)),
    "gelu": _gelu_erf,
    "gelu_tanh": _gelu_tanh,
    "silu": lambda x: x / (np.float32(1) + np.exp(-x)),
    "neg": np.negative,
    "abs": np.abs,
}


def unary(fn: str, x, out_dtype: DType) -> np.ndarray:
    with np.errstate(over="ignore"):
        return out_dtype.round(UNARY[fn](_f32(x)))


def tolerance(fn: str, want: np.ndarray, out_dtype: DType) -> float:
    """0 for exact ops (arithmetic, max/min, relu, neg, abs); else one rounding of the output
    dtype relative to the largest |value| (a float32 ulp of exp/erf/tanh may flip it)."""
    if fn in ("add", "sub", "mul", "maximum", "minimum", "relu", "neg", "abs"):
        return 0.0
    rel = {"bf16": 2.0 ** -7, "fp16": 2.0 ** -10}.get(out_dtype.name, 2.0 ** -21)
    finite = np.abs(want[np.isfinite(want)])
    return float(np.max(finite, initial=0.0)) * rel + 1e-6
