"""KV-cache write reference: cache[slots[t]] = new[t] for every t with a slot ≥ 0 (a negative
slot is padding and writes nothing). Exact (tolerance 0)."""
from __future__ import annotations

import numpy as np


def kv_write(cache: np.ndarray, new: np.ndarray, slots: np.ndarray) -> np.ndarray:
    out = np.array(cache, np.float32, copy=True)
    for t, slot in enumerate(np.asarray(slots).reshape(-1)):
        if 0 <= slot < out.shape[0]:
            out[slot] = new[t]
    return out
