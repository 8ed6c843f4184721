"""The ops SGLang's hooks call (`torch.ops.ktile_sglang.*`), each deciding per call what runs
behind its one name (docs/integrations.md, "SGLang"):

- "ktile": the ktile.ops op: its kernel on a GPU, ktile's interpreter on the CPU;
- "reference": the op's reference semantics (ktile/ops/<op>/reference.py), on the CPU only,
  above `CPU_ROWS` rows (the interpreter would be too slow for the call);
- "engine": SGLang's own semantics (its layers' `forward_native`, as functions of the op's
  tensors: `_engine_*`), where ktile's op refuses the shape (its `InputError`, raised before
  anything runs) or the route is switched off after install.

Opaque ops, so that SGLang's torch.compile / CUDA-graph modes keep the decision at run time
and the counters count calls, not traces. Counters: `_core` routes "sglang.<op>".
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import InputError
from . import _core

ENGINE = "sglang"
NAMESPACE = "ktile_sglang"
CPU_ROWS = 8            # the interpreter's share on the CPU (25-150 ms a call at 3-15 rows)


def route_name(op: str) -> str:
    return f"{ENGINE}.{op}"


def decide(op: str, rows: int, device: torch.device) -> str:
    """"ktile", "reference" or "engine" for one call of `op` on `rows` rows."""
    if not _core.enabled(ENGINE, op):
        return "engine"
    if device.type == "cpu" and rows > CPU_ROWS:
        return "reference"
    return "ktile"


def _run(op: str, rows: int, device, ktile_fn: Callable, reference_fn: Callable,
         engine_fn: Callable, args: tuple):
    choice = decide(op, rows, device)
    if choice == "ktile":
        _core.check_graph(route_name(op), "safe")
        try:
            result = ktile_fn(*args)
            _core.record(route_name(op))
            return result
        except InputError:            # ktile's op refuses this shape: SGLang's semantics run
            choice = "engine"
    if choice == "reference":
        _core.record(route_name(op), "reference")
        _core.record(route_name(op))
        return reference_fn(*args)
    _core.record(route_name(op), "fallback")
    return engine_fn(*args)


def _dtype(t: torch.Tensor):
    from ..dtypes import lookup
    return lookup(str(t.dtype).removeprefix("torch."))


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().float().cpu().numpy()


def _torch(a: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a, np.float32)).to(like.dtype).to(like.device)


def _rows(x: torch.Tensor) -> int:
    return x.numel() // max(x.shape[-1], 1)


# ---- SGLang's semantics (RMSNorm / SiluAndMul / GeluAndMul / RotaryEmbedding.forward_native) --

def _engine_rms(x, weight, eps):
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return (h * weight).to(x.dtype)


def _engine_fused(x, residual, weight, eps):
    h = x.float() + residual.float()
    return _engine_rms(h, weight, eps).to(x.dtype), h.to(x.dtype)


def _engine_silu(x):
    d = x.shape[-1] // 2
    return F.silu(x[..., :d]) * x[..., d:]


def _engine_gelu(x, approximate):
    d = x.shape[-1] // 2
    return F.gelu(x[..., :d], approximate=approximate) * x[..., d:]


def _engine_rope(positions, query, key, cache, head_size, is_neox):
    rot = cache.shape[-1]
    cos, sin = cache.index_select(0, positions.flatten()).chunk(2, dim=-1)

    def rotate(t):
        t3 = t.reshape(positions.numel(), -1, head_size)
        x, rest = t3[..., :rot], t3[..., rot:]
        c, s = cos.unsqueeze(-2).to(t.dtype), sin.unsqueeze(-2).to(t.dtype)
        if is_neox:
            x1, x2 = x.chunk(2, dim=-1)
            y = torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)
        else:
            x1, x2 = x[..., ::2], x[..., 1::2]
            y = torch.stack((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).flatten(-2)
        return torch.cat((y, rest), dim=-1).reshape(t.shape)
    return rotate(query), rotate(key)


# ---- rms_norm / fused_add_rms_norm -------------------------------------------------------

def _rms_ktile(x, weight, eps):
    import ktile.ops as ops
    return ops.rms_norm(x, weight, eps)


def _rms_reference(x, weight, eps):
    from ..ops.rmsnorm.reference import rms_norm
    return _torch(rms_norm(_np(x), _np(weight), eps, _dtype(x)), x)


@torch.library.custom_op(f"{NAMESPACE}::rms_norm", mutates_args=())
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return _run("rms_norm", _rows(x), x.device, _rms_ktile, _rms_reference, _engine_rms,
                (x, weight, eps))


@rms_norm.register_fake
def _(x, weight, eps):
    return torch.empty_like(x)


def _fused_ktile(x, residual, weight, eps):
    import ktile.ops as ops
    return ops.fused_add_rms_norm(x, residual, weight, eps)


def _fused_reference(x, residual, weight, eps):
    from ..ops.fused_add_rmsnorm.reference import fused_add_rms_norm as ref
    out, h = ref(_np(x), _np(residual), _np(weight), eps, _dtype(x))
    return _torch(out, x), _torch(h, x)


@torch.library.custom_op(f"{NAMESPACE}::fused_add_rms_norm", mutates_args=())
def fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                       eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    return _run("fused_add_rms_norm", _rows(x), x.device, _fused_ktile, _fused_reference,
                _engine_fused, (x, residual, weight, eps))


@fused_add_rms_norm.register_fake
def _(x, residual, weight, eps):
    return torch.empty_like(x), torch.empty_like(x)


def _copy_back(fn):
    """An in-place form of a functional path: results copied into x and residual."""
    def run(x, residual, weight, eps):
        out, h = fn(x, residual, weight, eps)
        residual.copy_(h)
        x.copy_(out)
    return run


def _fused_ktile_(x, residual, weight, eps):
    import ktile.ops as ops
    ops.fused_add_rms_norm_(x, residual, weight, eps)


@torch.library.custom_op(f"{NAMESPACE}::fused_add_rms_norm_", mutates_args=("x", "residual"))
def fused_add_rms_norm_(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                        eps: float) -> None:
    """SGLang's CUDA form: residual <- x + residual, x <- RMSNorm(residual) * weight."""
    _run("fused_add_rms_norm", _rows(x), x.device, _fused_ktile_,
         _copy_back(_fused_reference), _copy_back(_engine_fused), (x, residual, weight, eps))


