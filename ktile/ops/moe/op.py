"""`ktile.ops.moe_align_block_size`, `ktile.ops.moe_grouped_gemm` and `ktile.ops.fused_moe`:
vLLM's fused-MoE layout and kernels' semantics (docs/ops.md, "MoE"). The grouped GEMM is
registered as `torch.ops.ktile.moe_grouped_gemm` and its `_out` form."""
from __future__ import annotations

from typing import Optional

import torch

from .. import _library as lib
from . import checks, config, kernels
from .align import moe_align_block_size
from .fused import fused_moe


def launch(x, w, sorted_ids, expert_ids, padded, weights, top_k: int, routed: bool,
           out) -> None:
    """Run the routed kernel for out [tokens, top_k, N] (docstring of kernels.py)."""
    slots, n = x.shape[0] * top_k, w.shape[1]
    block_m = sorted_ids.numel() // expert_ids.numel()
    route = config.choose(slots, n, block_m, lib.target_of(x))
    kernel = kernels.moe_gemm(lib.kt_dtype(x))
    if weights is None:                      # not read (ROUTED 0): a shape the kernel accepts
        weights = torch.empty((slots, 1), dtype=torch.float32, device=x.device)
    lib.run(kernel, x, w, sorted_ids.view(1, -1), expert_ids.view(1, -1), padded.view(1, 1),
            weights.view(slots, 1), out.view(slots, n),
            **{**route.constants, "TOP_K": top_k, "ROUTED": int(routed)})


def _gemm(x: torch.Tensor, w: torch.Tensor, sorted_ids: torch.Tensor,
          expert_ids: torch.Tensor, padded: torch.Tensor, weights: Optional[torch.Tensor],
          top_k: int, routed: bool) -> torch.Tensor:
    out = torch.zeros((x.shape[0], top_k, w.shape[1]), dtype=x.dtype, device=x.device)
    launch(x, w, sorted_ids, expert_ids, padded, weights, top_k, routed, out)
    return out


def _gemm_fake(x, w, sorted_ids, expert_ids, padded, weights, top_k, routed):
    return x.new_empty((x.shape[0], top_k, w.shape[1]))


def _gemm_out(x: torch.Tensor, w: torch.Tensor, sorted_ids: torch.Tensor,
              expert_ids: torch.Tensor, padded: torch.Tensor, weights: Optional[torch.Tensor],
              top_k: int, routed: bool, out: torch.Tensor) -> None:
    launch(x, w, sorted_ids, expert_ids, padded, weights, top_k, routed, out)


def _none(*args):
    return None


FUNCTIONAL = lib.define("ktile::moe_grouped_gemm", _gemm, _gemm_fake)
OUT = lib.define("ktile::moe_grouped_gemm_out", _gemm_out, _none, mutates_args=("out",))


def moe_grouped_gemm(x, w, sorted_token_ids, expert_ids, num_tokens_post_padded,
                     topk_weights=None, *, top_k: int, mul_routed_weight: bool = False,
                     out=None) -> torch.Tensor:
    """out [tokens, top_k, N] (x's dtype): for every slot t = token · top_k + j the layout
    lists, out[token, j] = x[token] · w[expert]ᵀ (× topk_weights[token, j] in fp32 when
    `mul_routed_weight`), accumulated in fp32 and rounded once. x [tokens, K], w [experts, N,
    K] (bf16 or fp16); the layout is `moe_align_block_size`'s (blocks of 16, 32 or 64 slots).
    A slot the layout does not list (an expert of id -1 in expert_ids) is left as it was:
    zeros in a new out, untouched in a given one."""
    op = "moe_grouped_gemm"
    checks.check_weights(op, x, w)
    checks.check_layout(op, sorted_token_ids, expert_ids, num_tokens_post_padded)
    top_k = checks.check_top_k(op, top_k)
    slots = x.shape[0] * top_k
    checks.check_routed(op, topk_weights, slots, bool(mul_routed_weight), x)
    weights = topk_weights if mul_routed_weight else None
    lib.check_same_device(op, {"x": x, "w": w, "sorted_token_ids": sorted_token_ids,
                               "expert_ids": expert_ids,
                               "num_tokens_post_padded": num_tokens_post_padded})
    args = (x, w, sorted_token_ids, expert_ids, num_tokens_post_padded, weights, top_k,
            bool(mul_routed_weight))
    if out is None:
        return FUNCTIONAL(*args)
    checks.check_out(op, out, (x.shape[0], top_k, w.shape[1]), x)
    OUT(*args, out)
    return out


CASE_K = 72           # not a multiple of BK: the last K tile is ragged
CASE_EXPERTS, CASE_TOP_K = 8, 2


def case(rows: int, cols: int, dtype: str, device: str = "cpu") -> tuple[float, float]:
    """(max error, tolerance) of moe_grouped_gemm against the reference: `rows` tokens,
    N = `cols`, K = CASE_K, CASE_EXPERTS experts, top-CASE_TOP_K routing (seeded), aligned to
    the pinned route's block (else 16), the routed weights applied where the pinned route
    applies them (else always)."""
    from ... import dtypes
    from .reference import gemm_tolerance, grouped_gemm
    pinned = config.TABLE.pinned
    block_m = pinned.constants["BM"] if pinned is not None else config.FUSED_BLOCK_M
    routed = bool(pinned.constants["ROUTED"]) if pinned is not None else True
    x = lib.random((rows, CASE_K), 41, dtype, device)
    w = lib.random((CASE_EXPERTS, cols, CASE_K), 42, dtype, device)
    gen = torch.Generator().manual_seed(43)
    ids = torch.rand(rows, CASE_EXPERTS, generator=gen).argsort(1)[:, :CASE_TOP_K]
    weights = torch.rand(rows, CASE_TOP_K, generator=gen)
    layout = moe_align_block_size(ids.to(device), CASE_EXPERTS, block_m)
    got = moe_grouped_gemm(x, w, *layout, weights.to(device), top_k=CASE_TOP_K,
                           mul_routed_weight=routed)
    xn, wn = x.float().cpu().numpy(), w.float().cpu().numpy()
    wts = weights.numpy() if routed else None
    want = grouped_gemm(xn, wn, ids.numpy(), wts, getattr(dtypes, dtype))
    return lib.max_error(got.view(-1, cols), want), gemm_tolerance(xn, wn, want, wts, dtype)


OP = lib.Op("moe_grouped_gemm", {"moe_align_block_size": moe_align_block_size,
                                 "moe_grouped_gemm": moe_grouped_gemm, "fused_moe": fused_moe},
            kernels.KERNELS, checks.DTYPES, config.TABLE, "ktile.ops.moe.reference", case=case)
OPS = [OP]
