"""Gated activations' reference: x = [..., 2d], gate = x[..., :d], up = x[..., d:],
out = act(gate) · up, in float32 from the inputs, rounded once to x's dtype (vLLM's
`SiluAndMul` / `GeluAndMul` convention: the activation applies to the first half).

Tolerance: one rounding of the output dtype relative to the result's magnitude plus 1e-6
absolute (exp, erf and tanh differ by an ulp of float32 across targets): 2^-7 of |out| for
bf16, 2^-10 for fp16, 2^-20 for fp32."""
from __future__ import annotations

import math

import numpy as np

from ...dtypes import DType


def silu(g: np.ndarray) -> np.ndarray:
    return g / (np.float32(1) + np.exp(-g))


def gelu(g: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        inner = np.float32(math.sqrt(2.0 / math.pi)) * (g + np.float32(0.044715) * g * g * g)
        return np.float32(0.5) * g * (np.float32(1) + np.tanh(inner))
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return (np.float32(0.5) * g * (np.float32(1) + erf(g / math.sqrt(2.0)).astype(np.float32)))


def and_mul(x: np.ndarray, act, out_dtype: DType) -> np.ndarray:
    xs = np.asarray(x, np.float32)
    d = xs.shape[-1] // 2
    return out_dtype.round(act(xs[..., :d]) * xs[..., d:])


def silu_and_mul(x: np.ndarray, out_dtype: DType) -> np.ndarray:
    return and_mul(x, silu, out_dtype)


def gelu_and_mul(x: np.ndarray, out_dtype: DType, approximate: str = "none") -> np.ndarray:
    return and_mul(x, lambda g: gelu(g, approximate), out_dtype)


def tolerance(want: np.ndarray, out_dtype: DType) -> float:
    rel = {8: 2.0 ** -3, 16: 2.0 ** -7 if out_dtype.name == "bf16" else 2.0 ** -10}.get(
        out_dtype.bits, 2.0 ** -20)
    return float(np.max(np.abs(want), initial=0.0)) * rel + 1e-6
