"""Quantisation ops with vLLM's semantics (reference.py): `ktile.ops.scaled_int8_quant`,
`ktile.ops.scaled_fp8_quant` and `ktile.ops.dequantize`, each a `torch.library` op.

- `scaled_int8_quant(x, scale=None)` → (q int8 shaped like x, scale): dynamic per token without
  `scale` (scales `[tokens, 1]` float32), static per tensor with a one-element float32 `scale`.
- `scaled_fp8_quant(x, scale=None, use_per_token_if_dynamic=False)` → (q float8_e4m3fn, scale):
  static with `scale`; else dynamic, per tensor (scale `[1]`, two kernels: per-token maxima then
  one block folds them; no atomics) or per token (scales `[tokens, 1]`).
- `dequantize(q, scale, dtype=torch.bfloat16)` → q · scale, per tensor or per token.

x has 1 to 4 dimensions; tokens are all but its last. Scales stay tensors (no `.item()`), so a
call can be captured into a CUDA graph and replayed with a new scale.
"""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from ..elementwise.launch import run_kernel
from ..elementwise.op import as_rows
from . import config, kernels, token_block, token_rows

DTYPES = ("bf16", "fp16", "fp32")
Q_DTYPES = ("i8", "fp8")


# ---- checks ---------------------------------------------------------------------------------

def check_scale(op: str, scale, x, *, per_token_ok: bool = False) -> None:
    """`scale` is a float32 tensor on x's device: one value, or (per_token_ok) one per token."""
    lib.check_tensor(op, "scale", scale, ("fp32",))
    lib.check_same_device(op, {"x": x, "scale": scale})
    tokens = x.numel() // x.shape[-1]
    if scale.numel() == 1 or (per_token_ok and scale.numel() == tokens):
        return
    wanted = f"1 or {tokens} (one per token)" if per_token_ok else "1"
    raise InputError(f"{op}: 'scale' holds {scale.numel()} values; it must hold {wanted}",
                     hint="pass torch.tensor([s], dtype=torch.float32, device=x.device)")


def fp8_target(op: str, x) -> str:
    """The target an fp8 kernel runs for: the GPU's, which must have an fp8 type; on the CPU,
    the interpreter traced for gfx950."""
    target = lib.target_of(x)
    if target is None:
        return config.FP8_INTERPRET_TARGET
    if target not in config.FP8_TARGETS:
        raise InputError(f"{op}: {target} has no float8_e4m3fn element type in ktile",
                         hint=f"use int8 quantisation on {target} (scaled_int8_quant); fp8 runs "
                              f"on {', '.join(config.FP8_TARGETS)}")
    return target


def _kernel(table, name: str, dtype: str):
    route = config.route(table, name)
    return KERNELS[name](dtype), route.constants


def _run(table, name: str, dtype: str, *args, target=None) -> None:
    kernel, constants = _kernel(table, name, dtype)
    run_kernel(kernel, *args, target=target, **constants)


def _tokens(x) -> int:
    return x.numel() // x.shape[-1]


def _by_token(x, *outs) -> bool:
    """Whether the per-token kernels of the token view (token_block.py, token_rows.py) take x: hidden a multiple of 16,
    x and the outputs contiguous (they are viewed as [tokens · 16, hidden / 16])."""
    return x.shape[-1] % token_rows.ROWS_PER_TOKEN == 0 and all(
        t.is_contiguous() for t in (x, *outs))


def _per_token(table, name: str, x, q, scales, target) -> None:
    """q and scales `[tokens, 1]` of a per-token kernel, in the form x's shape takes."""
    dtype = lib.kt_dtype(x)
    if _by_token(x, q):
        route = config.per_token_route(table, name, x.shape[-1], target)
        run_kernel(KERNELS[route.kernel](dtype), token_rows.token_view(x),
                   token_rows.token_view(q), scales, target=target, **route.constants)
        return
    _run(table, name, dtype, lib.rows_of(x), lib.rows_of(q), scales.view(-1), target=target)


# ---- int8 -----------------------------------------------------------------------------------

