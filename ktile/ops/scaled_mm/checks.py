"""The checks of scaled_mm's arguments, before anything runs: each refusal is an InputError
naming the parameter and the fix."""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib

OUT_DTYPES = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}
K_MULTIPLE = 16          # a row of a or W is a TMA copy's row: a multiple of 16 bytes
FP8 = ("fp8",)


def check_b(b) -> None:
    """b [K, N] is column-major: b.t() is a contiguous [N, K] (torch._scaled_mm's layout)."""
    if not isinstance(b, torch.Tensor) or b.dim() != 2:
        lib.check_tensor("scaled_mm", "b", b, FP8, ranks=(2, 2))
    if not b.t().is_contiguous():
        raise InputError(f"scaled_mm: 'b' has strides {b.stride()} for shape "
                         f"{tuple(b.shape)}; it must be column-major (b.t() a contiguous "
                         f"[N, K]), as torch._scaled_mm takes it",
                         hint="pass w.t() for a row-major weight w [N, K] (or "
                              "b.t().contiguous().t())")
    lib.check_tensor("scaled_mm", "b", b.t(), FP8, ranks=(2, 2))


def is_rowwise(scale_a, scale_b, m: int, n: int) -> bool:
    """scale_a is [M, 1] and scale_b [1, N] (per token and per channel)."""
    return tuple(scale_a.shape) == (m, 1) and tuple(scale_b.shape) == (1, n)


def check_scales(scale_a, scale_b, m: int, n: int) -> bool:
    """Both scales float32, one value each (per tensor), or scale_a [M, 1] and scale_b
    [1, N] (per token and per channel): whether they are the latter."""
    for param, scale in (("scale_a", scale_a), ("scale_b", scale_b)):
        if not isinstance(scale, torch.Tensor):
            raise InputError(f"scaled_mm: '{param}' must be a float32 torch.Tensor, got "
                             f"{type(scale).__name__}",
                             hint="pass torch.tensor(s, dtype=torch.float32, device=a.device)")
        lib.check_tensor("scaled_mm", param, scale, ("fp32",), ranks=(0, 2))
    rowwise = is_rowwise(scale_a, scale_b, m, n)
    if rowwise or (scale_a.numel() == 1 and scale_b.numel() == 1):
        return rowwise
    bad, scale, shape = (("scale_a", scale_a, (m, 1)) if scale_a.numel() != 1
                         and tuple(scale_a.shape) != (m, 1) else
                         ("scale_b", scale_b, (1, n)) if scale_b.numel() != 1
                         and tuple(scale_b.shape) != (1, n) else
                         ("scale_a" if scale_a.numel() == 1 else "scale_b", None, None))
    if scale is not None:
        raise InputError(f"scaled_mm: '{bad}' has shape {tuple(scale.shape)}; it must be one "
                         f"float32 (per tensor) or {list(shape)}",
                         hint=f"pass torch.tensor(s, dtype=torch.float32) or a {list(shape)} "
                              f"float32 tensor")
    raise InputError(f"scaled_mm: '{bad}' is per tensor and the other scale is not; both "
                     f"must be per tensor, or scale_a per token [M, 1] = [{m}, 1] and scale_b "
                     f"per channel [1, N] = [1, {n}]",
                     hint="expand the per-tensor one: scale_a.expand(M, 1).contiguous() or "
                          "scale_b.expand(1, N).contiguous()")


def check_scaled_mm(a, b, scale_a, scale_b, bias, out_dtype) -> tuple[str, bool]:
    """(the output dtype's ktile name, whether the scales are per token and per channel), once
    the arguments are consistent."""
    lib.check_tensor("scaled_mm", "a", a, FP8, ranks=(2, 2))
    check_b(b)
    m, k = a.shape
    if b.shape[0] != k:
        raise InputError(f"scaled_mm: 'a' is {tuple(a.shape)} and 'b' {tuple(b.shape)}: a's "
                         f"columns ({k}) must equal b's rows ({b.shape[0]})",
                         hint="pass b of shape [K, N] = [a.shape[1], N] (a weight w [N, K] "
                              "as w.t())")
    if k % K_MULTIPLE:
        raise InputError(f"scaled_mm: K (a.shape[1]) is {k}; it must be a multiple of "
                         f"{K_MULTIPLE} (each row is copied by TMA in 16-byte units)",
                         hint=f"pad a and b along K with zeros to a multiple of {K_MULTIPLE}")
    n = b.shape[1]
    rowwise = check_scales(scale_a, scale_b, m, n)
    out_name = out_dtype_name(out_dtype)
    tensors = {"a": a, "b": b, "scale_a": scale_a, "scale_b": scale_b}
    if bias is not None:
        lib.check_tensor("scaled_mm", "bias", bias, (out_name,), ranks=(1, 1))
        lib.check_last_dim("scaled_mm", "bias", bias, n, "b")
        tensors["bias"] = bias
    lib.check_same_device("scaled_mm", tensors)
    return out_name, rowwise


def out_dtype_name(out_dtype) -> str:
    if out_dtype not in OUT_DTYPES:
        raise InputError(f"scaled_mm: 'out_dtype' is {out_dtype}; the op writes "
                         f"torch.bfloat16, torch.float16 or torch.float32",
                         hint="pass out_dtype=torch.bfloat16")
    return OUT_DTYPES[out_dtype]


def check_fast_accum(use_fast_accum) -> None:
    if not isinstance(use_fast_accum, bool):
        raise InputError(f"scaled_mm: 'use_fast_accum' is {use_fast_accum!r}; it must be a "
                         f"bool, as torch._scaled_mm's",
                         hint="pass use_fast_accum=True (faster, K accumulated in the wgmma) "
                              "or False (each 128 of K promoted into fp32, the default)")
