"""LayerNorm backward reference (Triton's tutorial): with x̂ = (x − mean)·rstd and
wdy = w·dy, dx = (wdy − (x̂·mean(x̂·wdy) + mean(wdy)))·rstd; dw = Σ_rows dy·x̂; db = Σ_rows dy.

Computed in float64. The kernel sums in fp32, the weight gradients as per-row-block partials
reduced in a fixed order: tolerance 1e-4 relative to the largest magnitude plus 1e-4."""
from __future__ import annotations

import numpy as np


def forward_stats(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, np.float64)
    mean = x.mean(axis=-1)
    rstd = 1.0 / np.sqrt(x.var(axis=-1) + eps)
    return mean.astype(np.float32), rstd.astype(np.float32)


def layernorm_backward(x, dy, w, mean, rstd):
    x, dy, w = (np.asarray(t, np.float64) for t in (x, dy, w))
    mean, rstd = np.asarray(mean, np.float64)[:, None], np.asarray(rstd, np.float64)[:, None]
    xhat = (x - mean) * rstd
    wdy = w * dy
    c1 = (xhat * wdy).mean(axis=-1, keepdims=True)
    c2 = wdy.mean(axis=-1, keepdims=True)
    dx = (wdy - (xhat * c1 + c2)) * rstd
    return dx.astype(np.float32), (dy * xhat).sum(0).astype(np.float32), dy.sum(0).astype(np.float32)


def tolerance(*arrays) -> float:
    return 1e-4 * max(float(np.abs(a).max()) for a in arrays) + 1e-4


def layer_norm(x, w, b, eps: float, dtype) -> np.ndarray:
    """The library op's forward (torch's layer_norm): (x − mean) · rstd · w + b over the last
    axis in fp32 (the biased variance), rounded once to `dtype`. Tolerance: `tolerance(y)`
    plus one rounding of the output's magnitude where the dtype is 16-bit (2⁻⁷ relative)."""
    x = np.asarray(x, np.float32)
    mean = x.mean(axis=-1, keepdims=True, dtype=np.float32)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True, dtype=np.float32)
    y = (x - mean) / np.sqrt(var + np.float32(eps)) * np.asarray(w, np.float32) \
        + np.asarray(b, np.float32)
    return dtype.round(y)


def forward_tolerance(y, dtype) -> float:
    rounding = 2.0 ** -7 if dtype.bits == 16 else 0.0
    return float(np.max(np.abs(y))) * (1e-4 + rounding) + 1e-3
