"""`ktile.ops.rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox=True)`:
vLLM's op, in place: query and key are rotated where they lie and returned.

positions: `[tokens]` int64 or int32 (any shape of `tokens` elements); query: `[tokens, heads ·
head_size]` or `[tokens, heads, head_size]` (or leading dimensions whose product is tokens);
key: likewise with at most query's heads, or None; cos_sin_cache: `[max_position, rot_dim]`
(cos | sin), float32 or the query's dtype. Only the first rot_dim columns of each head rotate.

NeoX runs in place: one launch for query and key, each tile loaded and stored once by one
warp (`in_place={"q_out": "q", "k_out": "k"}`, checked by the runtime: docs/runtime.md,
"Aliasing and in-place"); int64 positions are read as they lie (their 32-bit words), with no
conversion kernel. GPT-J reads each element's pair partner with loads one column to either side,
which no in-place declaration covers, so it writes fresh tensors and the op copies the rotated
columns back (two more passes). A position outside the cache reads zeros (no check: it would
need the positions on the host). A cos_sin_cache in float32 or in query's dtype (vLLM's) is
gathered where it lies; one in another dtype is first gathered and widened by torch.
"""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from ..elementwise.launch import run_kernel
from ..embedding.indices import check_indices, id_words
from . import config, kernels

NAME = "rotary_embedding"
DTYPES = ("bf16", "fp16", "fp32")


def _check(positions, query, key, head_size, cos_sin_cache) -> None:
    check_indices(NAME, "positions", positions)
    lib.check_tensor(NAME, "query", query, DTYPES)
    lib.check_tensor(NAME, "cos_sin_cache", cos_sin_cache, DTYPES, ranks=(2, 2))
    tensors = {"positions": positions, "query": query, "cos_sin_cache": cos_sin_cache}
    if key is not None:
        lib.check_tensor(NAME, "key", key, DTYPES)
        tensors["key"] = key
        if key.dtype != query.dtype:
            raise InputError(f"{NAME}: 'key' holds {lib.dtype_name(key)}, 'query' "
                             f"{lib.dtype_name(query)}; they must be equal",
                             hint="convert it: key.to(query.dtype)")
    lib.check_same_device(NAME, tensors)
    _check_heads(positions, query, key, head_size, cos_sin_cache)


def _check_heads(positions, query, key, head_size, cache) -> None:
    if isinstance(head_size, bool) or not isinstance(head_size, int) or head_size <= 0:
        raise InputError(f"{NAME}: 'head_size' must be a positive int, got {head_size!r}",
                         hint="pass the model's head dimension, e.g. head_size=128")
    tokens = positions.numel()
    for param, t in (("query", query), ("key", key)):
        if t is not None and t.numel() % (tokens * head_size):
            raise InputError(f"{NAME}: '{param}' has shape {tuple(t.shape)}: not {tokens} "
                             f"tokens (one per position) of whole heads of {head_size}",
                             hint=f"pass {param} as [tokens, heads * head_size] with "
                                  f"tokens = positions.numel()")
    if key is not None and key.numel() > query.numel():
        raise InputError(f"{NAME}: 'key' has more heads than 'query'",
                         hint="pass query and key in this order (k heads <= q heads)")
    rot = cache.shape[-1]
    if rot > head_size or rot % 32:
        raise InputError(f"{NAME}: 'cos_sin_cache' rows hold {rot} values; the rotary "
                         f"dimension must be a multiple of 32 and at most head_size "
                         f"({head_size})", hint="build the cache as [max_position, rot_dim] "
                                                "(cos | sin) with rot_dim % 32 == 0")


def _spread_pairs(cs: torch.Tensor) -> torch.Tensor:
    """Each token's [cos | sin] row spread to GPT-J's pairs: [cos_i, cos_i ... | −sin_i, sin_i
    ...], float32 `[tokens, 2 · rot_dim]`."""
    cos, sin = cs.float().chunk(2, dim=-1)
    return torch.cat([cos.repeat_interleave(2, dim=-1),
                      torch.stack([-sin, sin], dim=-1).flatten(-2)], dim=-1).contiguous()


