"""SGLang 0.5.23's hook points and ktile's replacements (sglang.py installs them).

SGLang's layers (`BaseFusedOp`) pick one method per instance on its first call: `forward_cuda`
on NVIDIA, `forward_hip` (else `forward_cuda`) on AMD, `forward_cpu` on AMX CPUs,
`forward_native` elsewhere and under torch.compile. Each of those is replaced, on the class, by
a function that sends the call to a `torch.ops.ktile_sglang` op when the layer's static facts
fit (dtype, flags, layout) and otherwise calls the method it replaced, counted as a fallback.
The CUDA / HIP forms keep SGLang's in-place semantics there (the fused residual add and the
rotary embedding write their inputs); the native / CPU forms are functional, as SGLang's are.

Shadow mode (`KTILE_SGLANG_SHADOW=1`, eager calls) runs the layer's stock `forward_native` on
copies beside each routed call and counts differences beyond the route's tolerance.
"""
from __future__ import annotations

import torch

from . import _core, sglang_ops
from ._core import Hook
from .sglang_ops import route_name

ENGINE = "sglang"
FLOATS = (torch.bfloat16, torch.float16, torch.float32)
# route -> (atol, rtol) of shadow mode: ktile's ops' tolerances (one rounding of the output
# dtype, 2^-7 relative in bf16) with room for SGLang's rounding convention (RMSNorm multiplies
# by the weight in fp32 before its one rounding; ktile rounds before and after)
TOLERANCE = {"rms_norm": (2e-2, 2e-2), "fused_add_rms_norm": (2e-2, 2e-2),
             "silu_and_mul": (2e-2, 2e-2), "gelu_and_mul": (2e-2, 2e-2),
             "rotary_embedding": (2e-2, 2e-2)}
_ORIGINAL: dict[str, object] = {}      # "Class.method" -> the stock function


def _keep(owner, attr: str):
    """The stock function `owner.attr`, kept before the first patch (undo and re-install)."""
    key = f"{owner.__qualname__}.{attr}"
    if key not in _ORIGINAL:
        _ORIGINAL[key] = owner.__dict__[attr]
    return _ORIGINAL[key]


def _eager() -> bool:
    return not torch.compiler.is_compiling()


def _clone(value):
    return value.clone() if isinstance(value, torch.Tensor) else value


def _shadow(route: str, got, stock_native, self, *args) -> None:
    """Compare a routed result with SGLang's forward_native on copies of the inputs."""
    if not (_core.shadow(ENGINE) and _eager()):
        return
    want = stock_native(self, *(_clone(a) for a in args))
    atol, rtol = TOLERANCE[route]
    _core.shadow_compare(route_name(route), got, want, atol, rtol)


# ---- RMSNorm (with and without the fused residual add) -------------------------------------

RMS_METHODS = ("forward_native", "forward_cuda", "forward_cpu", "forward_hip")
IN_PLACE = ("forward_cuda", "forward_hip")


def _batch_invariant() -> bool:
    """SGLang's deterministic mode: its own batch-invariant kernels run."""
    from sglang.srt.layers import layernorm
    probe = getattr(layernorm, "is_batch_invariant_mode_enabled", None)
    return bool(probe and probe())


def _rms_routable(self, x, residual, post_residual_addition, quant_linear) -> bool:
    # flags read with defaults that refuse the route, should a later SGLang drop one
    return (post_residual_addition is None and quant_linear is None
            and getattr(self, "_quant_linear", None) is None
            and getattr(self, "has_weight", False)
            and getattr(self, "variance_size_override", 0) is None
            and not getattr(self, "fp32_residual", True)
            and getattr(self, "override_orig_dtype", 0) is None and not _batch_invariant()
            and x.dtype in FLOATS
            and self.weight.dtype == x.dtype and x.numel() > 0 and x.shape[-1] == self.hidden_size
            and (residual is None or (residual.dtype == x.dtype and residual.shape == x.shape)))


def _rms_replacement(name: str, stock, stock_native):
    in_place = name in IN_PLACE

    def forward(self, x, residual=None, post_residual_addition=None, quant_linear=None):
        route = "rms_norm" if residual is None else "fused_add_rms_norm"
        if not (_core.enabled(ENGINE, route)
                and _rms_routable(self, x, residual, post_residual_addition, quant_linear)):
            _core.record(route_name(route), "fallback")
            return stock(self, x, residual, post_residual_addition, quant_linear)
        weight, eps = self.weight.data, self.variance_epsilon
        if residual is None:
            out = torch.ops.ktile_sglang.rms_norm(x.contiguous(), weight, eps)
            _shadow(route, out, stock_native, self, x)
            return out
        if in_place and x.is_contiguous() and residual.is_contiguous():
            before = (x.clone(), residual.clone()) if _core.shadow(ENGINE) and _eager() else None
            torch.ops.ktile_sglang.fused_add_rms_norm_(x, residual, weight, eps)
            if before is not None:
                _shadow(route, (x, residual), stock_native, self, *before)
            return x, residual
        out = torch.ops.ktile_sglang.fused_add_rms_norm(x.contiguous(), residual.contiguous(),
                                                        weight, eps)
        _shadow(route, out, stock_native, self, x, residual)
        return out
    return forward