@fused_add_rms_norm_.register_fake
def _(x, residual, weight, eps):
    return None


# ---- silu_and_mul / gelu_and_mul ---------------------------------------------------------

def _silu_ktile(x):
    import ktile.ops as ops
    return ops.silu_and_mul(x)


def _silu_reference(x):
    from ..ops.activations.reference import silu_and_mul as ref
    return _torch(ref(_np(x), _dtype(x)), x)


@torch.library.custom_op(f"{NAMESPACE}::silu_and_mul", mutates_args=())
def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    return _run("silu_and_mul", _rows(x), x.device, _silu_ktile, _silu_reference,
                _engine_silu, (x,))


@silu_and_mul.register_fake
def _(x):
    return x.new_empty(*x.shape[:-1], x.shape[-1] // 2)


def _gelu_ktile(x, approximate):
    import ktile.ops as ops
    return ops.gelu_and_mul(x, approximate)


def _gelu_reference(x, approximate):
    from ..ops.activations.reference import gelu_and_mul as ref
    return _torch(ref(_np(x), _dtype(x), approximate), x)


@torch.library.custom_op(f"{NAMESPACE}::gelu_and_mul", mutates_args=())
def gelu_and_mul(x: torch.Tensor, approximate: str) -> torch.Tensor:
    return _run("gelu_and_mul", _rows(x), x.device, _gelu_ktile, _gelu_reference,
                _engine_gelu, (x, approximate))


@gelu_and_mul.register_fake
def _(x, approximate):
    return x.new_empty(*x.shape[:-1], x.shape[-1] // 2)


# ---- rotary_embedding (functional, and SGLang's CUDA in-place form) -----------------------

def _rope_ktile(positions, query, key, cache, head_size, is_neox):
    import ktile.ops as ops
    q, k = query.clone(), key.clone()
    ops.rotary_embedding(positions, q, k, head_size, cache, is_neox)
    return q, k


def _rope_reference(positions, query, key, cache, head_size, is_neox):
    from ..ops.rotary.reference import rotary
    pos, c, tokens = positions.reshape(-1).cpu().numpy(), _np(cache), positions.numel()
    return tuple(_torch(rotary(pos, _np(t).reshape(tokens, -1), c, head_size, is_neox)
                        .reshape(t.shape), t) for t in (query, key))


@torch.library.custom_op(f"{NAMESPACE}::rotary_embedding", mutates_args=())
def rotary_embedding(positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor,
                     cos_sin_cache: torch.Tensor, head_size: int,
                     is_neox: bool) -> tuple[torch.Tensor, torch.Tensor]:
    return _run("rotary_embedding", positions.numel(), query.device, _rope_ktile,
                _rope_reference, _engine_rope,
                (positions, query, key, cos_sin_cache, head_size, is_neox))


@rotary_embedding.register_fake
def _(positions, query, key, cos_sin_cache, head_size, is_neox):
    return torch.empty_like(query), torch.empty_like(key)


def _rope_ktile_(positions, query, key, cache, head_size, is_neox):
    import ktile.ops as ops
    ops.rotary_embedding(positions, query, key, head_size, cache, is_neox)


def _rope_copy_back(fn):
    def run(positions, query, key, cache, head_size, is_neox):
        q, k = fn(positions, query, key, cache, head_size, is_neox)
        query.copy_(q)
        key.copy_(k)
    return run


@torch.library.custom_op(f"{NAMESPACE}::rotary_embedding_", mutates_args=("query", "key"))
def rotary_embedding_(positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor,
                      cos_sin_cache: torch.Tensor, head_size: int, is_neox: bool) -> None:
    """SGLang's CUDA form: query and key rotated in place."""
    _run("rotary_embedding", positions.numel(), query.device, _rope_ktile_,
         _rope_copy_back(_rope_reference), _rope_copy_back(_engine_rope),
         (positions, query, key, cos_sin_cache, head_size, is_neox))


@rotary_embedding_.register_fake
def _(positions, query, key, cos_sin_cache, head_size, is_neox):
    return None
