"""The ops vLLM's hooks call (`torch.ops.ktile_vllm.*`), each deciding per call, by its shape,
what runs behind its one name (docs/integrations.md, "vLLM"):

- "ktile": the ktile.ops op: its kernel on a GPU, ktile's interpreter on the CPU;
- "reference": the op's reference semantics (ktile/ops/<op>/reference.py), on the CPU only,
  where the interpreter would be too slow for the call (more rows than the rule's `cpu_rows`);
- "engine": the engine's own path (a callable the integration registers per op), where ktile's
  op refuses the shape (its `InputError`, raised before anything runs) or the route is off.

The decision is made inside the op, at run time: vLLM compiles with a symbolic token count, so
a branch on the row count in traced Python would be baked into the graph. Counters (`_core`):
eager / captured per routed call, "reference" for the calls among them that ran the
reference, "fallback" for calls that took the engine's path. Shadow mode runs the engine's
path beside each routed call and counts differences beyond the rule's tolerance.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import torch

from ..errors import InputError
from . import _core

ENGINE = "vllm"
NAMESPACE = "ktile_vllm"


@dataclass(frozen=True)
class Rule:
    """One route's decision rule: up to `cpu_rows` rows (tokens) the CPU runs ktile's
    interpreter, above them the reference; `graph` is the op's CUDA-graph contract; shadow
    mode compares with the engine within atol + rtol · |engine|."""
    cpu_rows: int
    atol: float
    rtol: float
    graph: str = "safe"


# The interpreter's cost on this project's 2-core CI machine (tiny Qwen3, bf16): 25-150 ms per
# call at 3-15 rows, so decode steps (one row per sequence) run ktile's kernels and prefill
# or the engine's profile runs (up to thousands of rows) run the reference.
RULES: dict[str, Rule] = {
    "rms_norm": Rule(cpu_rows=8, atol=2e-2, rtol=2e-2),
    "fused_add_rms_norm": Rule(cpu_rows=8, atol=2e-2, rtol=2e-2),
    "silu_and_mul": Rule(cpu_rows=8, atol=2e-2, rtol=2e-2),
    "rotary_embedding": Rule(cpu_rows=8, atol=2e-2, rtol=2e-2),
    "linear": Rule(cpu_rows=8, atol=3e-2, rtol=2e-2),
    "kv_cache_write": Rule(cpu_rows=8, atol=0.0, rtol=0.0),
    # the interpreter runs both grouped GEMMs and the SiLU: ~0.3 s a call at the tiny
    # Qwen3-MoE's decode (hidden 256, 8 experts, top-2, up to 8 rows)
    "fused_moe": Rule(cpu_rows=8, atol=1e-2, rtol=2e-2),    # AWQ W4A16: ~0.15-0.3 s a call on the interpreter at the tiny AWQ Qwen3's decode (K 256 /
    # 512, N up to 1024, 3 rows); the engine's path rounds the dequantised weights to x's
    # dtype first, ktile's decode route does not: up to half an ulp of each weight apart
    "awq_gemm": Rule(cpu_rows=8, atol=3e-2, rtol=2e-2),
}

# op -> the engine's own path, a function of the op's tensors (set by the integration)
ENGINE_PATHS: dict[str, Callable] = {}
# op -> a function that replaces ktile.ops' op on the route's "ktile" branch (`use_kernel`)
KERNELS: dict[str, Callable] = {}


def use_kernel(op: str, fn: Callable | None) -> None:
    """Run `fn` where route `op` chooses "ktile" (a user's own kernel, examples/
    11_vllm_integration.py): same arguments and result as the route's op; the decision,
    counters, reference and shadow mode stay. None restores ktile.ops' op."""
    if op not in RULES:
        raise InputError(f"use_kernel: 'op' is {op!r}; the routes are {', '.join(RULES)}",
                         hint="pass one of the route names, e.g. use_kernel('silu_and_mul', fn)")
    if fn is None:
        KERNELS.pop(op, None)
        return
    if not callable(fn):
        raise InputError(f"use_kernel: 'fn' is a {type(fn).__name__}, not a function",
                         hint="pass the kernel's op, e.g. torch.ops.mylib.silu_and_mul")
    KERNELS[op] = fn


def decide(op: str, rows: int, device: torch.device) -> str:
    """"ktile", "reference" or "engine" for one call of `op` on `rows` rows."""
    if not _core.enabled(ENGINE, op):
        return "engine"
    if device.type == "cpu" and rows > RULES[op].cpu_rows:
        return "reference"
    return "ktile"


def _dtype(t: torch.Tensor):
    from ..dtypes import lookup
    return lookup(str(t.dtype).removeprefix("torch."))


def _np(t: Optional[torch.Tensor]):
    return None if t is None else t.detach().float().cpu().numpy()


def _torch(a: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a, np.float32)).to(like.dtype).to(like.device)


