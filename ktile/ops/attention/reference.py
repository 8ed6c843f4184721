"""Attention forward reference: softmax(Q·Kᵀ·scale + causal mask)·V, with grouped-query
attention (query head h reads key/value head h // (H / H_kv)).

Q, K, V are bf16; scores, softmax and the weighted sum are computed in float64 here. The
kernel rounds the probabilities to bf16 before P·V (as flash attention does) and uses an
online softmax, so the tolerance is 2⁻⁷ relative to max|V| plus 1e-3."""
from __future__ import annotations

import numpy as np


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool,
              scale: float | None = None) -> np.ndarray:
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    heads, kv_heads = q.shape[1], k.shape[1]
    group = heads // kv_heads
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    scale = scale if scale is not None else 1.0 / np.sqrt(q.shape[-1])
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        n_q, n_k = s.shape[-2:]
        s = np.where(np.arange(n_k)[None, :] > np.arange(n_q)[:, None], -np.inf, s)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return (p @ v).astype(np.float32)


def tolerance(v: np.ndarray) -> float:
    return float(np.abs(v).max()) * 2.0 ** -7 + 1e-3
