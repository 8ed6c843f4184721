"""`ktile.ops.scaled_dot_product_attention(q, k, v, *, is_causal=False, scale=None,
enable_gqa=False)`: `torch.nn.functional.scaled_dot_product_attention`'s forward for q [B, H,
L, D], k and v [B, H_kv, S, D] (no mask, no dropout), registered as
`torch.ops.ktile.scaled_dot_product_attention`.

bf16 or fp16, D 64 or 128; query head h reads key/value head h // (H / H_kv) (GQA: H_kv < H
needs enable_gqa=True, as torch). is_causal masks key i for query j < i (torch's top-left
form when L != S). Scores, softmax and the sum are fp32; P is rounded to the input dtype
before P·V (flash attention's rounding).

Routes: on sm_90a `attention_ws` (prefill_ws.py), one build per (D, causal). The kernel
reads V as it is (O += P·V by wgmma's transposed-B form); pinned with VT=True it takes Vᵀ
[B, H_kv, D, S'] instead (values_for makes it: one torch copy a call). The CPU interpreter
runs the same kernel when KTILE_TARGET=sm_90a (it then traces the warp-specialised
protocol). The AMD targets (and the interpreter for them) run `attention_amd` (prefill_amd.py).
"""
from __future__ import annotations

import math

import torch

from ...errors import InputError
from .. import _library as lib
from .._library import Route, RoutingTable
from ..elementwise.launch import run_kernel
from . import prefill_amd, prefill_ws

NAME = "scaled_dot_product_attention"
DTYPES = ("bf16", "fp16")
HEAD_DIMS = (64, 128)
# AMD (prefill_amd.py, docs/attention.md "AMD"): K and Vᵀ tiles double-buffered in LDS, 32
# keys (64 spill SGPRs on gfx950); CDNA 2 waves of 32 query rows, RDNA 4 of 16 (wave32 holds
# half the registers a row); gfx1100 at D 128 reads Q from LDS and takes 16 keys on 2 waves
# (otherwise it spills: WMMA operands are replicated across half-waves)
AMD_TARGETS = ("gfx950", "gfx942", "gfx1100", "gfx1201")
AMD_SHAPES = [  # D, BK, ROWS, WARPS, Q_LDS, targets
    (64, 32, 32, 2, False, ("gfx950", "gfx942")),
    (128, 32, 32, 2, False, ("gfx950", "gfx942")),
    (64, 32, 16, 4, False, ("gfx1100", "gfx1201")),
    (128, 32, 16, 4, False, ("gfx1201",)),
    (128, 16, 16, 2, True, ("gfx1100",))]
AMD_ROUTES = [
    Route("attention_amd", {"D": d, "BK": bk, "ROWS": rows, "WARPS": warps, "CAUSAL": causal,
                            "Q_LDS": q_lds}, targets=targets, sample=(64, d))
    for d, bk, rows, warps, q_lds, targets in AMD_SHAPES for causal in (False, True)]
# 3 stages: a stage is released one step late (step k's P·V wgmma reads its Vᵀ until step
# k+1's wait: docs/pipelines.md, "Release"), so with 2 the producer could not load step k+1
# while the consumers compute step k; 3 overlaps one copy with each step (96 KiB at D 128)
# VT False: V read as it lies ([S, D] tiles, `p @ sv`), no Vᵀ copy. LONGEST_FIRST (causal):
# the grid's first blocks take the last query rows, which read the most key tiles, so the
# short ones fill the last wave (FlashAttention-3's order); a permutation of the same blocks.
# OVERLAP (P·V of the older tile under the softmax) was 7-15% slower on the H200: ptxas waits
# for that P·V before the exp2s (docs/attention.md). EXP2_FAST and FUSED_SCALE (fewer softmax
# instructions) are routed: on the H200 (2026-12-02, eighth session, round 1.6,
# docs/results/h200_2026-12-02_s8_r16) they took every --quick shape from 0.53-0.73x SDPA to
# 0.59-0.81x (n 4096 d 128: 2192 -> 1996 us full, 1353 -> 1142 causal). Pinnable only, slower
# there: PINGPONG 1 / 2 (the consumer warpgroups taking turns at their wgmmas on named
# barriers: 5-15% slower, also with EXP2_FAST), BM 192 / WARPS 16 (D 64: 2-5% slower)
TABLE = RoutingTable([
    Route("attention_ws", {"D": d, "BM": 128, "BK": 64, "STAGES": 3, "CAUSAL": causal,
                           "VT": False, "LONGEST_FIRST": causal, "OVERLAP": False,
                           "PINGPONG": 0, "WARPS": 12, "EXP2_FAST": True,
                           "FUSED_SCALE": True},
          targets=("sm_90a",), sample=(128, d))
    for d in HEAD_DIMS for causal in (False, True)] + AMD_ROUTES)


