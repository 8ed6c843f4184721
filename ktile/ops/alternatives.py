"""The alternatives of ktile's ops: other implementations a routing table may route a shape
bucket to (docs/tuning.md), and the formulas the op benchmark times (ktile/bench).

- "torch": the op's eager torch formula, the engines' own (vLLM's `forward_native` forms,
  torch's layer_norm and softmax). These functions are the one definition: the benchmark's
  `Bench.torch` columns call them too.
- "triton": the Triton kernels written here (alternatives_triton.py,
  alternatives_triton_pointwise.py), imported only when a table routes to one.

`ALTERNATIVES` maps a registered op (`torch.ops.ktile.<name>`, its qualname) to its
`Alternative`: which op's routing table routes it, the (rows, cols) that table sees for a call's
arguments, and per kind a callable with the registered op's own signature and contract - it
returns what the op returns and writes what the op writes (out=, the in-place forms' inputs).

Not offered, and why:
- dropout has no "torch" route: torch's dropout draws other random numbers (its own generator
  and offsets), so it would not be ktile's seeded dropout. Its "triton" route is ktile's
  semantics bit for bit (tl.rand4x is what ktile/ops/rand/reference.py rand4 reproduces).
- embedding has no "torch" route: F.embedding raises (on a GPU: a device-side assert) for an
  id outside the table, where ktile's embedding gives a zero row; the Triton kernel masks them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

KINDS = ("torch", "triton")
FP8_MAX = 448.0
NO_TORCH = {
    "dropout": "torch's dropout draws other random numbers than ktile's seeded dropout, so "
               "its result would differ",
    "embedding": "F.embedding raises (a device-side assert on a GPU) for an id outside the "
                 "table, where ktile's embedding gives a zero row",
}


# ---- the torch formulas (the benchmark's too) ------------------------------------------------

def rms_norm_torch(x, w, eps: float):
    """vLLM's RMSNorm.forward_native: normalise in fp32, round, multiply by the weight."""
    import torch
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return h.to(x.dtype) * w


def fused_add_rms_norm_torch(x, residual, w, eps: float):
    """(rms_norm(x + residual), x + residual), the sum rounded to the dtype first."""
    h = x + residual
    return rms_norm_torch(h, w, eps), h


def layer_norm_torch(x, w, b, eps: float):
    import torch
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def softmax_torch(x, dim: int = -1):
    import torch
    return torch.softmax(x, dim=dim)


def _act(name: str):
    import torch.nn.functional as F
    return {"silu": F.silu, "gelu": F.gelu,
            "gelu_tanh": lambda g: F.gelu(g, approximate="tanh")}[name]


def act_and_mul_torch(x, act: str = "silu"):
    """vLLM's SiluAndMul / GeluAndMul forward_native: act(x[..., :d]) * x[..., d:]."""
    d = x.shape[-1] // 2
    return _act(act)(x[..., :d]) * x[..., d:]


def int8_per_token_torch(x):
    """vLLM's dynamic per-token int8: scale = max|row| / 127, q = round(x / scale)."""
    import torch
    xf = x.float()
    amax = xf.abs().amax(dim=-1, keepdim=True)
    inverse = torch.where(amax > 0, 127.0 / amax, torch.zeros_like(amax))
    q = torch.round(xf * inverse).clamp(-128, 127).to(torch.int8)
    return q, (amax / 127.0).view(-1, 1)


def fp8_per_token_torch(x):
    """vLLM's dynamic per-token fp8 e4m3: scale = max(max|row| / 448, 1 / (448 * 512))."""
    import torch
    xf = x.float()
    amax = xf.abs().amax(dim=-1, keepdim=True)
    scale = (amax / FP8_MAX).clamp(min=1.0 / (FP8_MAX * 512.0))
    q = (xf * (1.0 / scale)).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q, scale.view(-1, 1)


# ---- the registered ops' alternatives --------------------------------------------------------

@dataclass(frozen=True)
class Alternative:
    op: str                                  # the Op whose routing table routes it
    shape: Callable                          # (*args) -> (rows, cols) as that table sees them
    torch: Callable | None = None            # (*args) -> the op's result, writing its outputs
    triton: Callable | None = None
    lead: int = 0                            # the argument whose device decides


def _rows_cols(x, *rest):
    cols = x.shape[-1]
    return x.numel() // cols, cols


def _softmax_shape(x, dim, *rest):
    cols = x.shape[dim]
    return x.numel() // cols, cols


def _act_shape(x, *rest):
    return x.numel() // x.shape[-1], x.shape[-1] // 2


def _embedding_shape(ids, weight, *rest):
    return ids.numel(), weight.shape[-1]


def _norms():
    return __import__("ktile.ops.alternatives_triton", fromlist=["_"])


def _pointwise():
    return __import__("ktile.ops.alternatives_triton_pointwise", fromlist=["_"])


def _discard(value) -> None:
    """A form that returns nothing (out=, in place): the launcher's returned tensors dropped."""
    return None


def _into(out, value) -> None:
    out.copy_(value)


def _fused_in_place_torch(x, residual, w, eps):
    out, h = fused_add_rms_norm_torch(x, residual, w, eps)
    residual.copy_(h)
    x.copy_(out)


def _fused_out_torch(x, residual, w, eps, out, residual_out):
    normed, h = fused_add_rms_norm_torch(x, residual, w, eps)
    out.copy_(normed)
    residual_out.copy_(h)


