"""The checks of awq_gemm's and awq_dequantize's arguments, before anything runs: each
refusal is an InputError naming the parameter and the fix."""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from .kernels import GROUP

INPUTS = ("bf16", "fp16")


def check_weights(op: str, qweight, scales, qzeros, group_size) -> tuple[int, int]:
    """(K, N) once qweight [K, N/8], scales [K/128, N] and qzeros [K/128, N/8] agree."""
    if group_size != GROUP:
        raise InputError(f"{op}: 'group_size' is {group_size}; ktile's AWQ kernels take "
                         f"groups of {GROUP} rows", hint=f"pass group_size={GROUP} (a "
                         f"checkpoint quantised with q_group_size {GROUP})")
    lib.check_tensor(op, "qweight", qweight, ("i32",), ranks=(2, 2))
    lib.check_tensor(op, "qzeros", qzeros, ("i32",), ranks=(2, 2))
    lib.check_tensor(op, "scales", scales, INPUTS, ranks=(2, 2))
    k, n = qweight.shape[0], qweight.shape[1] * 8
    if k % GROUP:
        raise InputError(f"{op}: 'qweight' has {k} rows (K); K must be a multiple of "
                         f"group_size {GROUP}", hint="pad K to a multiple of 128 (the "
                         "checkpoint's in_features)")
    want = {"scales": (k // GROUP, n), "qzeros": (k // GROUP, n // 8)}
    for name, t in (("scales", scales), ("qzeros", qzeros)):
        if tuple(t.shape) != want[name]:
            raise InputError(f"{op}: '{name}' is {tuple(t.shape)}; for qweight "
                             f"{tuple(qweight.shape)} (K = {k}, N = {n}) it must be "
                             f"{want[name]}", hint="pass the layer's AWQ tensors as stored "
                             "(AutoAWQ's GEMM format: qweight [K, N/8], qzeros [K/128, N/8], "
                             "scales [K/128, N])")
    return k, n


def check_gemm(op: str, x, qweight, scales, qzeros, group_size) -> tuple[int, int]:
    """(K, N) once x [M, K] and the weights agree (one device, x's dtype the scales')."""
    lib.check_tensor(op, "x", x, INPUTS, ranks=(2, 2))
    k, n = check_weights(op, qweight, scales, qzeros, group_size)
    if x.shape[1] != k:
        raise InputError(f"{op}: 'x' is {tuple(x.shape)} and 'qweight' "
                         f"{tuple(qweight.shape)}: x's columns must be qweight's rows (K = "
                         f"{k})", hint="pass x of shape [M, K] (the layer's in_features)")
    if scales.dtype != x.dtype:
        raise InputError(f"{op}: 'scales' holds {lib.dtype_name(scales)}, 'x' "
                         f"{lib.dtype_name(x)}; they must be equal",
                         hint="convert the scales once: scales.to(x.dtype)")
    lib.check_same_device(op, {"x": x, "qweight": qweight, "scales": scales,
                               "qzeros": qzeros})
    return k, n


def check_out(op: str, out, x, n: int) -> None:
    if not isinstance(out, torch.Tensor):
        raise InputError(f"{op}: 'out' must be a torch.Tensor, got {type(out).__name__}",
                         hint="pass out=torch.empty(M, N, dtype=x.dtype), or leave it out")
    shape = (x.shape[0], n)
    if tuple(out.shape) != shape or out.dtype != x.dtype or not out.is_contiguous():
        raise InputError(f"{op}: 'out' is {tuple(out.shape)} of {lib.dtype_name(out)} "
                         f"(contiguous: {out.is_contiguous()}); the result is a contiguous "
                         f"{shape} of {lib.dtype_name(x)}",
                         hint=f"pass out=torch.empty({shape}, dtype=x.dtype)")
    lib.check_same_device(op, {"out": out, "x": x})
    if out.device.type != "meta" and lib.shares_memory(out, x):
        raise InputError(f"{op}: 'out' shares memory with 'x'",
                         hint="pass a separate out= tensor")
