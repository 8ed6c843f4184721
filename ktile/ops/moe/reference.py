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
tolerance is the largest token's Σ of d3 over its slots plus an ulp of max|out| plus 1e-3.
That bound is loose at large layers (Qwen3-30B-A3B: about a third of max|out|): `stage_errors`
is the tight check, each stage against its float64 reference from the previous stage's actual
output, per element: one ulp of the reference's magnitude plus fp32 accumulation, `_depth`
roundings of 2⁻²⁴ relative to Σ|a|·|b| over the sum (an MMA's BK products, the K tiles of a
warp in sequence, the warps' tree; 64 + K / 16 bounds every shipped route)."""
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


def _sum_bound(x, w, topk_ids) -> np.ndarray:
    """[slots, N]: Σ_k |x[t // top_k, k]| · |w[e(t), n, k]|, the scale of a slot's fp32 sum."""
    ids = np.asarray(topk_ids)
    experts, top_k = experts_of(ids), ids.shape[-1]
    x = np.abs(_f64(x))
    out = np.zeros((ids.size, w.shape[1]))
    for e in np.unique(experts):
        slots = np.flatnonzero(experts == e)
        out[slots] = x[slots // top_k] @ np.abs(_f64(w[e])).T
    return out


def _depth(k: int) -> int:
    return 64 + -(-k // 16)


def _stage(name, got, want, bound, ulp) -> dict:
    """Per element |got - want| <= ulp · |want| + bound; the worst element's numbers."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    tol = np.abs(want) * ulp + bound
    excess = np.abs(got - want) - tol
    worst = np.unravel_index(np.argmax(excess), excess.shape)
    return {"stage": name, "ok": bool((excess <= 0).all()), "err": float(np.abs(got - want).max()),
            "worst": (float(got[worst]), float(want[worst]), float(tol[worst])),
            "tol_max": float(tol.max()), "want_max": float(np.abs(want).max())}


def stage_errors(x, w13, w2, weights, topk_ids, got: dict, dtype: DType) -> list[dict]:
    """Each stage of fused_moe (`got`: fused.stages' h [slots, 2I], act [slots, I], y [slots,
    H], out [tokens, H], as float arrays) against its reference from the previous stage's
    actual output; one dict per stage (`ok`, the worst element, the largest tolerance)."""
    ulp, u = ULP[dtype.name], 2.0 ** -24
    ids = np.asarray(topk_ids)
    top_k = ids.shape[-1]
    slot_ids = experts_of(ids).reshape(-1, 1)
    h = grouped_gemm(x, w13, ids, None, dtype)
    checks = [_stage("h = x · w13ᵀ", got["h"], h,
                     _depth(x.shape[-1]) * u * _sum_bound(x, w13, ids), ulp)]
    h_got = _f64(got["h"])
    i = h_got.shape[-1] // 2
    g, up = h_got[:, :i], h_got[:, i:]
    act = dtype.round((silu(g) * up).astype(np.float32))
    checks.append(_stage("act = silu(gate) · up", got["act"], act,
                         1e-6 * np.abs(silu(g) * up) + 1e-6, ulp))
    a_got = _f64(got["act"])
    y = grouped_gemm(a_got, w2, slot_ids, weights, dtype)
    bound = _sum_bound(a_got, w2, slot_ids) * np.abs(_f64(weights)).reshape(-1, 1)
    checks.append(_stage("y = weight · act · w2ᵀ", got["y"], y,
                         _depth(a_got.shape[-1]) * u * bound, ulp))
    y_got = _f64(got["y"]).reshape(-1, top_k, w2.shape[1])
    out = dtype.round(y_got.sum(1).astype(np.float32))
    checks.append(_stage("out = Σ_top_k y", got["out"], out,
                         top_k * u * np.abs(y_got).sum(1), ulp))
    return checks
