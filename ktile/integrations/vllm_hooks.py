"""vLLM 0.32's hook points and ktile's replacements (vllm.py installs them).

Each replacement sends a call to a `torch.ops.ktile_vllm` op when the layer's static facts fit
(dtype, layout, flags: fixed while vLLM traces) and otherwise calls the method it replaced,
counted as a fallback; the token-count decision is the op's, at run time (vllm_ops.py).

The table of routes, hooks and engine paths: docs/integrations.md ("vLLM").
"""
from __future__ import annotations

import torch

from . import _core, vllm_ops
from ._core import Hook

ENGINE = "vllm"
FLOATS = (torch.bfloat16, torch.float16, torch.float32)
_ORIGINAL: dict[str, object] = {}      # "Class.method" -> the stock function


def _keep(owner, attr: str):
    """The stock function `owner.attr` (kept before the first patch: undo and re-install)."""
    key = f"{owner.__qualname__}.{attr}"
    if key not in _ORIGINAL:
        raw = owner.__dict__.get(attr, getattr(owner, attr))
        _ORIGINAL[key] = raw.__func__ if isinstance(raw, staticmethod) else raw
    return _ORIGINAL[key]


def _fallback(route: str):
    _core.record(route, "fallback")


# ---- RMSNorm -------------------------------------------------------------------------------

def _rms_hooks() -> list[Hook]:
    from vllm.model_executor.layers.layernorm import RMSNorm
    stock = _keep(RMSNorm, "forward_native")

    def forward_native(self, x, residual=None):
        route = "rms_norm" if residual is None else "fused_add_rms_norm"
        if (not _core.enabled(ENGINE, route) or not self.has_weight
                or self.variance_size_override is not None or x.dtype not in FLOATS
                or self.weight.dtype != x.dtype):
            _fallback(route)
            return stock(self, x, residual)
        if residual is None:
            return torch.ops.ktile_vllm.rms_norm(x.contiguous(), self.weight.data,
                                                 self.variance_epsilon)
        return torch.ops.ktile_vllm.fused_add_rms_norm(x.contiguous(), residual.contiguous(),
                                                       self.weight.data, self.variance_epsilon)

    return [Hook(RMSNorm, "forward_native", ("self", "x", "residual"), forward_native)]


# ---- SiluAndMul ------------------------------------------------------------------------------

def _silu_hooks() -> list[Hook]:
    from vllm.model_executor.layers.activation import SiluAndMul
    stock = _keep(SiluAndMul, "forward_native")
    stock_cuda = _keep(SiluAndMul, "forward_cuda")

    def route(x):
        if not _core.enabled(ENGINE, "silu_and_mul") or x.dtype not in FLOATS:
            return None
        return torch.ops.ktile_vllm.silu_and_mul(x.contiguous())

    def forward_native(x):
        y = route(x)
        if y is None:
            _fallback("silu_and_mul")
            return stock(x)
        return y

    def forward_cuda(self, x):
        y = route(x)
        if y is None:
            _fallback("silu_and_mul")
            return stock_cuda(self, x)
        return y

    return [Hook(SiluAndMul, "forward_native", ("x",), staticmethod(forward_native)),
            Hook(SiluAndMul, "forward_cuda", ("self", "x"), forward_cuda)]


# ---- RotaryEmbedding -------------------------------------------------------------------------

ROTARY_METHODS = ("forward_native", "forward_cuda", "forward_cpu", "forward_hip", "forward_xpu")


def _rotary_hooks() -> list[Hook]:
    from vllm.model_executor.layers.rotary_embedding.base import RotaryEmbedding
    return [Hook(RotaryEmbedding, name, ("self", "positions", "query", "key"),
                 _rotary_replacement(_keep(RotaryEmbedding, name)))
            for name in ROTARY_METHODS]


def _rotary_replacement(stock):
    def forward(self, positions, query, key=None):
        if (not _core.enabled(ENGINE, "rotary_embedding") or key is None
                or getattr(self, "use_flashinfer", False) or self.rotary_dim % 32
                or query.dtype not in FLOATS or key.dtype != query.dtype):
            _fallback("rotary_embedding")
            return stock(self, positions, query, key)
        cache = self._match_cos_sin_cache_dtype(query)
        return torch.ops.ktile_vllm.rotary_embedding(positions, query, key, cache,
                                                     self.head_size, self.is_neox_style)
    return forward


