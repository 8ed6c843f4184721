"""`ktile.ops.kv_cache_write(key, value, key_cache, value_cache, slot_mapping)`: vLLM's
`reshape_and_cache_flash` for an unquantised cache, `torch.ops.ktile.kv_cache_write`.

key, value: `[tokens, heads, head_size]` (or `[tokens, heads · head_size]`); key_cache,
value_cache: `[blocks, block_size, heads, head_size]`, written in place: token t goes to block
`slot_mapping[t] // block_size`, row `slot_mapping[t] % block_size`; a slot of -1 (padding) writes
nothing. slot_mapping: int64 or int32 `[tokens]`. Returns None, like vLLM's op.
"""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from ..elementwise.launch import run_kernel
from .._library import Route, RoutingTable
from ..embedding.indices import as_int32, check_indices
from . import kernels

NAME = "kv_cache_write"
DTYPES = ("bf16", "fp16", "fp32")
TABLE = RoutingTable([Route("kv_scatter", {"COLS": 64})])


def _as_rows(op: str, param: str, cache):
    """The cache as rows of heads · head_size: `[blocks · block_size, heads · head_size]`."""
    if cache.dim() != 4:
        raise InputError(f"{op}: '{param}' has shape {tuple(cache.shape)}; it must be "
                         f"[blocks, block_size, heads, head_size]",
                         hint="pass vLLM's flash layout, one cache per key and value")
    if not cache.is_contiguous():
        raise InputError(f"{op}: '{param}' is not contiguous (strides {cache.stride()}); the "
                         f"kernel writes it as rows of heads * head_size",
                         hint=f"allocate {param} with torch.empty(blocks, block_size, heads, "
                              f"head_size)")
    return cache.view(-1, cache.shape[-2] * cache.shape[-1])


def _check(key, value, key_cache, value_cache, slot_mapping) -> None:
    for param, t in (("key", key), ("value", value)):
        lib.check_tensor(NAME, param, t, DTYPES, ranks=(2, 3))
    for param, t in (("key_cache", key_cache), ("value_cache", value_cache)):
        lib.check_tensor(NAME, param, t, DTYPES, ranks=(4, 4))
    check_indices(NAME, "slot_mapping", slot_mapping, max_rank=1)
    lib.check_like(NAME, "value", value, key, "key")
    lib.check_like(NAME, "value_cache", value_cache, key_cache, "key_cache")
    lib.check_same_device(NAME, {"key": key, "key_cache": key_cache,
                                 "slot_mapping": slot_mapping})
    if key_cache.dtype != key.dtype:
        raise InputError(f"{NAME}: 'key_cache' holds {lib.dtype_name(key_cache)}, 'key' "
                         f"{lib.dtype_name(key)}; this op writes an unquantised cache",
                         hint="allocate the caches in key's dtype")
    width = key_cache.shape[-2] * key_cache.shape[-1]
    if key.numel() != key.shape[0] * width or slot_mapping.numel() != key.shape[0]:
        raise InputError(f"{NAME}: 'key' has shape {tuple(key.shape)}, 'key_cache' "
                         f"{tuple(key_cache.shape)} and 'slot_mapping' {slot_mapping.numel()} "
                         f"slots; key must be [tokens, heads, head_size] with the cache's "
                         f"heads and head_size, and one slot per token",
                         hint="pass key[:num_tokens] and slot_mapping[:num_tokens]")


def _write(key: torch.Tensor, value: torch.Tensor, key_cache: torch.Tensor,
           value_cache: torch.Tensor, slot_mapping: torch.Tensor) -> None:
    tokens = key.shape[0]
    k_rows, v_rows = _as_rows(NAME, "key_cache", key_cache), _as_rows(NAME, "value_cache",
                                                                      value_cache)
    width, target = k_rows.shape[1], lib.target_of(key)

    def make():
        route = TABLE.choose(tokens, width, target)
        return OP.kernel(route, lib.kt_dtype(key)), route.constants
    kernel, constants = TABLE.plan(target, (tokens, width, key.dtype), make)
    run_kernel(kernel, key.reshape(tokens, -1), value.reshape(tokens, -1),
               as_int32(slot_mapping), k_rows, v_rows, target=target, **constants)


def _write_fake(key, value, key_cache, value_cache, slot_mapping):
    return None


_OP = lib.define("ktile::kv_cache_write", _write, _write_fake,
                 mutates_args=("key_cache", "value_cache"))


def kv_cache_write(key: torch.Tensor, value: torch.Tensor, key_cache: torch.Tensor,
                   value_cache: torch.Tensor, slot_mapping: torch.Tensor) -> None:
    """Write each token's key and value into the paged caches at its slot (in place)."""
    _check(key, value, key_cache, value_cache, slot_mapping)
    for param, cache in (("key_cache", key_cache), ("value_cache", value_cache)):
        _as_rows(NAME, param, cache)
    _OP(key, value, key_cache, value_cache, slot_mapping)


OP = lib.Op(NAME, {"kv_cache_write": kv_cache_write}, kernels.KERNELS, DTYPES, TABLE,
            "ktile.ops.kv_cache.reference")
OPS = [OP]
