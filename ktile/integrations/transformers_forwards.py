"""The forwards the transformers integration installs (docs/integrations.md), and the routing
table they read on every call: per op, "ktile" (the `torch.ops.ktile_transformers.*` op, which
counts its calls; called through its entry in transformers_ops, which skips torch's dispatcher
on eager calls) or "stock" (transformers' own code, counted as a fallback when not compiling).

Each forward checks that ktile's op takes its arguments (dtype, layout, widths) and otherwise
runs transformers' own code: a route can only narrow, never break, the model. Under
`torch.compile` the route is chosen while tracing (per shape: each compiled shape has its own
graph) and only the opaque ktile ops remain in the graph.
"""
from __future__ import annotations

import itertools
import sys
import types

import torch
import torch.nn.functional as F

from . import _core
from . import transformers_ops as ops   # each op's entry: direct when eager (Dispatch)
from .transformers_ops import route_name


# The routing table: op -> "ktile" | "stock" | a function of the op's first tensor returning one
# of them (per shape). Defaults: "ktile" where ktile's kernel is expected to be faster (issue #13's
# row-tile norms and the fused activation); "stock" where it is unmeasured against cuBLAS
# (linear), where ktile's layout costs copies transformers does not make (rotary: q and k copied
# token-major and a cos | sin table built per call; the KV write: the new rows copied
# head-major) and where ktile has no kernel (attention: SDPA either way). None of these has been
# measured end to end yet: `python3 -m ktile.integrations.ab_transformers` on the H200 decides.
# attention's "ktile" route is ktile's op around SDPA today (the plumbing for a kernel to come).
ROUTES: dict[str, object] = {
    "rms_norm": "ktile",
    "fused_add_rms_norm": "ktile",
    "silu_and_mul": "ktile",
    "linear": "stock",
    "rotary_embedding": "stock",
    "kv_cache_write": "stock",
    "attention": "stock",
}
CHOICES = ("ktile", "stock")
NO_KTILE_KERNEL: tuple[str, ...] = ()    # ops whose "ktile" route does not exist yet
DTYPES = (torch.bfloat16, torch.float16, torch.float32)
TOLERANCE = {torch.bfloat16: (3e-2, 3e-2), torch.float16: (4e-3, 4e-3),
             torch.float32: (1e-4, 1e-4)}            # shadow mode: (atol, rtol) by dtype
STATE = {"shadow": False}                            # set by patch() from the switches


def choose(op: str, x: torch.Tensor) -> str:
    route = ROUTES.get(op, "stock")
    return route(x) if callable(route) else route


def _ktile(op: str, x: torch.Tensor, *tensors: torch.Tensor | None) -> bool:
    """Whether `op` routes to ktile for `x` and ktile's op takes these tensors as they are."""
    if choose(op, x) != "ktile":
        return False
    want = tuple(t for t in (x, *tensors) if t is not None)
    return all(t.dtype == x.dtype and t.device == x.device for t in want) \
        and x.dtype in DTYPES and x.is_contiguous() and 1 <= x.dim() <= 4 and x.numel() > 0


def _fallback(op: str) -> None:
    if not torch.compiler.is_compiling():
        _core.record(route_name(op), "fallback")


def _shadow(op: str, got, stock) -> None:
    """Shadow mode (eager only): run transformers' own path too and count a mismatch."""
    if STATE["shadow"] and not torch.compiler.is_compiling():
        first = got[0] if isinstance(got, (tuple, list)) else got
        atol, rtol = TOLERANCE[first.dtype]
        _core.shadow_compare(route_name(op), got, stock(), atol, rtol)


# ---- module forwards (bound to each instance) ----------------------------------------------

def rms_norm_forward(self, hidden_states):
    if _ktile("rms_norm", hidden_states, self.weight):
        out = ops.rms_norm(hidden_states, self.weight, self.variance_epsilon)
        _shadow("rms_norm", out, lambda: type(self).forward(self, hidden_states))
        return out
    _fallback("rms_norm")
    return type(self).forward(self, hidden_states)


