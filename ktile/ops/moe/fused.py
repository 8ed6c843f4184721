"""`ktile.ops.fused_moe(x, w13, w2, topk_weights, topk_ids)`: vLLM's fused_experts (SiLU, no
bias, no quantisation): align the slots to FUSED_BLOCK_M-slot blocks (at decode one slot a
block, `config.direct`: no sort), h = the grouped GEMM with w13 [E, 2I, H] ([tokens, top_k,
2I]), a = silu_and_mul(h) over the slots, y = the grouped GEMM of a with w2 [E, H, I] over the
slots (top_k 1), each slot scaled by its routed weight, and the token's top_k rows of y summed
in fp32 (one torch kernel) and rounded once."""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from . import checks, config
from .align import direct_layout, moe_align_block_size

WEIGHT_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def check_fused(x, w13, w2, topk_weights, topk_ids) -> None:
    op = "fused_moe"
    checks.check_weights(op, x, w13)
    lib.check_tensor(op, "w2", w2, checks.DTYPES, ranks=(3, 3))
    experts, inter2, hidden = w13.shape
    if inter2 % 2 or tuple(w2.shape) != (experts, hidden, inter2 // 2) or w2.dtype != x.dtype:
        raise InputError(f"{op}: 'w13' is {tuple(w13.shape)} and 'w2' {lib.dtype_name(w2)} "
                         f"{tuple(w2.shape)}: w13 is [E, 2I, H] (gate and up), w2 [E, H, I] "
                         f"of x's dtype", hint="pass the layer's stacked expert weights as "
                                               "vLLM's FusedMoE holds them")
    if not isinstance(topk_ids, torch.Tensor) or topk_ids.dim() != 2 \
            or topk_ids.shape[0] != x.shape[0]:
        raise InputError(f"{op}: 'topk_ids' must be [tokens, top_k] with x's {x.shape[0]} "
                         f"tokens", hint="pass the router's torch.topk(...).indices")
    if not isinstance(topk_weights, torch.Tensor) or topk_weights.dtype not in WEIGHT_DTYPES \
            or tuple(topk_weights.shape) != tuple(topk_ids.shape):
        raise InputError(f"{op}: 'topk_weights' must be a float tensor of topk_ids' shape "
                         f"{tuple(topk_ids.shape)}", hint="pass the router's top-k weights")
    lib.check_same_device(op, {"x": x, "w13": w13, "w2": w2, "topk_weights": topk_weights,
                               "topk_ids": topk_ids})


def fused_moe(x, w13, w2, topk_weights, topk_ids) -> torch.Tensor:
    """[tokens, H] of x's dtype: Σ_j topk_weights[t, j] · (silu(x[t] · w13[e]ᵀ[:I]) ·
    (x[t] · w13[e]ᵀ[I:])) · w2[e]ᵀ, e = topk_ids[t, j]; the stages rounded as vLLM's
    (reference.fused_moe)."""
    check_fused(x, w13, w2, topk_weights, topk_ids)
    return stages(x, w13, w2, topk_weights, topk_ids)["out"]


def stages(x, w13, w2, topk_weights, topk_ids) -> dict:
    """fused_moe's path with its intermediates (checked arguments): h [slots, 2I], act
    [slots, I], y [slots, H] (routed), out [tokens, H]; reference.stage_errors checks each."""
    from ..activations.op import silu_and_mul
    from .op import moe_grouped_gemm
    tokens, top_k = topk_ids.shape
    layout = direct_layout(topk_ids, config.FUSED_BLOCK_M) \
        if config.direct(tokens, topk_ids.numel(), w13.shape[0]) \
        else moe_align_block_size(topk_ids, w13.shape[0], config.FUSED_BLOCK_M)
    # every slot is listed (its expert is one of w13's), so every row of h and y is written:
    # no zeros to write first
    h = x.new_empty((tokens, top_k, w13.shape[1]))
    moe_grouped_gemm(x, w13, *layout, top_k=top_k, out=h)
    act = silu_and_mul(h.view(tokens * top_k, -1))
    weights = topk_weights.to(torch.float32).contiguous()
    y = x.new_empty((tokens * top_k, 1, w2.shape[1]))
    moe_grouped_gemm(act, w2, *layout, weights, top_k=1, mul_routed_weight=True, out=y)
    # one kernel: a 16-bit sum accumulates in fp32 and rounds once (torch's acc type)
    out = y.view(tokens, top_k, -1).sum(1)
    return {"h": h.view(tokens * top_k, -1), "act": act, "y": y.view(tokens * top_k, -1),
            "out": out}