def _softmax_triton(x, dim, out=None):
    """Over the last axis; another axis moved last and back, as ktile's own call does."""
    last = x.dim() - 1
    if dim == last:
        return _norms().softmax(x, out)
    moved = _norms().softmax(x.movedim(dim, -1).contiguous()).movedim(-1, dim)
    if out is None:
        return moved.contiguous()
    out.copy_(moved)
    return out


ALTERNATIVES: dict[str, Alternative] = {
    "ktile::rms_norm": Alternative(
        "rms_norm", _rows_cols, torch=rms_norm_torch,
        triton=lambda x, w, eps: _norms().rms_norm(x, w, eps)),
    "ktile::rms_norm_out": Alternative(
        "rms_norm", _rows_cols,
        torch=lambda x, w, eps, out: _into(out, rms_norm_torch(x, w, eps)),
        triton=lambda x, w, eps, out: _discard(_norms().rms_norm(x, w, eps, out))),
    "ktile::fused_add_rms_norm": Alternative(
        "fused_add_rms_norm", _rows_cols, torch=fused_add_rms_norm_torch,
        triton=lambda x, r, w, eps: _norms().fused_add_rms_norm(x, r, w, eps)),
    "ktile::fused_add_rms_norm_out": Alternative(
        "fused_add_rms_norm", _rows_cols, torch=_fused_out_torch,
        triton=lambda x, r, w, eps, out, r_out:
            _discard(_norms().fused_add_rms_norm(x, r, w, eps, out, r_out))),
    "ktile::fused_add_rms_norm_": Alternative(
        "fused_add_rms_norm", _rows_cols, torch=_fused_in_place_torch,
        triton=lambda x, r, w, eps: _discard(_norms().fused_add_rms_norm(x, r, w, eps, x, r))),
    "ktile::layer_norm": Alternative(
        "layer_norm", _rows_cols, torch=layer_norm_torch,
        triton=lambda x, w, b, eps: _norms().layer_norm(x, w, b, eps)),
    "ktile::layer_norm_out": Alternative(
        "layer_norm", _rows_cols,
        torch=lambda x, w, b, eps, out: _into(out, layer_norm_torch(x, w, b, eps)),
        triton=lambda x, w, b, eps, out: _discard(_norms().layer_norm(x, w, b, eps, out))),
    "ktile::softmax": Alternative(
        "softmax", _softmax_shape, torch=lambda x, dim: softmax_torch(x, dim).contiguous(),
        triton=lambda x, dim: _softmax_triton(x, dim)),
    "ktile::softmax_out": Alternative(
        "softmax", _softmax_shape, torch=lambda x, dim, out: _into(out, softmax_torch(x, dim)),
        triton=lambda x, dim, out: _discard(_softmax_triton(x, dim, out))),
    "ktile::act_and_mul": Alternative(
        "act_and_mul", _act_shape, torch=act_and_mul_torch,
        triton=lambda x, act: _pointwise().act_and_mul(act, x)),
    "ktile::act_and_mul_out": Alternative(
        "act_and_mul", _act_shape,
        torch=lambda x, act, out: _into(out, act_and_mul_torch(x, act)),
        triton=lambda x, act, out: _discard(_pointwise().act_and_mul(act, x, out))),
    "ktile::scaled_int8_quant_per_token": Alternative(
        "scaled_int8_quant", _rows_cols, torch=int8_per_token_torch,
        triton=lambda x: _pointwise().quant_per_token(x, __import__("torch").int8, False)),
    "ktile::scaled_fp8_quant_per_token": Alternative(
        "scaled_fp8_quant", _rows_cols, torch=fp8_per_token_torch,
        triton=lambda x: _pointwise().quant_per_token(
            x, __import__("torch").float8_e4m3fn, True)),
    "ktile::embedding": Alternative(
        "embedding", _embedding_shape, lead=1,
        triton=lambda ids, weight: _pointwise().embedding(ids, weight)),
    "ktile::embedding_out": Alternative(
        "embedding", _embedding_shape, lead=1,
        triton=lambda ids, weight, out: _discard(_pointwise().embedding(ids, weight, out))),
    "ktile::dropout": Alternative(
        "dropout", _rows_cols, triton=lambda x, p, seed: _pointwise().dropout(x, p, seed)),
    "ktile::dropout_out": Alternative(
        "dropout", _rows_cols,
        triton=lambda x, p, seed, out: _discard(_pointwise().dropout(x, p, seed, out))),
}


def kinds_of(op_name: str) -> tuple[str, ...]:
    """The alternative kinds every registered form of `op_name` has (a route must serve all
    of an op's forms: its table routes them all)."""
    forms = [a for a in ALTERNATIVES.values() if a.op == op_name]
    return tuple(k for k in KINDS if forms and all(getattr(a, k) is not None for a in forms))


def unavailable(op_name: str, kind: str) -> str | None:
    """Why `op_name` cannot take a `kind` route in this process, or None."""
    if kind not in KINDS:
        return f"unknown route kind {kind!r} (kinds: ktile, {', '.join(KINDS)})"
    if kind not in kinds_of(op_name):
        why = NO_TORCH.get(op_name) if kind == "torch" else None
        return f"{op_name} has no {kind} alternative" + (f" ({why})" if why else "")
    if kind == "triton":
        return triton_missing()
    return None


def triton_missing() -> str | None:
    """Why the Triton alternatives do not import here, or None."""
    try:
        _norms()
        _pointwise()
    except Exception as err:  # noqa: BLE001 - an unusable triton is any failure to import
        return f"triton does not import here ({type(err).__name__}: {err})"
    return None
