"""`moe_align_block_size(topk_ids, num_experts, block_m)`: vLLM's fused-MoE layout, in torch
(device ops only: no host synchronisation, so it runs inside a CUDA-graph capture).

Slot t = token · top_k + j (topk_ids' flattened index) goes to its expert's run; each expert's
run holds its slots in slot order, padded to a multiple of block_m with the id
`topk_ids.numel()` (past every slot); the runs follow in expert order. `expert_ids[b]` is the
expert of block b (block_m slots), -1 past the last run; `num_tokens_post_padded` ([1]) the
runs' total length. The arrays have vLLM's capacity, fixed by the shapes: numel + E ·
(block_m - 1), or numel · block_m where there are fewer slots than experts, rounded up to
whole blocks."""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from . import config


def capacity(slots: int, num_experts: int, block_m: int) -> int:
    padded = slots + num_experts * (block_m - 1)
    if slots < num_experts:
        padded = min(slots * block_m, padded)
    return -(-padded // block_m) * block_m


def check_align(topk_ids, num_experts, block_m) -> None:
    op = "moe_align_block_size"
    if not isinstance(topk_ids, torch.Tensor) or topk_ids.dtype not in (torch.int32, torch.int64):
        raise InputError(f"{op}: 'topk_ids' must be an int32 or int64 tensor [tokens, top_k], "
                         f"got {getattr(topk_ids, 'dtype', type(topk_ids).__name__)}",
                         hint="pass the router's top-k expert indices (torch.topk(...).indices)")
    if topk_ids.dim() != 2 or topk_ids.numel() == 0:
        raise InputError(f"{op}: 'topk_ids' has shape {tuple(topk_ids.shape)}; it must be a "
                         f"non-empty [tokens, top_k]",
                         hint="reshape it: topk_ids.view(tokens, top_k)")
    if isinstance(num_experts, bool) or not isinstance(num_experts, int) or num_experts < 1:
        raise InputError(f"{op}: 'num_experts' is {num_experts!r}; it must be an int >= 1",
                         hint="pass the layer's expert count, w.shape[0]")
    if block_m not in config.BLOCK_MS:
        raise InputError(f"{op}: 'block_m' is {block_m!r}; the grouped GEMM's kernels take "
                         f"blocks of {', '.join(map(str, config.BLOCK_MS))} slots",
                         hint=f"pass block_m={config.FUSED_BLOCK_M}")


def moe_align_block_size(topk_ids: torch.Tensor, num_experts: int, block_m: int):
    """(sorted_token_ids int32 [capacity], expert_ids int32 [capacity / block_m],
    num_tokens_post_padded int32 [1]) for topk_ids [tokens, top_k] of experts in
    [0, num_experts) (an id outside that range is not checked: it would need a device sync)."""
    check_align(topk_ids, num_experts, block_m)
    flat = topk_ids.reshape(-1).long()
    slots, dev = flat.numel(), flat.device
    # not torch.bincount: on CUDA it reads the largest id back to the host (a sync, and no
    # CUDA-graph capture)
    counts = torch.zeros(num_experts, dtype=torch.long, device=dev).scatter_add_(
        0, flat, torch.ones_like(flat))
    padded = (counts + block_m - 1) // block_m * block_m
    ends = torch.cumsum(padded, 0)
    order = torch.argsort(flat, stable=True)          # slots grouped by expert, in slot order
    expert_of = flat[order]
    rank = torch.arange(slots, device=dev) - (torch.cumsum(counts, 0) - counts)[expert_of]
    cap = capacity(slots, num_experts, block_m)
    sorted_ids = torch.full((cap,), slots, dtype=torch.int32, device=dev)
    sorted_ids[(ends - padded)[expert_of] + rank] = order.to(torch.int32)
    starts = torch.arange(0, cap, block_m, device=dev)
    experts = torch.searchsorted(ends, starts, right=True)
    expert_ids = torch.where(starts < ends[-1], experts, -1).to(torch.int32)
    return sorted_ids, expert_ids, ends[-1:].to(torch.int32)


_DIRECT: dict = {}      # (slots, block_m, device) -> (sorted_ids, num_tokens_post_padded)


def direct_layout(topk_ids: torch.Tensor, block_m: int):
    """A layout of one slot per block (slot b heads block b, the rest padding; expert_ids =
    topk_ids flattened): no sort, at most one kernel (topk_ids to int32), for the few slots of
    a decode step. Each block reads its expert's weights, so an expert that two slots share
    is read twice (fused_moe takes it where that is rare: `config.direct`). The constant
    arrays are made once per (slots, block_m, device), except inside a CUDA-graph capture
    (its kernels run only at replay: made fresh there)."""
    flat = topk_ids.reshape(-1)
    slots, dev = flat.numel(), flat.device
    key = (slots, block_m, str(dev))
    made = _DIRECT.get(key)
    if made is None:
        sorted_ids = torch.full((slots, block_m), slots, dtype=torch.int32, device=dev)
        sorted_ids[:, 0] = torch.arange(slots, dtype=torch.int32, device=dev)
        made = (sorted_ids.view(-1), torch.full((1,), slots * block_m, dtype=torch.int32,
                                                device=dev))
        if not (dev.type == "cuda" and torch.cuda.is_current_stream_capturing()):
            _DIRECT[key] = made
    return made[0], flat.to(torch.int32), made[1]


def reference(topk_ids, num_experts: int, block_m: int):
    """The layout from its definition, in Python lists (tests compare the op with it)."""
    flat = [int(v) for v in topk_ids.reshape(-1).tolist()]
    sorted_ids, expert_ids = [], []
    for e in range(num_experts):
        run = [t for t, v in enumerate(flat) if v == e]
        run += [len(flat)] * (-len(run) % block_m)
        sorted_ids += run
        expert_ids += [e] * (len(run) // block_m)
    return sorted_ids, expert_ids, len(sorted_ids)
