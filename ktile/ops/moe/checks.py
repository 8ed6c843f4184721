"""The checks of the grouped GEMM's and fused_moe's arguments, before anything runs: each
refusal is an InputError naming the parameter and the fix."""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from . import config

DTYPES = ("bf16", "fp16")
MAX_TOP_K = 64


def check_int32(op: str, param: str, t, hint: str) -> None:
    if not isinstance(t, torch.Tensor) or t.dtype != torch.int32 or t.dim() != 1 \
            or t.numel() == 0 or not t.is_contiguous():
        got = f"{lib.dtype_name(t)} {tuple(t.shape)}" if isinstance(t, torch.Tensor) \
            else type(t).__name__
        raise InputError(f"{op}: '{param}' must be a contiguous, non-empty 1-D int32 tensor, "
                         f"got {got}", hint=hint)


def check_top_k(op: str, top_k) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InputError(f"{op}: 'top_k' is {top_k!r}; it must be an int from 1 to {MAX_TOP_K}",
                         hint="pass topk_ids.shape[1] (1 for the second GEMM over the slots)")
    return top_k


def check_weights(op: str, x, w) -> None:
    """x [tokens, K] and w [experts, N, K] of one 16-bit dtype on one device."""
    lib.check_tensor(op, "x", x, DTYPES, ranks=(2, 2))
    lib.check_tensor(op, "w", w, DTYPES, ranks=(3, 3))
    if w.shape[2] != x.shape[1]:
        raise InputError(f"{op}: 'x' is {tuple(x.shape)} and 'w' {tuple(w.shape)}: w is "
                         f"[experts, N, K] with K = x.shape[1] = {x.shape[1]}",
                         hint="pass the experts' weights as stored, [E, out_features, "
                              "in_features]")
    if w.dtype != x.dtype:
        raise InputError(f"{op}: 'w' holds {lib.dtype_name(w)}, 'x' {lib.dtype_name(x)}; they "
                         f"must be equal", hint="convert it: w.to(x.dtype)")


def check_layout(op: str, sorted_ids, expert_ids, padded) -> int:
    """The block size of a layout from moe_align_block_size."""
    fix = "pass moe_align_block_size(topk_ids, num_experts, block_m)'s outputs"
    check_int32(op, "sorted_token_ids", sorted_ids, fix)
    check_int32(op, "expert_ids", expert_ids, fix)
    check_int32(op, "num_tokens_post_padded", padded, fix)
    block_m, rest = divmod(sorted_ids.numel(), expert_ids.numel())
    if rest or block_m not in config.BLOCK_MS:
        raise InputError(f"{op}: 'sorted_token_ids' holds {sorted_ids.numel()} slots for "
                         f"{expert_ids.numel()} 'expert_ids': blocks of {block_m} (rest "
                         f"{rest}); the kernels take blocks of "
                         f"{', '.join(map(str, config.BLOCK_MS))} slots", hint=fix)
    return block_m


def check_routed(op: str, topk_weights, slots: int, mul_routed_weight: bool, like) -> None:
    if not mul_routed_weight:
        return
    if not isinstance(topk_weights, torch.Tensor) or topk_weights.dtype != torch.float32 \
            or topk_weights.numel() != slots or not topk_weights.is_contiguous():
        got = f"{lib.dtype_name(topk_weights)} {tuple(topk_weights.shape)}" \
            if isinstance(topk_weights, torch.Tensor) else repr(topk_weights)
        raise InputError(f"{op}: mul_routed_weight=True needs 'topk_weights', a contiguous "
                         f"float32 tensor of {slots} slot weights [tokens, top_k]; got {got}",
                         hint="pass topk_weights.float().contiguous() (or "
                              "mul_routed_weight=False)")
    lib.check_same_device(op, {"x": like, "topk_weights": topk_weights})


def check_out(op: str, out, shape: tuple, x) -> None:
    if out is None:
        return
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != shape \
            or out.dtype != x.dtype or not out.is_contiguous():
        raise InputError(f"{op}: 'out' must be a contiguous {lib.dtype_name(x)} tensor of "
                         f"shape {shape}", hint=f"pass out=torch.empty({shape}, "
                                                f"dtype=x.dtype, device=x.device)")
    lib.check_same_device(op, {"x": x, "out": out})
    if lib.shares_memory(out, x):
        raise InputError(f"{op}: 'out' shares memory with 'x'; blocks would read rows others "
                         f"already wrote", hint="pass a separate out, or leave it out")