def decoder_layer_forward(self, hidden_states, attention_mask=None, position_ids=None,
                          past_key_values=None, use_cache=False, position_embeddings=None,
                          **kwargs):
    """transformers' decoder layer with the residual add and the post-attention norm fused."""
    residual = hidden_states
    hidden_states, _ = self.self_attn(
        hidden_states=self.input_layernorm(hidden_states), attention_mask=attention_mask,
        position_ids=position_ids, past_key_values=past_key_values, use_cache=use_cache,
        position_embeddings=position_embeddings, **kwargs)
    norm = self.post_attention_layernorm
    width = hidden_states.shape[-1]
    if width % 16 == 0 and width <= 16384 and residual.is_contiguous() \
            and _ktile("fused_add_rms_norm", hidden_states, residual, norm.weight):
        attn, before = hidden_states, residual
        hidden_states, residual = ops.fused_add_rms_norm(attn, before, norm.weight,
                                                         norm.variance_epsilon)
        _shadow("fused_add_rms_norm", (hidden_states, residual),
                lambda: _stock_add_norm(norm, attn, before))
    else:
        _fallback("fused_add_rms_norm")
        residual = residual + hidden_states
        hidden_states = norm(residual)
    return residual + self.mlp(hidden_states)


def _stock_add_norm(norm, attn, residual):
    summed = residual + attn
    return type(norm).forward(norm, summed), summed


def mlp_forward(self, x):
    """gate_proj and up_proj as one GEMM (their weights are views of `_ktile_gate_up`), then
    ktile's silu_and_mul, then down_proj."""
    gate_up = linear(x, self._ktile_gate_up, None)
    if _ktile("silu_and_mul", gate_up):
        act = ops.silu_and_mul(gate_up)
        half = gate_up.shape[-1] // 2
        _shadow("silu_and_mul", act, lambda: F.silu(gate_up[..., :half]) * gate_up[..., half:])
        return self.down_proj(act)
    _fallback("silu_and_mul")
    return type(self).forward(self, x)


def linear_forward(self, input):
    return linear(input, self.weight, self.bias)


def linear(x, weight, bias):
    if weight.dim() == 2 and _ktile("linear", x, weight, bias):
        out = ops.linear(x, weight, bias)
        _shadow("linear", out, lambda: F.linear(x, weight, bias))
        return out
    _fallback("linear")
    return F.linear(x, weight, bias)


# ---- the attention module: RoPE and the StaticCache write ----------------------------------

def make_rope(original):
    """transformers' `apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1)`, routed."""
    def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
        if unsqueeze_dim == 1 and q.dim() == 4 and k.dim() == 4 and cos.dim() == 3 \
                and q.shape[-1] % 32 == 0 and cos.shape[-1] == q.shape[-1] \
                and cos.shape[0] in (1, q.shape[0]) and cos.shape[1] == q.shape[2] \
                and choose("rotary_embedding", q) == "ktile" \
                and all(t.dtype == q.dtype and t.dtype in DTYPES for t in (k, cos, sin)):
            out = ops.rope(q, k, cos, sin)
            _shadow("rotary_embedding", out, lambda: original(q, k, cos, sin, unsqueeze_dim))
            return out
        _fallback("rotary_embedding")
        return original(q, k, cos, sin, unsqueeze_dim)
    return apply_rotary_pos_emb


