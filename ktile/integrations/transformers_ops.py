"""The ops the transformers integration routes to ktile, in transformers' layouts
(docs/integrations.md): each a `torch.ops.ktile_transformers.*` op that counts its call (eager,
or captured into a CUDA graph: `_core.record`), refuses a capture its graph contract forbids
(`_core.check_graph`) and calls `ktile.ops`. Being opaque ops, they run (and count) on every
call of a `torch.compile`d graph, where Python around them runs only while tracing.

- `rms_norm(x, weight, eps)`: `ktile.ops.rms_norm`.
- `fused_add_rms_norm(x, residual, weight, eps)` -> `(out, x + residual)`:
  `ktile.ops.fused_add_rms_norm`.
- `silu_and_mul(x)`: `[..., 2I]` -> `[..., I]`, `ktile.ops.silu_and_mul`.
- `linear(x, weight, bias)`: F.linear's semantics, `ktile.ops.linear`.
- `rope(q, k, cos, sin)`: q, k `[B, H, S, D]`, cos, sin `[B or 1, S, D]` (rotate-half):
  `ktile.ops.rotary_embedding` (NeoX) on token-major copies of q and k.
- `kv_write(keys!, values!, k, v, start)`: the StaticCache `[B, H, T, D]` written at `start`
  from k, v `[B, H, S, D]`: `ktile.ops.kv_cache_write`, the cache viewed as B·H blocks of T
  one-head rows.
- `attention(q, k, v, mask, scale, is_causal)`: q `[B, Hq, S, D]`, k, v `[B, Hkv, T, D]` ->
  `[B, S, Hq, D]`; no ktile kernel yet: F.scaled_dot_product_attention (where one will go).

Every op is declared `graph="safe"`: no host synchronisation, fixed shapes, allocations from
torch's allocator (the graph's private pool during a capture).

Each name here is the op's entry (`_library.define`'s `Dispatch`): an eager call on plain
tensors (module parameters included) runs the implementation directly, as `ktile.ops` does,
so neither this op nor the `ktile.ops` call inside it enters torch's dispatcher (tens of
microseconds of Python each: issue #15, docs/integrations.md); under `torch.compile`, fake tensors or a dispatch mode the
call goes through `torch.ops.ktile_transformers.*`, which the graph keeps opaque.
"""
from __future__ import annotations

import torch

from ..ops import _library as lib
from . import _core

ENGINE = "transformers"
NAMESPACE = "ktile_transformers"
GRAPH = {"rms_norm": "safe", "fused_add_rms_norm": "safe", "silu_and_mul": "safe",
         "linear": "safe", "rotary_embedding": "safe", "kv_cache_write": "safe",
         "attention": "safe"}


def route_name(op: str) -> str:
    """The counter key of one routed op: "transformers.<op>"."""
    return f"{ENGINE}.{op}"


def _enter(op: str) -> None:
    _core.check_graph(route_name(op), GRAPH[op])
    _core.record(route_name(op))


def _ops():
    import ktile.ops
    return ktile.ops


# ---- norms and the MLP ------------------------------------------------------------------------

def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    _enter("rms_norm")
    return _ops().rms_norm(x, weight, eps)


def _rms_norm_fake(x, weight, eps):
    return torch.empty_like(x)


rms_norm = lib.define(f"{NAMESPACE}::rms_norm", _rms_norm, _rms_norm_fake)


def _fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                        eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    _enter("fused_add_rms_norm")
    return _ops().fused_add_rms_norm(x, residual, weight, eps)


def _fused_add_rms_norm_fake(x, residual, weight, eps):
    return torch.empty_like(x), torch.empty_like(x)


fused_add_rms_norm = lib.define(f"{NAMESPACE}::fused_add_rms_norm", _fused_add_rms_norm,
                                _fused_add_rms_norm_fake)


def _silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    _enter("silu_and_mul")
    return _ops().silu_and_mul(x)


