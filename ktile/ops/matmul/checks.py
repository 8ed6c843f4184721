"""The checks of matmul's and linear's arguments, before anything runs: each refusal is an
InputError naming the parameter and the fix."""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from .dtypes import INPUTS

OUT_DTYPES = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}


def check_b(op: str, b) -> None:
    """b is a dense 2-D [K, N] tensor, row-major or the transpose of a row-major [N, K] weight
    (`W.t()`): either way each row of the matrix the kernels read is one contiguous run."""
    lib.check_tensor(op, "b", b.t() if _transposed(b) else b, INPUTS, ranks=(2, 2))


def _transposed(b) -> bool:
    """b is `W.t()` of a contiguous W (and not itself contiguous)."""
    return isinstance(b, torch.Tensor) and b.dim() == 2 and not b.is_contiguous() \
        and b.t().is_contiguous()


def is_weight_view(b) -> bool:
    """b [K, N] is the transposed view of a row-major weight [N, K] (nn.Linear's layout)."""
    return _transposed(b)


def check_matmul(op: str, a, b, bias, out_dtype) -> str:
    """The output dtype's ktile name, once a [M, K], b [K, N] and bias [N] are consistent."""
    lib.check_tensor(op, "a", a, INPUTS, ranks=(2, 2))
    if isinstance(b, torch.Tensor) and b.dim() == 2 and not b.is_contiguous() \
            and not b.t().is_contiguous():
        raise InputError(f"{op}: 'b' has strides {b.stride()} for shape {tuple(b.shape)}; "
                         f"ktile reads b [K, N] row-major or as W.t() of a row-major weight "
                         f"W [N, K]", hint="pass b.contiguous() (or the weight's .t() view)")
    check_b(op, b)
    if a.shape[1] != b.shape[0]:
        raise InputError(f"{op}: 'a' is {tuple(a.shape)} and 'b' {tuple(b.shape)}: a's "
                         f"columns ({a.shape[1]}) must equal b's rows ({b.shape[0]})",
                         hint="pass b of shape [K, N] = [a.shape[1], N] (a weight W [N, K] "
                              "as W.t())")
    tensors = {"a": a, "b": b}
    if bias is not None:
        lib.check_tensor(op, "bias", bias, INPUTS, ranks=(1, 1))
        lib.check_last_dim(op, "bias", bias, b.shape[1], "b")
        tensors["bias"] = bias
    lib.check_same_device(op, tensors)
    for name, t in tensors.items():
        if t.dtype != a.dtype:
            raise InputError(f"{op}: '{name}' holds {lib.dtype_name(t)}, 'a' "
                             f"{lib.dtype_name(a)}; they must be equal",
                             hint=f"convert it: {name}.to(a.dtype)")
    return out_dtype_name(op, a, out_dtype)


def out_dtype_name(op: str, a, out_dtype) -> str:
    if out_dtype is None:
        return lib.kt_dtype(a)
    if out_dtype not in OUT_DTYPES:
        raise InputError(f"{op}: 'out_dtype' is {out_dtype}; the op writes torch.bfloat16, "
                         f"torch.float16 or torch.float32",
                         hint="pass out_dtype=torch.float32 (or leave it out: a's dtype)")
    return OUT_DTYPES[out_dtype]


def check_out(op: str, out, shape: tuple, dtype, inputs: dict) -> None:
    """out= is a contiguous tensor of `shape` and `dtype` on the inputs' device, sharing no
    memory with any of them."""
    if not isinstance(out, torch.Tensor):
        raise InputError(f"{op}: 'out' must be a torch.Tensor, got {type(out).__name__}",
                         hint="pass out=torch.empty(M, N, dtype=...), or leave it out")
    if tuple(out.shape) != tuple(shape) or out.dtype != dtype:
        raise InputError(f"{op}: 'out' is {tuple(out.shape)} of {lib.dtype_name(out)}; the "
                         f"result is {tuple(shape)} of {str(dtype).removeprefix('torch.')}",
                         hint=f"pass out=torch.empty({tuple(shape)}, dtype={dtype})")
    inputs = {name: t for name, t in inputs.items() if t is not None}
    lib.check_same_device(op, {"out": out, **inputs})
    if not out.is_contiguous():
        raise InputError(f"{op}: 'out' is not contiguous (strides {out.stride()})",
                         hint="pass a contiguous out=torch.empty(...)")
    for name, t in inputs.items():
        if out.device.type != "meta" and _overlap(out, t):
            raise InputError(f"{op}: 'out' shares memory with '{name}'; the kernel would "
                             f"read what it already wrote", hint="pass a separate out= tensor")


def _overlap(out, t) -> bool:
    base = t.t() if _transposed(t) else t
    return lib.shares_memory(out, base)
