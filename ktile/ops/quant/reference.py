"""Quantisation references (vLLM's semantics, in numpy float32; facts from vLLM's
`csrc/quantization/compressed_tensors/int8_quant_kernels.cu` and `csrc/quantization/fp8/common.cu`,
our own code).

- int8 per token, dynamic: amax = max|x| per row, scale = amax / 127, q = rint(x · (127 / amax))
  (nearest, ties to even) saturated to [-128, 127]; a row of zeros gives scale 0 and q 0.
- int8 per tensor, static: q = rint(x / scale) saturated to [-128, 127].
- fp8 e4m3fn per token, dynamic: scale = max(amax / 448, 1 / (448 · 512)); per tensor, dynamic:
  the same with amax over the whole tensor; static: scale given. q = fp8(clamp(x · (1 / scale),
  -448, 448)), rounded to nearest even.
- dequantisation: q · scale in float32, rounded once to the output dtype.

Tolerance: 0. Every step is one IEEE float32 operation or an exact max, so the kernels match
these bit for bit (q exactly; scales exactly; dequantised values after one rounding).
"""
from __future__ import annotations

import numpy as np

INT8_MAX = np.float32(127.0)
FP8_MAX = np.float32(448.0)
MIN_FP8_SCALE = np.float32(1.0) / (FP8_MAX * np.float32(512.0))


def _rows(x) -> np.ndarray:
    x = np.asarray(x, np.float32)
    return x.reshape(-1, x.shape[-1])


def _saturated_int8(v: np.ndarray) -> np.ndarray:
    """rint, then clamp to int8; NaN (0 · inf of a zero row) becomes 0 as the conversion does."""
    return np.clip(np.nan_to_num(np.rint(v), nan=0.0), -128, 127).astype(np.int8)


def int8_per_token(x):
    """(q int8 shaped like x, scales float32 [tokens])."""
    xs = _rows(x)
    amax = np.max(np.abs(xs), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        inverse = INT8_MAX / amax
        q = _saturated_int8(xs * inverse[:, None])
    return q.reshape(np.shape(x)), amax / INT8_MAX


def int8_per_tensor(x, scale):
    """q int8 shaped like x, for one float32 scale."""
    xs = _rows(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = _saturated_int8(xs / np.float32(scale))
    return q.reshape(np.shape(x))


def fp8_values(v: np.ndarray) -> np.ndarray:
    """float32 `v` rounded to the nearest e4m3fn value, ties to even (|v| <= 448 here)."""
    from ...dtypes import fp8
    return fp8.round(np.asarray(v, np.float32))


def _fp8_of(xs: np.ndarray, scale: np.ndarray) -> np.ndarray:
    inverse = np.float32(1.0) / np.asarray(scale, np.float32)
    return fp8_values(np.clip(xs * inverse, -FP8_MAX, FP8_MAX))


def fp8_per_token(x):
    """(q as float32 values on the e4m3fn grid shaped like x, scales float32 [tokens])."""
    xs = _rows(x)
    scale = np.maximum(np.max(np.abs(xs), axis=-1) / FP8_MAX, MIN_FP8_SCALE)
    return _fp8_of(xs, scale[:, None]).reshape(np.shape(x)), scale


def fp8_tensor_scale(x) -> np.float32:
    """The dynamic per-tensor scale: max(max|x| / 448, 1 / (448 · 512))."""
    return np.maximum(np.max(np.abs(_rows(x))) / FP8_MAX, MIN_FP8_SCALE)


def fp8_per_tensor(x, scale=None):
    """(q on the e4m3fn grid shaped like x, the scale): static with `scale`, else dynamic."""
    scale = fp8_tensor_scale(x) if scale is None else np.float32(scale)
    return _fp8_of(_rows(x), scale).reshape(np.shape(x)), scale


def dequantize(q, scale):
    """q · scale in float32; `scale` one value or one per row of q."""
    qs = _rows(q)
    s = np.asarray(scale, np.float32).reshape(-1)
    s = s[:, None] if s.size == qs.shape[0] and s.size != 1 else s.reshape(())
    return (qs * s).reshape(np.shape(q))