def _silu_and_mul_fake(x):
    return x.new_empty((*x.shape[:-1], x.shape[-1] // 2))


silu_and_mul = lib.define(f"{NAMESPACE}::silu_and_mul", _silu_and_mul, _silu_and_mul_fake)


def _linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    _enter("linear")
    return _ops().linear(x, weight, bias)


def _linear_fake(x, weight, bias):
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


linear = lib.define(f"{NAMESPACE}::linear", _linear, _linear_fake)


# ---- rotary embedding -------------------------------------------------------------------------

def _rope_table(cos: torch.Tensor, sin: torch.Tensor, batch: int):
    """transformers' per-token cos and sin ([B or 1, S, D], each half repeated) as ktile's
    `[rows, D]` table of cos | sin, and each token's row: positions `[B · S]`."""
    rows, seq, dim = cos.shape
    table = torch.cat([cos[..., :dim // 2], sin[..., :dim // 2]], dim=-1).reshape(rows * seq, dim)
    positions = torch.arange(rows * seq, device=cos.device)
    if rows == 1 and batch > 1:
        positions = positions.repeat(batch)
    return table, positions


def _rope(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor,
          sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    _enter("rotary_embedding")
    b, hq, s, d = q.shape
    q_rows = q.new_empty((b, s, hq, d))
    k_rows = k.new_empty((b, s, k.shape[1], d))
    q_rows.copy_(q.transpose(1, 2))            # ktile rotates in place: a copy, token-major
    k_rows.copy_(k.transpose(1, 2))
    table, positions = _rope_table(cos, sin, b)
    _ops().rotary_embedding(positions, q_rows.view(b * s, -1), k_rows.view(b * s, -1), d, table,
                            True)
    return q_rows.transpose(1, 2), k_rows.transpose(1, 2)


def _rope_fake(q, k, cos, sin):
    b, hq, s, d = q.shape
    return (q.new_empty((b, s, hq, d)).transpose(1, 2),
            k.new_empty((b, s, k.shape[1], d)).transpose(1, 2))


rope = lib.define(f"{NAMESPACE}::rope", _rope, _rope_fake)


# ---- the StaticCache write --------------------------------------------------------------------

def _kv_write(keys: torch.Tensor, values: torch.Tensor, key_states: torch.Tensor,
              value_states: torch.Tensor, start: torch.Tensor) -> None:
    """keys[b, h, start + s] = key_states[b, h, s] (values likewise): the cache `[B, H, T, D]`
    viewed as B·H blocks of T rows of one head, so token (b, h, s) goes to slot
    (b·H + h)·T + start + s."""
    _enter("kv_cache_write")
    b, h, t, d = keys.shape
    s = key_states.shape[2]
    slots = (torch.arange(b * h, device=keys.device).unsqueeze(1) * t
             + (start + torch.arange(s, device=keys.device)).unsqueeze(0)).reshape(-1)
    _ops().kv_cache_write(key_states.contiguous().view(b * h * s, 1, d),
                          value_states.contiguous().view(b * h * s, 1, d),
                          keys.view(b * h, t, 1, d), values.view(b * h, t, 1, d), slots)


def _kv_write_fake(keys, values, key_states, value_states, start):
    return None


kv_write = lib.define(f"{NAMESPACE}::kv_write", _kv_write, _kv_write_fake,
                      mutates_args=("keys", "values"))


# ---- attention ------------------------------------------------------------------------------

def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
               scale: float, is_causal: bool) -> torch.Tensor:
    """ktile has no attention kernel yet: SDPA, grouped-query heads shared (enable_gqa) where
    there is no mask, repeated where there is one. Returns `[B, S, Hq, D]`, contiguous."""
    _enter("attention")
    groups = q.shape[1] // k.shape[1]
    extra = {}
    if groups > 1 and mask is None:
        extra["enable_gqa"] = True
    elif groups > 1:
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale,
                                                           is_causal=is_causal, **extra)
    return out.transpose(1, 2).contiguous()


def _attention_fake(q, k, v, mask, scale, is_causal):
    return q.new_empty((q.shape[0], q.shape[2], q.shape[1], v.shape[-1]))


attention = lib.define(f"{NAMESPACE}::attention", _attention, _attention_fake)
