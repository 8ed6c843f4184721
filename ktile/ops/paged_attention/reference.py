"""Paged decode attention reference, in float64: for sequence s and query head h, the keys and
values of tokens [0, seq_lens[s]) gathered from the pages block_tables[s] names (token t in
page block_tables[s][t // 16], row t % 16) at kv head h // (heads / kv_heads), then
softmax(q · kᵀ · scale) · v. A sequence of length 0 gives zeros.

Tolerance (`tolerance`): 2⁻⁷ of max|V| plus 1e-3, as the prefill kernel's: the kernel rounds
the probabilities to bf16/fp16 before P·V (flash attention's rounding), accumulates in fp32,
and rounds the output once to the input dtype."""
from __future__ import annotations

import numpy as np


def gather_pages(cache: np.ndarray, table: np.ndarray, length: int) -> np.ndarray:
    """Tokens [0, length) of one sequence: `[length, kv_heads, head_size]`."""
    block_size = cache.shape[1]
    pages = -(-length // block_size)
    return np.concatenate([cache[table[i]] for i in range(pages)], axis=0)[:length] \
        if pages else cache[:0, 0]


def paged_decode(query, key_cache, value_cache, block_tables, seq_lens,
                 scale: float | None = None) -> np.ndarray:
    q = np.asarray(query, np.float64)
    kc, vc = np.asarray(key_cache, np.float64), np.asarray(value_cache, np.float64)
    seqs, heads, d = q.shape
    group = heads // kc.shape[2]
    scale = 1.0 / np.sqrt(d) if scale is None else scale
    out = np.zeros((seqs, heads, d))
    for s in range(seqs):
        length = int(seq_lens[s])
        if length == 0:
            continue
        k = np.repeat(gather_pages(kc, block_tables[s], length), group, axis=1)   # [L, H, D]
        v = np.repeat(gather_pages(vc, block_tables[s], length), group, axis=1)
        scores = np.einsum("hd,lhd->hl", q[s], k) * scale
        p = np.exp(scores - scores.max(axis=-1, keepdims=True))
        out[s] = np.einsum("hl,lhd->hd", p / p.sum(axis=-1, keepdims=True), v)
    return out.astype(np.float32)


def tolerance(value_cache) -> float:
    return float(np.abs(np.asarray(value_cache, np.float64)).max()) * 2.0 ** -7 + 1e-3
