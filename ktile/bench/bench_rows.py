"""Row-wise benches: softmax (fp32 logits, up to the largest vocabularies), rotary_embedding
(NeoX, Llama-3-8B's heads), embedding and kv_cache_write (bf16)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

import ktile.ops as ops
from ktile.ops.alternatives import softmax_torch as _softmax_torch

from .cases import Bench, Shape, dev, grid, library

ROWS = (1, 8, 32, 256, 4096, 16384)
SOFTMAX_WIDTHS = (2048, 4096, 8192, 32000, 128256, 151936)
Q_HEADS, KV_HEADS, HEAD = 32, 8, 128
MAX_POSITION = 8192
VOCABULARY = 128256
E = 2   # bf16 bytes


def _fits(shapes) -> tuple:
    """Shapes of fewer than 2^31 elements (the ops index elements in int32)."""
    return tuple(s for s in shapes if s.dims["rows"] * s.dims["cols"] < 2 ** 31)


def tokens(counts, group) -> tuple:
    return tuple(Shape({"tokens": t}, t, group) for t in counts)


QUICK_TOKENS = (1, 32, 4096, 16384)


# ---- softmax ----------------------------------------------------------------------------------

def softmax_torch(x):
    return _softmax_torch(x, -1)


# ---- rotary (vLLM's RotaryEmbedding.forward_native, NeoX) ------------------------------------

def rotary_inputs(s):
    t = s.dims["tokens"]
    positions = torch.randint(0, MAX_POSITION, (t,), device=dev())
    q = torch.randn(t, Q_HEADS * HEAD, device=dev()).bfloat16()
    k = torch.randn(t, KV_HEADS * HEAD, device=dev()).bfloat16()
    angles = torch.arange(MAX_POSITION, device=dev())[:, None].float() * \
        (10000.0 ** (-torch.arange(0, HEAD, 2, device=dev()).float() / HEAD))[None]
    cache = torch.cat([angles.cos(), angles.sin()], dim=-1)
    return positions, q, k, cache


def _rotate_neox(x, cos, sin):
    heads = x.view(x.shape[0], -1, HEAD).float()
    x1, x2 = heads.chunk(2, dim=-1)
    rotated = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    x.copy_(rotated.view(x.shape))


def rotary_torch(positions, q, k, cache):
    cos, sin = cache.index_select(0, positions).unsqueeze(-2).chunk(2, dim=-1)
    _rotate_neox(q, cos, sin)
    _rotate_neox(k, cos, sin)
    return q, k


def rotary_bytes(s):
    t = s.dims["tokens"]
    return 2 * E * t * (Q_HEADS + KV_HEADS) * HEAD + 4 * t * HEAD + 8 * t


# ---- embedding, kv cache ---------------------------------------------------------------------

def embedding_inputs(s):
    ids = torch.randint(0, VOCABULARY, (s.dims["tokens"],), device=dev())
    return ids, torch.randn(VOCABULARY, s.dims["hidden"], device=dev()).bfloat16()


def kv_inputs(s):
    t, block = s.dims["tokens"], 16
    blocks = -(-2 * t // block)
    key, value = (torch.randn(t, KV_HEADS, HEAD, device=dev()).bfloat16() for _ in range(2))
    caches = (torch.zeros(blocks, block, KV_HEADS, HEAD, device=dev()).bfloat16()
              for _ in range(2))
    slots = torch.randperm(blocks * block, device=dev())[:t]
    return (key, value, *caches, slots)


def kv_torch(key, value, key_cache, value_cache, slots):
    """vLLM's native path: the caches as [slots, heads, head] rows, one index_copy_ each."""
    key_cache.view(-1, KV_HEADS, HEAD).index_copy_(0, slots, key)
    value_cache.view(-1, KV_HEADS, HEAD).index_copy_(0, slots, value)
    return key_cache, value_cache


def kv_ktile(key, value, key_cache, value_cache, slots):
    ops.kv_cache_write(key, value, key_cache, value_cache, slots)
    return key_cache, value_cache


BENCHES = [
    Bench("softmax", _fits(grid(ROWS, SOFTMAX_WIDTHS)),
          grid((1, 32, 4096), (4096, 32000, 151936)),
          make=lambda s: (torch.randn(s.dims["rows"], s.dims["cols"], device=dev()),),
          ktile=lambda x: ops.softmax(x, -1), torch=softmax_torch,
          nbytes=lambda s: 4 * 2 * s.dims["rows"] * s.dims["cols"], triton="softmax",
          notes="fp32 logits"),
    Bench("rotary_embedding", tokens(ROWS, f"{Q_HEADS}/{KV_HEADS}x{HEAD}"),
          tokens(QUICK_TOKENS, f"{Q_HEADS}/{KV_HEADS}x{HEAD}"), make=rotary_inputs,
          ktile=lambda p, q, k, c: ops.rotary_embedding(p, q, k, HEAD, c, True),
          torch=rotary_torch, nbytes=rotary_bytes, triton="rotary_neox", mutates=(1, 2),
          axis="tokens", notes="NeoX, in place, float32 cos/sin cache"),
    Bench("embedding", tuple(Shape({"tokens": t, "hidden": h}, t, h)
                             for h in (4096, 8192) for t in ROWS),
          tuple(Shape({"tokens": t, "hidden": 4096}, t, 4096) for t in QUICK_TOKENS),
          make=embedding_inputs, ktile=library("embedding"), torch=F.embedding,
          nbytes=lambda s: 8 * s.dims["tokens"] + 2 * E * s.dims["tokens"] * s.dims["hidden"],
          triton="embedding", axis="tokens", notes=f"vocabulary {VOCABULARY}"),
    Bench("kv_cache_write", tokens(ROWS, f"{KV_HEADS}x{HEAD}"),
          tokens(QUICK_TOKENS, f"{KV_HEADS}x{HEAD}"), make=kv_inputs, ktile=kv_ktile,
          torch=kv_torch, nbytes=lambda s: 4 * E * s.dims["tokens"] * KV_HEADS * HEAD
          + 8 * s.dims["tokens"], mutates=(2, 3), axis="tokens",
          notes="block size 16, slots a random permutation; no Triton alternative"),
]