def _run(op: str, rows: int, device, ktile_fn: Callable, reference_fn: Callable,
         args: tuple, compare: Callable | None = None):
    """Decide, count, run; in shadow mode compare with the engine's path. `compare(result,
    args)` gives the tensors to compare after a call (default: the call's result)."""
    rule, ktile_fn = RULES[op], KERNELS.get(op, ktile_fn)
    choice = decide(op, rows, device)
    if choice != "engine":
        _core.check_graph(op, rule.graph)
    if choice == "ktile":
        try:
            result = ktile_fn(*args)
        except InputError:            # ktile's op refuses this shape: the engine's path runs
            if op not in ENGINE_PATHS:
                raise
            choice = "engine"
    if choice == "engine":
        if op not in ENGINE_PATHS:
            raise InputError(f"ktile_vllm::{op}: the route is off (KTILE_VLLM=0 or "
                             f"KTILE_VLLM_{op.upper()}=0) and no engine path is registered",
                             hint="install the vLLM integration first "
                                  "(ktile.integrations.vllm.install()), or turn the route on")
        _core.record(op, "fallback")
        return ENGINE_PATHS[op](*args)
    if choice == "reference":
        _core.record(op, "reference")
        result = reference_fn(*args)
    _core.record(op)
    return _finish(op, rule, result, args, compare)


def _finish(op: str, rule: Rule, result, args: tuple, compare: Callable | None):
    if not _core.shadow(ENGINE) or op not in ENGINE_PATHS:
        return result
    got = compare(result, args) if compare else result
    shadow_args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)
    want = ENGINE_PATHS[op](*shadow_args)
    want = compare(want, shadow_args) if compare else want
    _core.shadow_compare(op, got, want, rule.atol, rule.rtol)
    return result


# ---- rms_norm ----------------------------------------------------------------------------

def _rms_ktile(x, weight, eps):
    import ktile.ops as ops
    return ops.rms_norm(x, weight, eps)


def _rms_reference(x, weight, eps):
    from ..ops.rmsnorm.reference import rms_norm
    return _torch(rms_norm(_np(x), _np(weight), eps, _dtype(x)), x)


@torch.library.custom_op(f"{NAMESPACE}::rms_norm", mutates_args=())
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return _run("rms_norm", x.numel() // x.shape[-1], x.device, _rms_ktile, _rms_reference,
                (x, weight, eps))


@rms_norm.register_fake
def _(x, weight, eps):
    return torch.empty_like(x)


# ---- fused_add_rms_norm (functional: (out, residual_out)) --------------------------------

def _fused_ktile(x, residual, weight, eps):
    import ktile.ops as ops
    return ops.fused_add_rms_norm(x, residual, weight, eps)


def _fused_reference(x, residual, weight, eps):
    from ..ops.fused_add_rmsnorm.reference import fused_add_rms_norm
    out, h = fused_add_rms_norm(_np(x), _np(residual), _np(weight), eps, _dtype(x))
    return _torch(out, x), _torch(h, x)


@torch.library.custom_op(f"{NAMESPACE}::fused_add_rms_norm", mutates_args=())
def fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                       eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    return _run("fused_add_rms_norm", x.numel() // x.shape[-1], x.device, _fused_ktile,
                _fused_reference, (x, residual, weight, eps))


@fused_add_rms_norm.register_fake
def _(x, residual, weight, eps):
    return torch.empty_like(x), torch.empty_like(x)


# ---- silu_and_mul --------------------------------------------------------------------------

def _silu_ktile(x):
    import ktile.ops as ops
    return ops.silu_and_mul(x)


def _silu_reference(x):
    from ..ops.activations.reference import silu_and_mul
    return _torch(silu_and_mul(_np(x), _dtype(x)), x)


@torch.library.custom_op(f"{NAMESPACE}::silu_and_mul", mutates_args=())
def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    return _run("silu_and_mul", x.numel() // x.shape[-1], x.device, _silu_ktile,
                _silu_reference, (x,))


