"""Rotary embedding reference (vLLM's `rotary_embedding(positions, query, key, head_size,
cos_sin_cache, is_neox)`; facts from vLLM's `RotaryEmbedding.forward_native`, our own code).

query `[tokens, heads · head_size]`, the cache `[max_position, rot_dim]` (cos of the rot_dim / 2
angles, then their sin). Only the first rot_dim columns of each head rotate:
- NeoX: x1 = [0, rot/2), x2 = [rot/2, rot); out = [x1·cos − x2·sin, x2·cos + x1·sin];
- GPT-J: pairs (x[2i], x[2i+1]) → (x[2i]·cos_i − x[2i+1]·sin_i, x[2i+1]·cos_i + x[2i]·sin_i).
Computed in float32 from the inputs, rounded once to the input's dtype.

Tolerance: one rounding to the output dtype, relative to the output's magnitude (`tolerance`):
the kernel may fuse a multiply-add and round once less than numpy does.
"""
from __future__ import annotations

import numpy as np


def rotary(positions, x, cache, head_size: int, is_neox: bool) -> np.ndarray:
    """x (float32 `[tokens, heads · head_size]`) rotated, float32 (round it to the dtype)."""
    xs = np.asarray(x, np.float32)
    tokens = xs.shape[0]
    cache = np.asarray(cache, np.float32)
    rot = cache.shape[-1]
    heads = xs.reshape(tokens, -1, head_size).copy()
    cos, sin = np.split(cache[np.asarray(positions).reshape(-1)][:, None, :], 2, axis=-1)
    part = heads[..., :rot]
    if is_neox:
        x1, x2 = part[..., :rot // 2], part[..., rot // 2:]
        rotated = np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    else:
        x1, x2 = part[..., 0::2], part[..., 1::2]
        rotated = np.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
        rotated = rotated.reshape(part.shape)
    heads[..., :rot] = rotated
    return heads.reshape(xs.shape)


def cos_sin_cache(max_position: int, rot_dim: int, base: float = 10000.0) -> np.ndarray:
    """`[max_position, rot_dim]` float32: cos(p·θ_i) | sin(p·θ_i), θ_i = base^(−2i / rot_dim)."""
    theta = base ** (-np.arange(0, rot_dim, 2, dtype=np.float64) / rot_dim)
    angles = np.arange(max_position, dtype=np.float64)[:, None] * theta[None, :]
    return np.concatenate([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)


def tolerance(want, dtype_bits: int = 8) -> float:
    """One rounding at a dtype of `dtype_bits` significand bits (bf16: 8) of the output's
    magnitude, plus a little for a fused multiply-add."""
    return float(np.max(np.abs(want), initial=0.0)) * 2.0 ** -(dtype_bits - 1) + 1e-3
