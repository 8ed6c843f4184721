"""The input checks of `ktile.ops.paged_attention_decode`, made before anything runs: each
refusal names the parameter and the fix."""
from __future__ import annotations

import math

from ...errors import InputError
from .. import _library as lib

NAME = "paged_attention_decode"
DTYPES = ("bf16", "fp16")
HEAD_SIZES = (64, 128)
BLOCK_SIZE = 16


def check(query, key_cache, value_cache, block_tables, seq_lens) -> None:
    lib.check_tensor(NAME, "query", query, DTYPES, ranks=(3, 3))
    for param, cache in (("key_cache", key_cache), ("value_cache", value_cache)):
        lib.check_tensor(NAME, param, cache, DTYPES, ranks=(4, 4))
    lib.check_like(NAME, "value_cache", value_cache, key_cache, "key_cache")
    _check_int32(block_tables, "block_tables", 2)
    _check_int32(seq_lens, "seq_lens", 1)
    lib.check_same_device(NAME, {"query": query, "key_cache": key_cache,
                                 "block_tables": block_tables, "seq_lens": seq_lens})
    _check_cache(query, key_cache)
    seqs = query.shape[0]
    if block_tables.shape[0] != seqs or seq_lens.shape[0] != seqs:
        raise InputError(f"{NAME}: 'block_tables' has {block_tables.shape[0]} rows and "
                         f"'seq_lens' {seq_lens.shape[0]} lengths for {seqs} sequences of "
                         f"'query'; each needs one per sequence",
                         hint="pass block_tables[:num_seqs] and seq_lens[:num_seqs]")


def _check_cache(query, key_cache) -> None:
    seqs, heads, d = query.shape
    _, block_size, kv_heads, head_size = key_cache.shape
    if key_cache.dtype != query.dtype:
        raise InputError(f"{NAME}: 'key_cache' holds {lib.dtype_name(key_cache)}, 'query' "
                         f"{lib.dtype_name(query)}; this op reads an unquantised cache",
                         hint="allocate the caches in query's dtype")
    if block_size != BLOCK_SIZE:
        raise InputError(f"{NAME}: 'key_cache' has blocks of {block_size} tokens; this op "
                         f"reads blocks of {BLOCK_SIZE}",
                         hint="allocate the caches as [blocks, 16, kv_heads, head_size]")
    if d not in HEAD_SIZES or head_size != d:
        raise InputError(f"{NAME}: 'query' has head size {d} and 'key_cache' {head_size}; "
                         f"they must be equal and one of {HEAD_SIZES}",
                         hint="other head sizes are future work (issue #12): gather the "
                              "pages and call torch's scaled_dot_product_attention")
    if heads % kv_heads:
        raise InputError(f"{NAME}: 'query' has {heads} heads, not a multiple of the cache's "
                         f"{kv_heads} kv heads",
                         hint="grouped-query attention needs heads % kv_heads == 0")


def _check_int32(t, param: str, rank: int) -> None:
    import torch
    if not isinstance(t, torch.Tensor) or t.dtype != torch.int32:
        got = lib.dtype_name(t) if isinstance(t, torch.Tensor) else type(t).__name__
        raise InputError(f"{NAME}: '{param}' must be an int32 tensor, got {got}",
                         hint=f"convert it: {param}.to(torch.int32)")
    if t.dim() != rank or t.numel() == 0:
        shape = "[num_seqs, max_blocks]" if rank == 2 else "[num_seqs]"
        raise InputError(f"{NAME}: '{param}' has shape {tuple(t.shape)}; it must be {shape}, "
                         f"not empty", hint=f"pass {param} as {shape}")
    if t.device.type != "meta" and not t.is_contiguous():
        raise InputError(f"{NAME}: '{param}' is not contiguous (strides {t.stride()})",
                         hint=f"pass {param}.contiguous()")


def check_scale(scale, head_size: int) -> float:
    """The softmax scale: 1 / sqrt(head_size) for None, else a finite number."""
    if scale is None:
        return 1.0 / math.sqrt(head_size)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or \
            not math.isfinite(scale):
        raise InputError(f"{NAME}: 'scale' must be a finite number or None, got {scale!r}",
                         hint="leave it out for 1 / sqrt(head_size)")
    return float(scale)