# ---- UnquantizedLinearMethod -----------------------------------------------------------------

def _linear_hooks() -> list[Hook]:
    from vllm.model_executor.layers.linear import UnquantizedLinearMethod as Method
    stock_load = _keep(Method, "process_weights_after_loading")
    stock_apply = _keep(Method, "apply")

    def process_weights_after_loading(self, layer):
        weight = getattr(layer, "weight", None)
        if weight is None or weight.dtype not in (torch.bfloat16, torch.float16):
            return stock_load(self, layer)
        # keep the plain [N, K] weight ktile reads (on the CPU the stock path prepacks it
        # for oneDNN and drops it); the engine's path inside the op is F.linear
        layer.cpu_linear = torch.nn.functional.linear
        layer._ktile_linear = True

    def apply(self, layer, x, bias=None):
        if (not getattr(layer, "_ktile_linear", False) or x.dtype != layer.weight.dtype
                or (bias is not None and bias.dtype != x.dtype)):
            _fallback("linear")
            return stock_apply(self, layer, x, bias)
        return torch.ops.ktile_vllm.linear(x.contiguous(), layer.weight, bias)

    return [Hook(Method, "process_weights_after_loading", ("self", "layer"),
                 process_weights_after_loading),
            Hook(Method, "apply", ("self", "layer", "x", "bias"), apply)]


# ---- the KV-cache write ----------------------------------------------------------------------

def _attention_impl():
    from vllm.platforms import current_platform
    if current_platform.is_cpu():
        from vllm.v1.attention.backends.cpu_attn import CPUAttentionBackendImpl
        return CPUAttentionBackendImpl
    from vllm.v1.attention.backends.flash_attn import FlashAttentionImpl
    return FlashAttentionImpl


def flash_caches(kv_cache: torch.Tensor, head_size: int):
    """(key_cache, value_cache) as ktile's op writes them, contiguous [blocks, block_size,
    heads, head_size] each, when `kv_cache` is laid out so (shape [2, blocks, block_size,
    heads, head_size], contiguous); else None. vLLM 0.32's CPU_ATTN and FLASH_ATTN caches are
    head-major ([blocks, heads, block_size, 2 · head_size]): they take the engine's path."""
    if kv_cache.dim() != 5 or kv_cache.shape[0] != 2 or kv_cache.shape[-1] != head_size \
            or not kv_cache.is_contiguous():
        return None
    return kv_cache[0], kv_cache[1]


def _kv_hooks() -> list[Hook]:
    impl = _attention_impl()
    stock = _keep(impl, "do_kv_cache_update")

    def do_kv_cache_update(self, layer, key, value, kv_cache, slot_mapping):
        caches = flash_caches(kv_cache, self.head_size)
        if (not _core.enabled(ENGINE, "kv_cache_write") or caches is None
                or self.kv_cache_dtype != "auto" or key.dtype != kv_cache.dtype):
            _fallback("kv_cache_write")
            return stock(self, layer, key, value, kv_cache, slot_mapping)
        tokens = slot_mapping.shape[0]          # key and value may be padded past the slots
        torch.ops.ktile_vllm.kv_cache_write(key[:tokens].contiguous(),
                                            value[:tokens].contiguous(), caches[0],
                                            caches[1], slot_mapping)

    return [Hook(impl, "do_kv_cache_update",
                 ("self", "layer", "key", "value", "kv_cache", "slot_mapping"),
                 do_kv_cache_update)]


# ---- UnquantizedFusedMoEMethod ----------------------------------------------------------------

MOE_ISA = {"isa": "vec"}        # the CPU experts' prepack ISA, as vLLM chose it (engine path)


