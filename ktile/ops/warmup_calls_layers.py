"""Warm-up's calls of the attention, MoE and quantised-GEMM ops (`CALLS` in warmup_calls.py
takes them in): how to call each at a problem, and the targets where its table routes.

Problems, as the ops route on them:
- scaled_dot_product_attention[_causal]: (L, D): q [1, heads, L, D], k and v [1, kv heads, L,
  D] (self-attention of one prefill sequence; enable_gqa);
- paged_attention_decode: (seqs, context): one query token per sequence, a block table of
  context / 16 pages (context rounded up to 16);
- moe_align_block_size: (tokens, experts); moe_grouped_gemm[_block32][_routed]: (tokens, N,
  K) over experts x top-k slots; fused_moe: (tokens, hidden) with the model's experts, top-k
  and expert width;
- scaled_mm[_rowwise][_bias] and scaled_mm_fast: (M, N, K), e4m3 operands, the output in the
  warm-up dtype; awq_gemm: (M, N, K); awq_dequantize: (K, N).

`sizes` (the model's, or {} for the tuner and a shipped table's check) give heads, kv heads,
head_dim, experts, top-k, the expert width and K (`inner`); each has a default, chosen so that
with {} the call's (rows, cols) are the table's: one kv head (paged decode's rows are seqs x
kv heads), top-1 (the grouped GEMM's are tokens x top-k), K a valid multiple (16 for fp8, 128
for AWQ). Index tensors are zeros or in range (page 0, experts taken in turn); values never
matter to warm-up, which runs nothing."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

ATTENTION_TARGETS = ("sm_90a", "gfx1100", "gfx1201", "gfx942", "gfx950")
PAGED_TARGETS = ("sm_90a", "gfx1100", "gfx1201")      # gfx942 / gfx950: no route (op.py)
FP8_TARGETS = ("sm_90a", "gfx950")
FP8_BIAS_TARGETS = ("sm_90a",)                        # gfx950's bias build spills (config.py)
HEAD_DIMS = (64, 128)                                 # attention's and paged decode's
PAGE = 16                                             # paged decode's block of tokens
AWQ_GROUP = 128


@dataclass(frozen=True)
class LayerCall:          # CALLS of warmup_calls.py holds each as an OpCall
    """As warmup_calls.OpCall, with keyword arguments (`keywords(sizes)`) and the targets
    where the op routes this form (None: every target)."""
    name: str
    function: str
    op: str
    make: Callable[..., tuple]
    inner: bool = False
    keywords: Callable[[dict], dict] | None = None
    targets: tuple[str, ...] | None = None


def _empty(shape, dtype, device):
    import torch
    return torch.empty(shape, dtype=dtype, device=device)


def _heads(sizes: dict) -> tuple[int, int]:
    """(heads, kv heads): the model's (kv heads default heads), else 4 query heads a kv head
    (one kv head when neither is given)."""
    kv_heads = sizes.get("num_kv_heads")
    heads = sizes.get("num_heads", 4 * (kv_heads or 1))
    return heads, kv_heads or (heads if "num_heads" in sizes else 1)


def _attention(rows, cols, dtype, sizes, device="cpu"):
    heads, kv_heads = _heads(sizes)
    return (_empty((1, heads, rows, cols), dtype, device),
            _empty((1, kv_heads, rows, cols), dtype, device),
            _empty((1, kv_heads, rows, cols), dtype, device))


def _paged(rows, cols, dtype, sizes, device="cpu"):
    import torch
    heads, kv_heads = _heads(sizes)
    head, pages = sizes.get("head_dim", 128), -(-cols // PAGE)
    cache = (pages, PAGE, kv_heads, head)
    return (_empty((rows, heads, head), dtype, device), _empty(cache, dtype, device),
            _empty(cache, dtype, device),
            torch.zeros((rows, pages), dtype=torch.int32, device=device),
            torch.full((rows,), cols, dtype=torch.int32, device=device))


def _moe_sizes(sizes: dict) -> tuple[int, int]:
    return sizes.get("num_experts", 8), sizes.get("top_k", 1)


def _topk_ids(tokens: int, experts: int, top_k: int, device):
    """Experts taken in turn: a token's top_k are distinct where top_k <= experts."""
    import torch
    return (torch.arange(tokens * top_k, device=device) % experts).view(tokens, top_k)


def _align(rows, cols, dtype, sizes, device="cpu"):
    _, top_k = _moe_sizes(sizes)
    return _topk_ids(rows, cols, top_k, device), cols, 16


