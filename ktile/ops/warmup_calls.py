"""How warm-up (and the tuner) calls each public op function at a (rows, cols) problem: `CALLS`,
call name -> `OpCall`. rows and cols are what the op's routing table reads (tokens and the row
width; for matmul / linear M and N, with K as `inner`). A function with forms that build other
kernels (a static or dynamic scale, an fp8 input, GPT-J rotation, a cos/sin cache in the
query's dtype) has one call per form, named `<function>_<form>`. The attention, MoE, fp8 GEMM
and AWQ calls are in warmup_calls_layers.py.

Arguments are CPU tensors made by torch.empty (never initialised) unless `device` says
otherwise; indices, scales and caches are zeros (positions and slots inside their tables)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .warmup_calls_layers import CALLS as LAYER_CALLS


@dataclass(frozen=True)
class OpCall:
    """How to call `ktile.ops.<function>` (of op `op`) at `rows` x `cols`: `make(rows, cols,
    dtype, sizes, device)` returns the positional arguments (tensors of torch `dtype`);
    `sizes` holds the model's other sizes (vocab_size, head_dim, ...) and `inner` (K of a
    matmul). `name` is the call's key in CALLS: the function's, or `<function>_<form>`.
    `keywords(sizes)` gives the keyword arguments (None: none); `targets` the targets where
    the op routes this form (None: every target; model_shapes leaves the call out elsewhere,
    and a call there raises the op's InputError)."""
    name: str
    function: str
    op: str
    make: Callable[..., tuple]
    inner: bool = False             # its problems are (rows, cols, inner)
    keywords: Callable[[dict], dict] | None = None
    targets: tuple[str, ...] | None = None

    def routes_on(self, target: str) -> bool:
        return self.targets is None or target in self.targets


def _empty(shape, dtype, device):
    import torch
    return torch.empty(shape, dtype=dtype, device=device)


def _zeros(shape, dtype, device):
    import torch
    return torch.zeros(shape, dtype=dtype, device=device)


def _f32(shape, device):
    import torch
    return torch.zeros(shape, dtype=torch.float32, device=device)


def _norm(rows, cols, dtype, sizes, device="cpu"):
    return _empty((rows, cols), dtype, device), _zeros((cols,), dtype, device)


def _fused(rows, cols, dtype, sizes, device="cpu"):
    return (_empty((rows, cols), dtype, device), _empty((rows, cols), dtype, device),
            _zeros((cols,), dtype, device))


def _layer_norm(rows, cols, dtype, sizes, device="cpu"):
    return (_empty((rows, cols), dtype, device), _zeros((cols,), dtype, device),
            _zeros((cols,), dtype, device))


def _layer_norm_backward(rows, cols, dtype, sizes, device="cpu"):
    return (_empty((rows, cols), dtype, device), _empty((rows, cols), dtype, device),
            _zeros((cols,), dtype, device), _f32((rows,), device), _f32((rows,), device))


def _gated(rows, cols, dtype, sizes, device="cpu"):
    return (_empty((rows, 2 * cols), dtype, device),)


def _gated_tanh(rows, cols, dtype, sizes, device="cpu"):
    return _empty((rows, 2 * cols), dtype, device), "tanh"


def _one(rows, cols, dtype, sizes, device="cpu"):
    return (_empty((rows, cols), dtype, device),)


def _one_tanh(rows, cols, dtype, sizes, device="cpu"):
    return _empty((rows, cols), dtype, device), "tanh"


def _two(rows, cols, dtype, sizes, device="cpu"):
    return _empty((rows, cols), dtype, device), _empty((rows, cols), dtype, device)


def _dropout(rows, cols, dtype, sizes, device="cpu"):
    return _empty((rows, cols), dtype, device), 0.1, 0


def _embedding(rows, cols, dtype, sizes, device="cpu"):
    import torch
    vocab = sizes.get("vocab_size", 1)
    return _zeros((rows,), torch.int32, device), _empty((vocab, cols), dtype, device)


def _rotary_of(cache_dtype=None, neox=True, kv=True):
    """rotary_embedding's call: query [rows, cols], key [rows, kv heads x head] (cols when the
    model's num_kv_heads is not given), a one-position cos/sin cache (float32, or query's
    dtype for `cache_dtype="query"`)."""
    def make(rows, cols, dtype, sizes, device="cpu"):
        import torch
        head = sizes.get("head_dim", 128)
        kv_cols = sizes.get("num_kv_heads", 0) * head if kv else 0
        cache = _zeros((1, head), dtype if cache_dtype == "query" else torch.float32, device)
        return (_zeros((rows,), torch.int64, device), _empty((rows, cols), dtype, device),
                _empty((rows, kv_cols or cols), dtype, device), head, cache, neox)
    return make


def _kv_cache(rows, cols, dtype, sizes, device="cpu"):
    """key and value [rows, cols] as [rows, kv heads, head]; caches of blocks x 16 slots."""
    import torch
    head = sizes.get("head_dim", 128) if cols % sizes.get("head_dim", 128) == 0 else cols
    heads, block = cols // head, 16
    blocks = -(-rows // block)
    return (_empty((rows, heads, head), dtype, device), _empty((rows, heads, head), dtype, device),
            _empty((blocks, block, heads, head), dtype, device),
            _empty((blocks, block, heads, head), dtype, device),
            _zeros((rows,), torch.int64, device))


def _linear(rows, cols, dtype, sizes, device="cpu"):
    inner = sizes.get("inner") or cols
    return _empty((rows, inner), dtype, device), _empty((cols, inner), dtype, device)


def _matmul(rows, cols, dtype, sizes, device="cpu"):
    inner = sizes.get("inner") or cols
    return _empty((rows, inner), dtype, device), _empty((inner, cols), dtype, device)


def _quant(scale=False, per_token=None):
    def make(rows, cols, dtype, sizes, device="cpu"):
        x = _empty((rows, cols), dtype, device)
        if scale:
            return x, _f32((1,), device)
        return (x,) if per_token is None else (x, None, per_token)
    return make


def _dequant(q_dtype: str, per_token: bool):
    def make(rows, cols, dtype, sizes, device="cpu"):
        import torch
        q = _zeros((rows, cols), getattr(torch, q_dtype), device)
        return q, _f32((rows, 1) if per_token else (1,), device), dtype
    return make


ELEMENTWISE_BINARY = ("add", "sub", "mul", "maximum", "minimum")
ELEMENTWISE_UNARY = ("exp", "relu", "gelu", "silu", "neg", "abs")

CALLS = {call.name: call for call in (
    OpCall("rms_norm", "rms_norm", "rms_norm", _norm),
    OpCall("fused_add_rms_norm", "fused_add_rms_norm", "fused_add_rms_norm", _fused),
    OpCall("fused_add_rms_norm_", "fused_add_rms_norm_", "fused_add_rms_norm", _fused),
    OpCall("layer_norm", "layer_norm", "layer_norm", _layer_norm),
    OpCall("layer_norm_backward", "layer_norm_backward", "layer_norm_backward",
           _layer_norm_backward),
    OpCall("silu_and_mul", "silu_and_mul", "act_and_mul", _gated),
    OpCall("gelu_and_mul", "gelu_and_mul", "act_and_mul", _gated),
    OpCall("gelu_and_mul_tanh", "gelu_and_mul", "act_and_mul", _gated_tanh),
    OpCall("softmax", "softmax", "softmax", _one),
    *(OpCall(fn, fn, "elementwise", _two) for fn in ELEMENTWISE_BINARY),
    *(OpCall(fn, fn, "elementwise", _one) for fn in ELEMENTWISE_UNARY),
    OpCall("gelu_tanh", "gelu", "elementwise", _one_tanh),
    OpCall("dropout", "dropout", "dropout", _dropout),
    OpCall("embedding", "embedding", "embedding", _embedding),
    OpCall("rotary_embedding", "rotary_embedding", "rotary_embedding", _rotary_of()),
    OpCall("rotary_embedding_own_cache", "rotary_embedding", "rotary_embedding",
           _rotary_of("query")),
    OpCall("rotary_embedding_gptj", "rotary_embedding", "rotary_embedding",
           _rotary_of(neox=False)),
    OpCall("kv_cache_write", "kv_cache_write", "kv_cache_write", _kv_cache),
    OpCall("linear", "linear", "matmul", _linear, inner=True),
    OpCall("matmul", "matmul", "matmul", _matmul, inner=True),
    OpCall("scaled_int8_quant", "scaled_int8_quant", "scaled_int8_quant", _quant()),
    OpCall("scaled_int8_quant_static", "scaled_int8_quant", "scaled_int8_quant",
           _quant(scale=True)),
    OpCall("scaled_fp8_quant", "scaled_fp8_quant", "scaled_fp8_quant", _quant(per_token=False)),
    OpCall("scaled_fp8_quant_per_token", "scaled_fp8_quant", "scaled_fp8_quant",
           _quant(per_token=True)),
    OpCall("scaled_fp8_quant_static", "scaled_fp8_quant", "scaled_fp8_quant",
           _quant(scale=True)),
    OpCall("dequantize", "dequantize", "dequantize", _dequant("int8", True)),
    OpCall("dequantize_per_tensor", "dequantize", "dequantize", _dequant("int8", False)),
    OpCall("dequantize_fp8", "dequantize", "dequantize", _dequant("float8_e4m3fn", True)),
    OpCall("dequantize_fp8_per_tensor", "dequantize", "dequantize",
           _dequant("float8_e4m3fn", False)),
    *(OpCall(**vars(call)) for call in LAYER_CALLS),
)}