def _int8_per_token(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    q = torch.empty_like(x, dtype=torch.int8)
    scales = torch.empty((_tokens(x), 1), dtype=torch.float32, device=x.device)
    _per_token(config.INT8, "int8_per_token", x, q, scales, lib.target_of(x))
    return q, scales


def _int8_per_token_fake(x):
    return (torch.empty_like(x, dtype=torch.int8),
            x.new_empty((x.numel() // x.shape[-1], 1), dtype=torch.float32))


def _int8_per_tensor(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    q = torch.empty_like(x, dtype=torch.int8)
    _run(config.INT8, "int8_per_tensor", lib.kt_dtype(x), as_rows(x), scale.view(-1),
         as_rows(q), target=lib.target_of(x))
    return q


def _int8_per_tensor_fake(x, scale):
    return torch.empty_like(x, dtype=torch.int8)


_INT8_TOKEN = lib.define("ktile::scaled_int8_quant_per_token", _int8_per_token,
                         _int8_per_token_fake)
_INT8_TENSOR = lib.define("ktile::scaled_int8_quant_static", _int8_per_tensor,
                          _int8_per_tensor_fake)


def scaled_int8_quant(x: torch.Tensor, scale: torch.Tensor | None = None):
    """Symmetric int8 quantisation: (q, scale). Without `scale`: dynamic per token (scales
    `[tokens, 1]`); with a one-element float32 `scale`: static per tensor (returned as given)."""
    op = "scaled_int8_quant"
    lib.check_tensor(op, "x", x, DTYPES)
    if scale is None:
        return _INT8_TOKEN(x)
    check_scale(op, scale, x)
    return _INT8_TENSOR(x, scale), scale


# ---- fp8 ------------------------------------------------------------------------------------

def _fp8_out(x):
    return torch.empty_like(x, dtype=torch.float8_e4m3fn)


def _fp8_per_token(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    q = _fp8_out(x)
    scales = torch.empty((_tokens(x), 1), dtype=torch.float32, device=x.device)
    _per_token(config.FP8, "fp8_per_token", x, q, scales, fp8_target("scaled_fp8_quant", x))
    return q, scales


def _fp8_per_token_fake(x):
    return _fp8_out(x), x.new_empty((x.numel() // x.shape[-1], 1), dtype=torch.float32)


def _fp8_static_into(x, scale, q) -> None:
    _run(config.FP8, "fp8_per_tensor", lib.kt_dtype(x), as_rows(x), scale.view(-1),
         as_rows(q), target=fp8_target("scaled_fp8_quant", x))


def _fp8_static(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    q = _fp8_out(x)
    _fp8_static_into(x, scale, q)
    return q


def _fp8_static_fake(x, scale):
    return _fp8_out(x)


def _fp8_dynamic(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Two phases, no atomics: each row's max|x|, then one block folds them into the scale."""
    target = fp8_target("scaled_fp8_quant", x)
    amax = torch.empty(_tokens(x), dtype=torch.float32, device=x.device)
    scale = torch.empty(1, dtype=torch.float32, device=x.device)
    if _by_token(x):
        _run(config.FP8, "absmax_rows", lib.kt_dtype(x), token_rows.token_view(x),
             amax.view(-1, 1), target=target)
    else:
        _run(config.FP8, "row_absmax", lib.kt_dtype(x), lib.rows_of(x), amax, target=target)
    _run(config.FP8, "tensor_scale", lib.kt_dtype(x), amax, scale, target=target)
    q = _fp8_out(x)
    _fp8_static_into(x, scale, q)
    return q, scale


def _fp8_dynamic_fake(x):
    return _fp8_out(x), x.new_empty((1,), dtype=torch.float32)


_FP8_TOKEN = lib.define("ktile::scaled_fp8_quant_per_token", _fp8_per_token, _fp8_per_token_fake)
_FP8_STATIC = lib.define("ktile::scaled_fp8_quant_static", _fp8_static, _fp8_static_fake)
_FP8_DYNAMIC = lib.define("ktile::scaled_fp8_quant_dynamic", _fp8_dynamic, _fp8_dynamic_fake)


def scaled_fp8_quant(x: torch.Tensor, scale: torch.Tensor | None = None,
                     use_per_token_if_dynamic: bool = False):
    """fp8 e4m3fn quantisation: (q, scale). With a one-element float32 `scale`: static per
    tensor. Without: dynamic, per tensor (scale `[1]`) or, with `use_per_token_if_dynamic`, per
    token (scales `[tokens, 1]`)."""
    op = "scaled_fp8_quant"
    lib.check_tensor(op, "x", x, DTYPES)
    if x.device.type != "meta":
        fp8_target(op, x)
    if scale is not None:
        check_scale(op, scale, x)
        return _FP8_STATIC(x, scale), scale
    return _FP8_TOKEN(x) if use_per_token_if_dynamic else _FP8_DYNAMIC(x)


# ---- dequantisation ---------------------------------------------------------------------------

_TORCH_DTYPES = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}


def _dequant(q: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    out = torch.empty_like(q, dtype=dtype)
    qt = lib.kt_dtype(q)
    name = f"dequant_{'int8' if qt == 'i8' else 'fp8'}"
    target = lib.target_of(q) if qt == "i8" else fp8_target("dequantize", q)
    kernel_dtype = _TORCH_DTYPES[dtype]
    if scale.numel() == 1:
        _run(config.DEQUANT, f"{name}_per_tensor", kernel_dtype, as_rows(q), scale.view(-1),
             as_rows(out), target=target)
    elif _by_token(q, out):
        _run(config.DEQUANT, f"{name}_per_token_rows", kernel_dtype, token_rows.token_view(q),
             scale.view(-1, 1), token_rows.token_view(out), target=target)
    else:
        _run(config.DEQUANT, f"{name}_per_token", kernel_dtype, lib.rows_of(q), scale.view(-1),
             lib.rows_of(out), target=target)
    return out


def _dequant_fake(q, scale, dtype):
    return torch.empty_like(q, dtype=dtype)


_DEQUANT = lib.define("ktile::dequantize", _dequant, _dequant_fake)


def dequantize(q: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype = torch.bfloat16):
    """q (int8 or float8_e4m3fn) · scale (one float32, or one per token) as `dtype`."""
    op = "dequantize"
    lib.check_tensor(op, "q", q, Q_DTYPES)
    check_scale(op, scale, q, per_token_ok=True)
    if dtype not in _TORCH_DTYPES:
        raise InputError(f"{op}: 'dtype' is {dtype}; this op writes bfloat16, float16 or "
                         f"float32", hint="pass dtype=torch.bfloat16")
    if lib.kt_dtype(q) == "fp8" and q.device.type != "meta":
        fp8_target(op, q)
    return _DEQUANT(q, scale, dtype)


# ---- the library's view ---------------------------------------------------------------------

def _dequant_kernel(factory, q_dtype):
    return lambda dtype: factory(q_dtype, dtype)


KERNELS = {
    "int8_per_token": kernels.int8_per_token,
    "int8_per_tensor": kernels.int8_per_tensor,
    "fp8_per_token": kernels.fp8_per_token,
    "fp8_per_tensor": kernels.fp8_per_tensor,
    "row_absmax": kernels.row_absmax_kernel,
    "int8_per_token_rows": token_rows.int8_per_token_rows,
    "fp8_per_token_rows": token_rows.fp8_per_token_rows,
    "int8_per_token_block": token_block.int8_per_token_block,
    "fp8_per_token_block": token_block.fp8_per_token_block,
    "absmax_rows": token_rows.absmax_rows,
    "tensor_scale": lambda dtype: kernels.tensor_scale,
    "dequant_int8_per_token": _dequant_kernel(kernels.dequant_per_token, "i8"),
    "dequant_int8_per_tensor": _dequant_kernel(kernels.dequant_per_tensor, "i8"),
    "dequant_fp8_per_token": _dequant_kernel(kernels.dequant_per_token, "fp8"),
    "dequant_fp8_per_tensor": _dequant_kernel(kernels.dequant_per_tensor, "fp8"),
    "dequant_int8_per_token_rows": _dequant_kernel(token_rows.dequant_per_token_rows, "i8"),
    "dequant_fp8_per_token_rows": _dequant_kernel(token_rows.dequant_per_token_rows, "fp8"),
}
REFERENCE = "ktile.ops.quant.reference"
OPS = [
    lib.Op("scaled_int8_quant", {"scaled_int8_quant": scaled_int8_quant}, KERNELS, DTYPES,
           config.INT8, REFERENCE),
    lib.Op("scaled_fp8_quant", {"scaled_fp8_quant": scaled_fp8_quant}, KERNELS, DTYPES,
           config.FP8, REFERENCE),
    lib.Op("dequantize", {"dequantize": dequantize}, KERNELS, DTYPES, config.DEQUANT, REFERENCE),
]