def _moe_hooks() -> list[Hook]:
    from vllm.model_executor.layers.fused_moe.unquantized_fused_moe_method import (
        UnquantizedFusedMoEMethod as Method)
    stock_load = _keep(Method, "process_weights_after_loading")
    stock_apply = _keep(Method, "apply")

    def process_weights_after_loading(self, layer):
        w13, w2 = getattr(layer, "w13_weight", None), getattr(layer, "w2_weight", None)
        routable = (w13 is not None and w2 is not None and w13.dim() == 3
                    and w13.dtype in (torch.bfloat16, torch.float16)
                    and self.moe.is_act_and_mul and not self.moe.has_bias)
        # the stock path converts the weights to its backend's layout (the CPU prepacks them
        # in place of the plain ones); ktile reads [E, 2I, H] and [E, H, I] as loaded. Triton
        # keeps that layout: on a GPU nothing is copied
        backend = getattr(getattr(self, "unquantized_backend", None), "name", "")
        plain = (w13.detach().clone(), w2.detach().clone()) \
            if routable and backend != "TRITON" else None
        stock_load(self, layer)
        experts = getattr(getattr(self, "moe_kernel", None), "fused_experts", None)
        MOE_ISA["isa"] = getattr(experts, "isa", MOE_ISA["isa"])
        if routable:
            layer._ktile_moe = plain or (layer.w13_weight, layer.w2_weight)

    def apply(self, layer, x, topk_weights, topk_ids, shared_experts, shared_experts_input):
        plain = getattr(layer, "_ktile_moe", None)
        activation = getattr(layer.activation, "value", layer.activation)
        if (plain is None or not _core.enabled(ENGINE, "fused_moe")
                or shared_experts is not None or getattr(layer, "expert_map", None) is not None
                or layer.apply_router_weight_on_input or str(activation).lower() != "silu"
                or x.dtype != plain[0].dtype or x.shape[-1] != plain[0].shape[2]):
            _fallback("fused_moe")
            return stock_apply(self, layer, x, topk_weights, topk_ids, shared_experts,
                               shared_experts_input)
        return torch.ops.ktile_vllm.fused_moe(x.contiguous(), plain[0], plain[1],
                                              topk_weights, topk_ids)

    return [Hook(Method, "process_weights_after_loading", ("self", "layer"),
                 process_weights_after_loading),
            Hook(Method, "apply", ("self", "layer", "x", "topk_weights", "topk_ids",
                                   "shared_experts", "shared_experts_input"), apply)]


def engine_fused_moe(x, w13, w2, topk_weights, topk_ids):
    """vLLM's own fused MoE on plain [E, 2I, H] / [E, H, I] weights: its Triton fused_experts
    on a GPU; on the CPU its cpu_fused_moe on weights prepacked here (as its CPU experts
    prepack them at load)."""
    if x.is_cuda:
        from vllm.model_executor.layers.fused_moe.fused_moe import fused_experts
        return fused_experts(x, w13, w2, topk_weights, topk_ids)
    from vllm import _custom_ops as vops
    isa = MOE_ISA["isa"]
    out = torch.empty_like(x)
    vops.cpu_fused_moe(out, x, vops.cpu_prepack_moe_weight(w13, isa),
                       vops.cpu_prepack_moe_weight(w2, isa), None, None, topk_weights,
                       topk_ids, "silu", isa)
    return out


# ---- AWQ linear methods (AutoAWQMarlinLinearMethod: CPU, XPU, CUDA with Marlin; ------------
# ---- AutoAWQLinearMethod: CUDA's Triton path) -------------------------------------------------

AWQ_GROUP = 128                # ktile.ops.awq_gemm's one group size
AWQ_METHODS = ("AutoAWQMarlinLinearMethod", "AutoAWQLinearMethod")


def _awq_hooks() -> list[Hook]:
    from vllm.model_executor.layers.quantization import auto_awq
    found = []
    for name in AWQ_METHODS:
        method = getattr(auto_awq, name)
        found += [Hook(method, "process_weights_after_loading", ("self", "layer"),
                       _awq_load(_keep(method, "process_weights_after_loading"))),
                  Hook(method, "apply", ("self", "layer", "x", "bias"),
                       _awq_apply(_keep(method, "apply")))]
    return found