def _rms_hooks() -> list[Hook]:
    from sglang.srt.layers.layernorm import RMSNorm
    native = _keep(RMSNorm, "forward_native")
    return [Hook(RMSNorm, name, ("self", "x", "residual", "post_residual_addition",
                                 "quant_linear"),
                 _rms_replacement(name, _keep(RMSNorm, name), native))
            for name in RMS_METHODS]


# ---- SiluAndMul / GeluAndMul -----------------------------------------------------------------

ACT_METHODS = ("forward_native", "forward_cuda", "forward_cpu")


def _act_replacement(route: str, stock, stock_native):
    def forward(self, x):
        approximate = getattr(self, "approximate", None)
        if (not _core.enabled(ENGINE, route) or x.dtype not in FLOATS or x.shape[-1] % 2
                or x.numel() == 0
                or (route == "gelu_and_mul" and approximate not in ("none", "tanh"))):
            _core.record(route_name(route), "fallback")
            return stock(self, x)
        if route == "silu_and_mul":
            out = torch.ops.ktile_sglang.silu_and_mul(x.contiguous())
        else:
            out = torch.ops.ktile_sglang.gelu_and_mul(x.contiguous(), approximate)
        _shadow(route, out, stock_native, self, x)
        return out
    return forward


def _act_hooks(route: str) -> list[Hook]:
    from sglang.srt.layers import activation
    cls = activation.SiluAndMul if route == "silu_and_mul" else activation.GeluAndMul
    native = _keep(cls, "forward_native")
    return [Hook(cls, name, ("self", "x"), _act_replacement(route, _keep(cls, name), native))
            for name in ACT_METHODS]


# ---- RotaryEmbedding -------------------------------------------------------------------------

ROTARY_METHODS = ("forward_native", "forward_cuda", "forward_cpu")


def _rope_routable(self, positions, query, key, offsets, fused_set_kv_buffer_arg) -> bool:
    return (offsets is None and fused_set_kv_buffer_arg is None and key is not None
            and not hasattr(self, "sin_cos_cache") and self.rotary_dim % 32 == 0
            and self.rotary_dim <= self.head_size and query.dtype in FLOATS
            and key.dtype == query.dtype and positions.dtype in (torch.int32, torch.int64)
            and query.numel() % (positions.numel() * self.head_size) == 0
            and key.numel() % (positions.numel() * self.head_size) == 0)


def _rope_replacement(name: str, stock, stock_native):
    in_place = name == "forward_cuda"

    def forward(self, positions, query, key, offsets=None, fused_set_kv_buffer_arg=None):
        if not (_core.enabled(ENGINE, "rotary_embedding")
                and _rope_routable(self, positions, query, key, offsets,
                                   fused_set_kv_buffer_arg)):
            _core.record(route_name("rotary_embedding"), "fallback")
            return stock(self, positions, query, key, offsets, fused_set_kv_buffer_arg)
        as_dtype = getattr(self, "cos_sin_cache_as", None)     # memoised cast (0.5.23)
        cache = (as_dtype(query.dtype) if as_dtype else self.cos_sin_cache.to(query.dtype))
        cache = cache.to(query.device)
        flat = positions.flatten()
        if in_place and query.is_contiguous() and key.is_contiguous():
            before = (query.clone(), key.clone()) if _core.shadow(ENGINE) and _eager() else None
            torch.ops.ktile_sglang.rotary_embedding_(flat, query, key, cache, self.head_size,
                                                     self.is_neox_style)
            if before is not None:
                _shadow("rotary_embedding", (query, key), stock_native, self, positions,
                        *before)
            return query, key
        out = torch.ops.ktile_sglang.rotary_embedding(flat, query.contiguous(),
                                                      key.contiguous(), cache,
                                                      self.head_size, self.is_neox_style)
        _shadow("rotary_embedding", out, stock_native, self, positions, query, key)
        return out
    return forward


def _rope_hooks() -> list[Hook]:
    from sglang.srt.layers.rotary_embedding.base import RotaryEmbedding
    native = _keep(RotaryEmbedding, "forward_native")
    return [Hook(RotaryEmbedding, name, ("self", "positions", "query", "key", "offsets",
                                         "fused_set_kv_buffer_arg"),
                 _rope_replacement(name, _keep(RotaryEmbedding, name), native))
            for name in ROTARY_METHODS]


# route -> its hooks; rms_norm and fused_add_rms_norm share RMSNorm's (installed once: `hooks`)
HOOKS = {"rms_norm": _rms_hooks, "fused_add_rms_norm": _rms_hooks,
         "silu_and_mul": lambda: _act_hooks("silu_and_mul"),
         "gelu_and_mul": lambda: _act_hooks("gelu_and_mul"),
         "rotary_embedding": _rope_hooks}


def hooks(routes) -> list[Hook]:
    """The hooks of `routes`, each (owner, attribute) once."""
    found: dict[tuple, Hook] = {}
    for route in routes:
        for hook in HOOKS[route]():
            found.setdefault((hook.owner, hook.attr), hook)
    return list(found.values())


__all__ = ["hooks", "HOOKS", "TOLERANCE", "sglang_ops"]