@silu_and_mul.register_fake
def _(x):
    return x.new_empty(*x.shape[:-1], x.shape[-1] // 2)


# ---- rotary_embedding (functional: new (query, key)) -----------------------------------

def _rope_ktile(positions, query, key, cos_sin_cache, head_size, is_neox):
    import ktile.ops as ops
    q, k = query.clone(memory_format=torch.contiguous_format), key.contiguous().clone()
    ops.rotary_embedding(positions, q, k, head_size, cos_sin_cache, is_neox)
    return q, k


def _rope_reference(positions, query, key, cos_sin_cache, head_size, is_neox):
    from ..ops.rotary.reference import rotary
    pos, cache = positions.reshape(-1).cpu().numpy(), _np(cos_sin_cache)
    tokens = positions.numel()
    return tuple(_torch(rotary(pos, _np(t).reshape(tokens, -1), cache, head_size, is_neox)
                        .reshape(t.shape), t) for t in (query, key))


@torch.library.custom_op(f"{NAMESPACE}::rotary_embedding", mutates_args=())
def rotary_embedding(positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor,
                     cos_sin_cache: torch.Tensor, head_size: int,
                     is_neox: bool) -> tuple[torch.Tensor, torch.Tensor]:
    return _run("rotary_embedding", positions.numel(), query.device, _rope_ktile,
                _rope_reference, (positions, query, key, cos_sin_cache, head_size, is_neox))


@rotary_embedding.register_fake
def _(positions, query, key, cos_sin_cache, head_size, is_neox):
    return torch.empty_like(query), torch.empty_like(key)


# ---- linear --------------------------------------------------------------------------------

def _linear_ktile(x, weight, bias):
    import ktile.ops as ops
    return ops.linear(x, weight, bias)


def _linear_reference(x, weight, bias):
    from ..ops.matmul.reference import matmul
    rows = _np(x).reshape(-1, x.shape[-1])
    y = matmul(rows, _np(weight).T, _np(bias), _dtype(x))
    return _torch(y, x).view(*x.shape[:-1], weight.shape[0])


@torch.library.custom_op(f"{NAMESPACE}::linear", mutates_args=())
def linear(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor]) -> torch.Tensor:
    return _run("linear", x.numel() // x.shape[-1], x.device, _linear_ktile, _linear_reference,
                (x, weight, bias))


@linear.register_fake
def _(x, weight, bias):
    return x.new_empty(*x.shape[:-1], weight.shape[0])


# ---- kv_cache_write (in place, flash layout [blocks, block_size, heads, head_size]) ----------

def _kv_ktile(key, value, key_cache, value_cache, slot_mapping):
    import ktile.ops as ops
    ops.kv_cache_write(key, value, key_cache, value_cache, slot_mapping)


def reference_kv_write(key, value, key_cache, value_cache, slot_mapping):
    slots = slot_mapping.reshape(-1)
    keep = slots >= 0                    # a slot of -1 is padding: nothing written
    for cache, new in ((key_cache, key), (value_cache, value)):
        rows = cache.view(-1, cache.shape[-2] * cache.shape[-1])
        rows[slots[keep]] = new.reshape(new.shape[0], -1)[keep].to(cache.dtype)


@torch.library.custom_op(f"{NAMESPACE}::kv_cache_write", mutates_args=("key_cache", "value_cache"))
def kv_cache_write(key: torch.Tensor, value: torch.Tensor, key_cache: torch.Tensor,
                   value_cache: torch.Tensor, slot_mapping: torch.Tensor) -> None:
    args = (key, value, key_cache, value_cache, slot_mapping)
    _run("kv_cache_write", key.shape[0], key.device, _kv_ktile, reference_kv_write, args,
         compare=lambda result, call_args: tuple(call_args[2:4]))


@kv_cache_write.register_fake
def _(key, value, key_cache, value_cache, slot_mapping):
    return None


# ---- fused_moe (vLLM's fused_experts: SiLU, no bias, unquantised) ----------------------------

def _moe_ktile(x, w13, w2, topk_weights, topk_ids):
    import ktile.ops as ops
    return ops.fused_moe(x, w13, w2, topk_weights, topk_ids)


def _moe_reference(x, w13, w2, topk_weights, topk_ids):
    from ..ops.moe.reference import fused_moe as reference
    out, _ = reference(_np(x), _np(w13), _np(w2), _np(topk_weights), topk_ids.cpu().numpy(),
                       _dtype(x))
    return _torch(out, x)


@torch.library.custom_op(f"{NAMESPACE}::fused_moe", mutates_args=())
def fused_moe(x: torch.Tensor, w13: torch.Tensor, w2: torch.Tensor, topk_weights: torch.Tensor,
              topk_ids: torch.Tensor) -> torch.Tensor:
    return _run("fused_moe", x.shape[0], x.device, _moe_ktile, _moe_reference,
                (x, w13, w2, topk_weights, topk_ids))


@fused_moe.register_fake
def _(x, w13, w2, topk_weights, topk_ids):
    return torch.empty_like(x)


# ---- awq_gemm (W4A16 in AutoAWQ's GEMM layout, group 128; x [M, K] 2-D) ----------------------

def _awq_ktile(x, qweight, scales, qzeros):
    import ktile.ops as ops
    return ops.awq_gemm(x, qweight, scales, qzeros)


def _awq_reference(x, qweight, scales, qzeros):
    from ..ops.awq.reference import awq_gemm as reference
    return _torch(reference(_np(x), qweight.cpu().numpy(), _np(scales), qzeros.cpu().numpy()), x)


@torch.library.custom_op(f"{NAMESPACE}::awq_gemm", mutates_args=())
def awq_gemm(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor,
             qzeros: torch.Tensor) -> torch.Tensor:
    return _run("awq_gemm", x.shape[0], x.device, _awq_ktile, _awq_reference,
                (x, qweight, scales, qzeros))


@awq_gemm.register_fake
def _(x, qweight, scales, qzeros):
    return x.new_empty(x.shape[0], scales.shape[1])