def _awq_load(stock):
    def process_weights_after_loading(self, layer):
        config = self.quant_config
        qweight, scales = getattr(layer, "qweight", None), getattr(layer, "scales", None)
        routable = (qweight is not None and scales is not None and config.weight_bits == 4
                    and config.group_size == AWQ_GROUP and config.zero_point
                    and scales.dtype in (torch.bfloat16, torch.float16)
                    and qweight.dim() == 2 and qweight.shape[0] % AWQ_GROUP == 0)
        # the AWQ GEMM layout as loaded, kept before the stock path converts it (Marlin / the
        # CPU's WNA16 kernel repack into new tensors: these stay as they are)
        plain = (qweight.data, scales.data, layer.qzeros.data) if routable else None
        stock(self, layer)
        if routable:
            layer._ktile_awq = plain
    return process_weights_after_loading


def _awq_apply(stock):
    def apply(self, layer, x, bias=None):
        plain = getattr(layer, "_ktile_awq", None)
        if (plain is None or not _core.enabled(ENGINE, "awq_gemm") or x.dtype != plain[1].dtype
                or x.shape[-1] != plain[0].shape[0]
                or (bias is not None and bias.dtype != x.dtype)):
            _fallback("awq_gemm")
            return stock(self, layer, x, bias)
        y = torch.ops.ktile_vllm.awq_gemm(x.reshape(-1, x.shape[-1]).contiguous(), *plain)
        if bias is not None:
            y = y + bias
        return y.view(*x.shape[:-1], y.shape[-1])
    return apply


def engine_awq_gemm(x, qweight, scales, qzeros):
    """vLLM's AWQ GEMM on the AWQ layout: its `awq_gemm` on a GPU (AutoAWQLinearMethod's
    path); on the CPU, where vLLM's kernel reads its own repacked layout, the same arithmetic
    in torch: the weights dequantised to x's dtype, then a matmul."""
    if x.is_cuda:
        from vllm import _custom_ops as vops
        return vops.awq_gemm(x, qweight, scales, qzeros, 8)
    shifts = 4 * torch.tensor((0, 4, 1, 5, 2, 6, 3, 7), dtype=torch.int32)   # column j's nibble

    def codes(packed):
        return ((packed.unsqueeze(-1) >> shifts) & 0xF).reshape(packed.shape[0], -1)

    group = qweight.shape[0] // scales.shape[0]
    q, z = codes(qweight), codes(qzeros).repeat_interleave(group, 0)
    w = ((q - z).to(torch.float32) * scales.float().repeat_interleave(group, 0)).to(x.dtype)
    return x @ w


# route -> its hooks; rms_norm and fused_add_rms_norm share RMSNorm's (installed once: `hooks`)
HOOKS = {"rms_norm": _rms_hooks, "fused_add_rms_norm": _rms_hooks,
         "silu_and_mul": _silu_hooks, "rotary_embedding": _rotary_hooks,
         "linear": _linear_hooks, "kv_cache_write": _kv_hooks, "fused_moe": _moe_hooks,
         "awq_gemm": _awq_hooks}


def hooks(routes) -> list[Hook]:
    """The hooks of `routes`, each (owner, attribute) once."""
    found: dict[tuple, Hook] = {}
    for route in routes:
        for hook in HOOKS[route]():
            found.setdefault((hook.owner, hook.attr), hook)
    return list(found.values())


def register_engine_paths() -> None:
    """The engine's own path per op, as functions of the op's tensors (vllm_ops.ENGINE_PATHS):
    where ktile's op refuses a shape on a GPU, and shadow mode's comparison."""
    from vllm import ir
    from vllm.model_executor.layers.activation import SiluAndMul
    from vllm.model_executor.layers.rotary_embedding.base import RotaryEmbedding
    paths = vllm_ops.ENGINE_PATHS
    paths["rms_norm"] = lambda x, w, eps: ir.ops.rms_norm(x, w, eps, None)
    paths["fused_add_rms_norm"] = lambda x, r, w, eps: ir.ops.fused_add_rms_norm(x, r, w, eps,
                                                                                 None)
    paths["silu_and_mul"] = _ORIGINAL.get("SiluAndMul.forward_native",
                                          SiluAndMul.forward_native)
    paths["rotary_embedding"] = lambda pos, q, k, cache, head, neox: RotaryEmbedding.forward_static(
        pos, q, k, head, cache.shape[-1], cache, neox)
    paths["linear"] = torch.nn.functional.linear
    paths["kv_cache_write"] = vllm_ops.reference_kv_write
    paths["fused_moe"] = engine_fused_moe
    paths["awq_gemm"] = engine_awq_gemm