def route_for(d: int, causal: bool, rows: int, target: str | None) -> Route:
    """The table's first route for head dim `d` and `causal` on `target` (None: the CPU
    interpreter, routed as KTILE_TARGET's target); refused naming the target otherwise."""
    pin = TABLE.pinned
    if pin is not None:
        return pin
    for route in TABLE.measured.get(target, []) + TABLE.routes:
        c = route.constants
        if c["D"] == d and c["CAUSAL"] == causal and route.fits(rows, d, target):
            return route
    where = target or "the CPU interpreter (tracing for its default target)"
    raise InputError(f"{NAME}: no attention kernel for {where} yet: the prefill kernel is "
                     f"sm_90a's (wgmma, TMA, warp specialisation; issue #12)",
                     hint="run on an H100/H200, or on the CPU with KTILE_TARGET=sm_90a; "
                          "elsewhere use torch.nn.functional.scaled_dot_product_attention")


def values_for(v: torch.Tensor, constants: dict) -> torch.Tensor:
    """What the kernel at `constants` reads as v: v itself with VT False (attention_ws's
    routes), else its Vᵀ copy (VT True, or a kernel with no VT constant: they read Vᵀ)."""
    return transposed_values(v) if constants.get("VT", True) else v


def keys_for(k: torch.Tensor, scale: float, constants: dict) -> tuple[torch.Tensor, float]:
    """k and the scale as the kernel at `constants` takes them: with FUSED_SCALE (the row max
    taken of unscaled scores) the scale must be ≥ 0, so a negative one is moved into k
    (q·(-k)ᵀ·|scale|: negation is exact); otherwise as given."""
    if constants.get("FUSED_SCALE") and scale < 0:
        return -k, -scale
    return k, scale


def transposed_values(v: torch.Tensor) -> torch.Tensor:
    """Vᵀ [B, H_kv, D, S'] with S' = S rounded up to 8 (16-byte rows for TMA), zeros past S
    (a key past S has P = 0 exactly, and 0 × garbage could be NaN)."""
    b, h, s, d = v.shape
    padded = -(-s // 8) * 8
    vt = (v.new_zeros if padded != s else v.new_empty)((b, h, d, padded))
    vt[..., :s].copy_(v.transpose(-1, -2))
    return vt


def _sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, is_causal: bool,
          scale: float) -> torch.Tensor:
    out = torch.empty_like(q)
    target = lib.target_of(q)
    route = route_for(q.shape[-1], is_causal, q.shape[-2], target)
    kernel = OP.kernel(route, lib.kt_dtype(q))
    k, scale = keys_for(k, scale, route.constants)
    run_kernel(kernel, q, k, values_for(v, route.constants), out, scale, target=target,
               **route.constants)
    return out


def _sdpa_fake(q, k, v, is_causal, scale):
    return torch.empty_like(q)


_FUNCTIONAL = lib.define("ktile::scaled_dot_product_attention", _sdpa, _sdpa_fake)


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> torch.Tensor:
    """softmax(q·kᵀ·scale, causal-masked) · v, [B, H, L, D] of q's dtype."""
    check(q, k, v, enable_gqa)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    elif not isinstance(scale, (int, float)) or isinstance(scale, bool) or \
            not math.isfinite(scale):
        raise InputError(f"{NAME}: 'scale' must be a finite number or None, got {scale!r}",
                         hint="leave it out for 1 / sqrt(D)")
    return _FUNCTIONAL(q, k, v, bool(is_causal), float(scale))


def check(q, k, v, enable_gqa: bool) -> None:
    """q, k, v: contiguous 4-D tensors of one dtype and device, [B, H, L, D] and [B, H_kv, S,
    D] twice, D 64 or 128, H a multiple of H_kv (and enable_gqa when they differ)."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        lib.check_tensor(NAME, name, t, DTYPES, ranks=(4, 4))
    lib.check_same_device(NAME, {"q": q, "k": k, "v": v})
    lib.check_like(NAME, "v", v, k, "k")
    if k.dtype != q.dtype:
        raise InputError(f"{NAME}: 'k' holds {lib.dtype_name(k)}, 'q' {lib.dtype_name(q)}; "
                         f"they must be equal", hint="convert k and v to q's dtype")
    b, h, _, d = q.shape
    if k.shape[0] != b or k.shape[-1] != d:
        raise InputError(f"{NAME}: 'k' has shape {tuple(k.shape)}, 'q' {tuple(q.shape)}; "
                         f"their batch and head dim must be equal",
                         hint="pass q [B, H, L, D] and k, v [B, H_kv, S, D]")
    if d not in HEAD_DIMS:
        raise InputError(f"{NAME}: head dim {d} is not one of {HEAD_DIMS}",
                         hint="use torch.nn.functional.scaled_dot_product_attention for "
                              "other head dims (256 is future work: issue #12)")
    if h % k.shape[1]:
        raise InputError(f"{NAME}: q's {h} heads are not a multiple of k's {k.shape[1]}",
                         hint="grouped-query attention needs H % H_kv == 0")
    if h != k.shape[1] and not enable_gqa:
        raise InputError(f"{NAME}: q has {h} heads and k {k.shape[1]}; torch needs "
                         f"enable_gqa=True for grouped-query attention",
                         hint="pass enable_gqa=True")


OP = lib.Op(NAME, {NAME: scaled_dot_product_attention}, {"attention_ws": prefill_ws.attention_ws,
                                                  "attention_amd": prefill_amd.attention_amd},
            DTYPES, TABLE, "ktile.ops.attention.reference")
OPS = [OP]