class RoutedCache:
    """What a patched attention module sees as its `past_key_values`: `update` writes a
    StaticCache layer through `kv_cache_write`'s route, anything else goes to the cache itself.
    The cache stays the caller's: only the calls of this model's attention pass through here."""

    def __init__(self, cache):
        self.cache = cache

    def update(self, key_states, value_states, layer_idx, *args, **kwargs):
        from transformers.cache_utils import StaticLayer
        layers = getattr(self.cache, "layers", None)
        layer = layers[layer_idx] if layers is not None and layer_idx < len(layers) else None
        if type(layer) is StaticLayer and not getattr(self.cache, "offloading", False) \
                and choose("kv_cache_write", key_states) == "ktile" and key_states.dim() == 4 \
                and key_states.dtype in DTYPES and value_states.shape == key_states.shape:
            if not layer.is_initialized:
                layer.lazy_initialization(key_states, value_states)
            if layer.keys.dtype == key_states.dtype \
                    and layer.keys.shape[-1] == layer.values.shape[-1] == key_states.shape[-1]:
                ops.kv_write(layer.keys, layer.values, key_states, value_states,
                             layer.cumulative_length)
                layer.cumulative_length.add_(key_states.shape[-2])
                return layer.keys, layer.values
        _fallback("kv_cache_write")
        return self.cache.update(key_states, value_states, layer_idx, *args, **kwargs)


_ROUTED = itertools.count()


def routed_module(names: dict) -> types.ModuleType:
    """A copy of a module's globals as a module of its own, in sys.modules: torch.compile finds
    an inlined function's globals by their `__name__`, so the routed copy needs its own name
    (the caller removes it from sys.modules on unpatch)."""
    module = types.ModuleType(f"{__name__}._routed_{next(_ROUTED)}")
    module.__dict__.update({k: v for k, v in names.items() if k not in ("__name__", "__spec__")})
    sys.modules[module.__name__] = module
    return module


def make_attention_forward(stock, rope: bool, kv: bool):
    """The attention module's own forward (`stock`: its code object, unchanged) run with this
    model's hooks: `apply_rotary_pos_emb` routed in a copy of its module's globals (so other
    models of the family stay stock) and `past_key_values` seen through `RoutedCache`."""
    names = routed_module(stock.__globals__).__dict__
    if rope:
        names["apply_rotary_pos_emb"] = make_rope(names["apply_rotary_pos_emb"])
    routed = types.FunctionType(stock.__code__, names, stock.__name__, stock.__defaults__,
                                stock.__closure__)
    routed.__kwdefaults__ = stock.__kwdefaults__

    def forward(self, hidden_states, position_embeddings, attention_mask,
                past_key_values=None, **kwargs):
        if kv and past_key_values is not None:
            past_key_values = RoutedCache(past_key_values)
        return routed(self, hidden_states, position_embeddings, attention_mask,
                      past_key_values, **kwargs)
    forward.routed_module = routed.__globals__["__name__"]
    return forward


def attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None,
              is_causal=None, **kwargs):
    """The "ktile" attention implementation. Route "stock": transformers' own SDPA function;
    "ktile": `ops.attention` (ktile has no attention kernel yet: SDPA inside, the place one will
    go). q `[B, Hq, S, D]`, k and v `[B, Hkv, T, D]`, the mask boolean `[B, 1, S, T]` or None
    (causal) -> (`[B, S, Hq, D]`, None)."""
    if choose("attention", query) != "ktile" or dropout or query.dtype not in DTYPES \
            or kwargs.get("position_bias") is not None or kwargs.get("sliding_window"):
        from transformers.integrations.sdpa_attention import sdpa_attention_forward
        _fallback("attention")
        return sdpa_attention_forward(module, query, key, value, attention_mask,
                                      dropout=dropout, scaling=scaling, is_causal=is_causal,
                                      **kwargs)
    causal = getattr(module, "is_causal", True) if is_causal is None else is_causal
    causal = bool(causal) and attention_mask is None and query.shape[2] > 1
    if causal and key.shape[2] > query.shape[2]:     # no mask: nothing cached before the query
        key, value = key[:, :, :query.shape[2]], value[:, :, :query.shape[2]]
    scale = query.shape[-1] ** -0.5 if scaling is None else float(scaling)
    return ops.attention(query, key, value, attention_mask, scale, causal), None


__all__ = ["ROUTES", "choose", "attention"]