def _grouped_of(block_m: int, routed: bool):
    def make(rows, cols, dtype, sizes, device="cpu"):
        import torch
        from .moe.align import moe_align_block_size
        experts, top_k = _moe_sizes(sizes)
        inner = sizes.get("inner") or cols
        layout = moe_align_block_size(_topk_ids(rows, experts, top_k, device), experts,
                                      block_m)
        weights = torch.zeros((rows, top_k), dtype=torch.float32, device=device)
        return (_empty((rows, inner), dtype, device), _empty((experts, cols, inner), dtype, device),
                *layout, weights if routed else None)
    return make


def _grouped_keywords(routed: bool):
    return lambda sizes: {"top_k": _moe_sizes(sizes)[1], "mul_routed_weight": routed}


def _fused_moe(rows, cols, dtype, sizes, device="cpu"):
    import torch
    experts, top_k = _moe_sizes(sizes)
    inter = sizes.get("moe_intermediate_size") or cols
    return (_empty((rows, cols), dtype, device), _empty((experts, 2 * inter, cols), dtype, device),
            _empty((experts, cols, inter), dtype, device),
            torch.zeros((rows, top_k), dtype=torch.float32, device=device),
            _topk_ids(rows, experts, top_k, device))


def _scaled_mm_of(rowwise: bool, bias: bool):
    """a [M, K] e4m3, b = w.t() of w [N, K], scales per tensor or per token / channel, a bias
    [N] of the output dtype; out_dtype the warm-up dtype."""
    def make(rows, cols, dtype, sizes, device="cpu"):
        import torch
        inner = sizes.get("inner") or -(-cols // 16) * 16
        fp8 = torch.float8_e4m3fn
        scales = ((rows, 1), (1, cols)) if rowwise else ((1,), (1,))
        return (_empty((rows, inner), fp8, device), _empty((cols, inner), fp8, device).t(),
                torch.ones(scales[0], dtype=torch.float32, device=device),
                torch.ones(scales[1], dtype=torch.float32, device=device),
                torch.zeros((cols,), dtype=dtype, device=device) if bias else None, dtype)
    return make


def _awq_weights(k: int, n: int, dtype, device):
    """qweight [K, N/8], scales [K/128, N], qzeros [K/128, N/8] (AutoAWQ's GEMM layout)."""
    import torch
    groups = -(-k // AWQ_GROUP)
    return (torch.zeros((k, n // 8), dtype=torch.int32, device=device),
            torch.zeros((groups, n), dtype=dtype, device=device),
            torch.zeros((groups, n // 8), dtype=torch.int32, device=device))


def _awq_gemm(rows, cols, dtype, sizes, device="cpu"):
    inner = sizes.get("inner") or -(-cols // AWQ_GROUP) * AWQ_GROUP
    return (_empty((rows, inner), dtype, device), *_awq_weights(inner, cols, dtype, device))


def _awq_dequantize(rows, cols, dtype, sizes, device="cpu"):
    return _awq_weights(rows, cols, dtype, device)


def _fixed(**keywords):
    return lambda sizes: keywords


CALLS = (
    LayerCall("scaled_dot_product_attention", "scaled_dot_product_attention",
              "scaled_dot_product_attention", _attention, keywords=_fixed(enable_gqa=True),
              targets=ATTENTION_TARGETS),
    LayerCall("scaled_dot_product_attention_causal", "scaled_dot_product_attention",
              "scaled_dot_product_attention", _attention,
              keywords=_fixed(is_causal=True, enable_gqa=True), targets=ATTENTION_TARGETS),
    LayerCall("paged_attention_decode", "paged_attention_decode", "paged_attention_decode",
              _paged, targets=PAGED_TARGETS),
    *(LayerCall("moe_grouped_gemm" + ("_block32" if bm == 32 else "")
                + ("_routed" if routed else ""), "moe_grouped_gemm", "moe_grouped_gemm",
                _grouped_of(bm, routed), inner=True, keywords=_grouped_keywords(routed))
      for bm in (16, 32) for routed in (False, True)),
    LayerCall("fused_moe", "fused_moe", "moe_grouped_gemm", _fused_moe),
    LayerCall("moe_align_block_size", "moe_align_block_size", "moe_grouped_gemm", _align),
    *(LayerCall("scaled_mm" + ("_rowwise" if rowwise else "") + ("_bias" if bias else ""),
                "scaled_mm", "scaled_mm", _scaled_mm_of(rowwise, bias), inner=True,
                targets=FP8_BIAS_TARGETS if bias else FP8_TARGETS)
      for bias in (False, True) for rowwise in (False, True)),
    LayerCall("scaled_mm_fast", "scaled_mm", "scaled_mm", _scaled_mm_of(False, False),
              inner=True, keywords=_fixed(use_fast_accum=True), targets=FP8_TARGETS),
    LayerCall("awq_gemm", "awq_gemm", "awq_gemm", _awq_gemm, inner=True),
    LayerCall("awq_dequantize", "awq_dequantize", "awq_gemm", _awq_dequantize),
)
