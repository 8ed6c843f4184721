"""MoE references in float64 numpy from the 16-bit inputs, rounded where the op rounds.

`grouped_gemm`: out[t] = x[t // top_k] · w[e(t)]ᵀ (× weight[t]), one rounding. The kernel
accumulates in fp32 in another order (K tiles per warp, then the warps): tolerance K · max|x|
· max|w| · max weight · 2⁻²² plus one ulp of the largest result (bf16 2⁻⁷, fp16 2⁻¹⁰) plus
1e-3.

`fused_moe` (vLLM's fused_experts): h = x[t] · w13[e]ᵀ rounded, a = silu(h[:I]) · h[I:]
rounded, y = a · w2[e]ᵀ · weight rounded, out[t] = Σ over the token's top_k slots of y in
fp32, rounded once. The kernels round the same values but may land one ulp apart (fp32 sums
in another order), so each stage's bound feeds the next, per element: d1 = an ulp of |h| plus
GEMM1's accumulation; d2 = 1.1 · |up| · d1(gate) + |silu(gate)| · d1(up) + an ulp of |a|
(silu' ≤ 1.1); d3 = |weight| · (d2 · |w2[e]|ᵀ) + an ulp of |y| + GEMM2's accumulation; the
tolerance is the largest token's Σ of d3 over its slots plus an ulp of max|out| plus 1e-3."""
from __future__ import annotations

import numpy as np

from ...dtypes import DType

ULP = {"bf16": 2.0 ** -7, "fp16": 2.0 ** -10}


def _f64(a) -> np.ndarray:
    return np.asarray(a, np.float64)


def experts_of(topk_ids: np.ndarray) -> np.ndarray:
    return np.asarray(topk_ids).reshape(-1).astype(np.int64)


def grouped_gemm(x, w, topk_ids, weights, dtype: DType) -> np.ndarray:
    """[tokens · top_k, N]: slot t's token x[t // top_k] times its expert's w ([E, N, K]),
    one product per expert (the slots it holds)."""
    ids = np.asarray(topk_ids)
    experts, top_k = experts_of(ids), ids.shape[-1]
    x = _f64(x)
    out = np.zeros((ids.size, w.shape[1]))
    for e in np.unique(experts):         # each active expert's weights widened alone
        slots = np.flatnonzero(experts == e)
        out[slots] = x[slots // top_k] @ _f64(w[e]).T
    if weights is not None:
        out = out * _f64(weights).reshape(-1, 1)
    return dtype.round(out.astype(np.float32))


def gemm_tolerance(x, w, want, weights, dtype: str) -> float:
    scale = 1.0 if weights is None else float(np.abs(weights).max())
    accumulation = x.shape[-1] * float(np.abs(x).max()) * float(np.abs(w).max()) * 2.0 ** -22
    top = float(np.max(np.abs(want), initial=0.0))
    return accumulation * scale + top * ULP[dtype] + 1e-3


def silu(v: np.ndarray) -> np.ndarray:
    return v / (1.0 + np.exp(-v))


def fused_moe(x, w13, w2, weights, topk_ids, dtype: DType) -> tuple[np.ndarray, dict]:
    """([tokens, H] of the chain, its stages' maxima for `fused_tolerance`)."""
    h = grouped_gemm(x, w13, topk_ids, None, dtype).astype(np.float64)
    i = h.shape[-1] // 2
    act = dtype.round((silu(h[:, :i]) * h[:, i:]).astype(np.float32)).astype(np.float64)
    y = grouped_gemm(act, w2, experts_of(topk_ids).reshape(-1, 1), weights, dtype)
    top_k = np.asarray(topk_ids).shape[-1]
    out = dtype.round(y.astype(np.float64).reshape(-1, top_k, y.shape[-1]).sum(1)
                      .astype(np.float32))
    stages = {"h": h, "act": act, "y": y}
    return out, stages


def fused_tolerance(x, w13, w2, weights, topk_ids, out, stages, dtype: str) -> float:
    """The bound the module docstring states, carried elementwise through the stages."""
    h, act, y = stages["h"], stages["act"], stages["y"]
    i, ulp = h.shape[-1] // 2, ULP[dtype]
    d1 = np.abs(h) * ulp + gemm_tolerance(x, w13, np.zeros(1), None, dtype)
    d2 = 1.1 * np.abs(h[:, i:]) * d1[:, :i] + np.abs(silu(h[:, :i])) * d1[:, i:] \
        + np.abs(act) * ulp
    experts = experts_of(topk_ids)
    d3 = np.zeros_like(y, dtype=np.float64)
    for e in np.unique(experts):
        slots = np.flatnonzero(experts == e)
        d3[slots] = d2[slots] @ np.abs(_f64(w2[e])).T
    d3 = d3 * np.abs(_f64(weights)).reshape(-1, 1) + np.abs(y) * ulp \
        + gemm_tolerance(act, w2, np.zeros(1), weights, dtype)
    top_k = np.asarray(topk_ids).shape[-1]
    summed = d3.reshape(-1, top_k, d3.shape[-1]).sum(1)
    return float(summed.max() + np.abs(out).max() * ulp + 1e-3)