def _rotary(positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor | None,
            cos_sin_cache: torch.Tensor, head_size: int, is_neox: bool) -> None:
    tokens = positions.numel()
    q = query.view(tokens, -1)
    rot = cos_sin_cache.shape[-1]
    dtype, target = lib.kt_dtype(query), lib.target_of(query)
    if is_neox:
        _neox(positions, q, key, cos_sin_cache, dtype, target, head_size, rot)
        return
    k = key.view(tokens, -1) if key is not None else q[:, :head_size]
    constants = {"HEAD": head_size, "ROT": rot, "COLS": config.columns(rot)}
    q_out, k_out = torch.empty_like(q), torch.empty_like(k)
    spread = _spread_pairs(cos_sin_cache.index_select(0, positions.reshape(-1).long()))
    run_kernel(kernels.gptj(dtype), q, k, spread, q_out, k_out, target=target, **constants)
    _copy_rotated(q, q_out, head_size, rot)
    if key is not None:
        _copy_rotated(k, k_out, head_size, rot)


def _neox(positions, q, key, cache, dtype: str, target, head_size: int, rot: int) -> None:
    """One launch rotates q and k where they lie (kernels.neox_heads), positions read as they
    are: int64 as `[tokens, 2]` int32 words, int32 as `[tokens, 1]`."""
    pos = id_words(positions)
    cache_dtype = "fp32"
    if cache.dtype == q.dtype and cache.dtype != torch.float32:
        cache_dtype = dtype                                 # the cache in q's dtype, as vLLM's
    elif cache.dtype != torch.float32:       # another dtype: gather the rows in use, widened
        cache = cache.index_select(0, positions.reshape(-1).long()).float()
        pos = torch.arange(q.shape[0], dtype=torch.int32, device=q.device).view(-1, 1)
    tokens = q.shape[0]
    if key is None:
        constants = {"HEAD": head_size, "ROT": rot, **config.neox_constants(rot, 1, (1,))}
        del constants["HEADS"]
        kernel = kernels.neox_heads(dtype, cache_dtype, keyed=False)
        run_kernel(kernel, pos, q, cache, q, target=target, **constants)
        return
    k = key.view(tokens, -1)
    heads = (q.shape[1] // head_size, k.shape[1] // head_size)
    if tokens <= config.FLAT_TOKENS:
        _neox_flat(pos, q, k, cache, dtype, cache_dtype, target, head_size, rot, heads)
        return
    constants = {"HEAD": head_size, "ROT": rot, **config.neox_constants(rot, tokens, heads)}
    kernel = kernels.neox_heads(dtype, cache_dtype)
    run_kernel(kernel, pos, q, k, cache, q, k, target=target, **constants)


def _neox_flat(pos, q, k, cache, dtype, cache_dtype, target, head_size, rot, heads) -> None:
    """Few tokens: kernels.neox_flat, q and k as `[tokens, 1, heads, head_size]`, the cache
    as `[max_position, 1, 16, rot]` with a 0 row stride (every row of a tile the position's)."""
    tokens = q.shape[0]
    q4, k4 = q.view(tokens, 1, heads[0], head_size), k.view(tokens, 1, heads[1], head_size)
    cache4 = cache.view(cache.shape[0], 1, 1, rot).expand(cache.shape[0], 1, 16, rot)
    kernel = kernels.neox_flat(dtype, cache_dtype)
    run_kernel(kernel, pos, q4, k4, cache4, q4, k4, target=target, HEAD=head_size, ROT=rot,
               COLS=config.NEOX_COLS, WARPS=rot // (2 * config.NEOX_COLS))


def _copy_rotated(x, rotated, head_size: int, rot: int) -> None:
    if rot == head_size:
        x.copy_(rotated)
        return
    tokens = x.shape[0]
    x.view(tokens, -1, head_size)[..., :rot].copy_(rotated.view(tokens, -1, head_size)[..., :rot])


def _rotary_fake(positions, query, key, cos_sin_cache, head_size, is_neox):
    return None


_OP = lib.define("ktile::rotary_embedding", _rotary, _rotary_fake, mutates_args=("query", "key"))


def rotary_embedding(positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor | None,
                     head_size: int, cos_sin_cache: torch.Tensor, is_neox: bool = True):
    """Rotate query and key in place by their tokens' positions; returns (query, key)."""
    _check(positions, query, key, head_size, cos_sin_cache)
    _OP(positions, query, key, cos_sin_cache, head_size, bool(is_neox))
    return query, key


OP = lib.Op(NAME, {"rotary_embedding": rotary_embedding}, kernels.KERNELS, DTYPES, config.TABLE,
            "ktile.ops.rotary.reference")
OPS = [OP]
