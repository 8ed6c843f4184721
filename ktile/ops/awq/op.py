"""`ktile.ops.awq_gemm(x, qweight, scales, qzeros, group_size=128, out=None)`: x [M, K] (bf16 /
fp16) times the AWQ-dequantised weight [K, N] (reference.py: AutoAWQ's / vLLM's GEMM layout),
registered as `torch.ops.ktile.awq_gemm` / `awq_gemm_out`; and `ktile.ops.awq_dequantize(
qweight, scales, qzeros, group_size=128)` → w [K, N] in the scales' dtype
(`torch.ops.ktile.awq_dequantize`).

Routes (config.py): M ≤ 32 the decode GEMV (fp32 partials split over K's groups, then a
fixed-order reduction: no atomics), larger M the dequantiser then a GEMM of w [K, N] as it
lies (sm_90a from M 65: `wgmma_ws_nn`; else ktile.ops.matmul). The decode
GEMV reads x as fp32 (converted here: M × K values)."""
from __future__ import annotations

from typing import Optional

import torch

from .. import _library as lib
from ..matmul import skinny
from ..matmul.op import matmul, multiprocessors, zero_bias
from ..matmul.tiles_ws_nn import wgmma_ws_nn
from . import checks, config, kernels

KERNELS = {"awq_gemv": kernels.awq_gemv, "awq_dequant": kernels.awq_dequant,
           "splitk_reduce": skinny.splitk_reduce, "wgmma_ws_nn": wgmma_ws_nn}
DTYPES = ("bf16", "fp16")


def dequantize_into(qweight, scales, qzeros, out: torch.Tensor) -> None:
    k, n = out.shape
    route, pinned = config.DEQUANT, config.TABLE.pinned
    if pinned is not None and pinned.kernel == "awq_dequant":
        route = pinned
    kernel = OP.kernel(route, lib.kt_dtype(scales))
    lib.run(kernel, qweight, scales.view(k // 128, n // 8, 8), qzeros, out.view(k, n // 8, 8),
            **route.constants)


def launch(x, qweight, scales, qzeros, out: torch.Tensor) -> None:
    (m, k), n = x.shape, out.shape[1]
    route = config.TABLE.choose(m, n, lib.target_of(x))
    if route.kernel in config.PREFILL_KERNELS:             # prefill: dequantise, then GEMM
        w = torch.empty((k, n), dtype=scales.dtype, device=x.device)
        dequantize_into(qweight, scales, qzeros, w)
        if route.kernel == "awq_dequant":
            matmul(x, w, out=out)
        else:                                               # w read K×N as it lies
            lib.run(OP.kernel(route, lib.kt_dtype(x)), x, w, zero_bias(n, x), out,
                    **route.constants)
        return
    dtype = lib.kt_dtype(x)
    count = config.split_count(m, n, k, route, multiprocessors(x))
    part = torch.empty((2 * count, m, n), dtype=torch.float32, device=x.device)
    lib.run(OP.kernel(route, dtype), x.float(), qweight, scales.view(k // 128, n // 8, 8),
            qzeros, part.view(2 * count * m, n // 8, 8), **route.constants)
    lib.run(OP.kernel(config.REDUCE, dtype), part.view(-1, n), zero_bias(n, x), out,
            **config.REDUCE.constants)


def _awq_gemm(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor,
              qzeros: torch.Tensor) -> torch.Tensor:
    out = torch.empty((x.shape[0], qweight.shape[1] * 8), dtype=x.dtype, device=x.device)
    launch(x, qweight, scales, qzeros, out)
    return out


def _awq_gemm_fake(x, qweight, scales, qzeros):
    return x.new_empty((x.shape[0], qweight.shape[1] * 8))


def _awq_gemm_out(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor,
                  qzeros: torch.Tensor, out: torch.Tensor) -> None:
    launch(x, qweight, scales, qzeros, out)


def _awq_gemm_out_fake(x, qweight, scales, qzeros, out):
    return None


def _awq_dequantize(qweight: torch.Tensor, scales: torch.Tensor,
                    qzeros: torch.Tensor) -> torch.Tensor:
    w = torch.empty((qweight.shape[0], scales.shape[1]), dtype=scales.dtype,
                    device=scales.device)
    dequantize_into(qweight, scales, qzeros, w)
    return w


def _awq_dequantize_fake(qweight, scales, qzeros):
    return scales.new_empty((qweight.shape[0], scales.shape[1]))


_GEMM = lib.define("ktile::awq_gemm", _awq_gemm, _awq_gemm_fake)
_GEMM_OUT = lib.define("ktile::awq_gemm_out", _awq_gemm_out, _awq_gemm_out_fake,
                       mutates_args=("out",))
_DEQUANTIZE = lib.define("ktile::awq_dequantize", _awq_dequantize, _awq_dequantize_fake)


def awq_gemm(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor,
             qzeros: torch.Tensor, group_size: int = 128,
             out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """x [M, K] · dequantised w [K, N] (fp32 accumulation, rounded once to x's dtype); writes
    `out` ([M, N] of x's dtype) when given and returns it."""
    _, n = checks.check_gemm("awq_gemm", x, qweight, scales, qzeros, group_size)
    if out is None:
        return _GEMM(x, qweight, scales, qzeros)
    checks.check_out("awq_gemm", out, x, n)
    _GEMM_OUT(x, qweight, scales, qzeros, out)
    return out


def awq_dequantize(qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor,
                   group_size: int = 128) -> torch.Tensor:
    """w [K, N] = (q − z) · s in the scales' dtype (each weight rounded once)."""
    checks.check_weights("awq_dequantize", qweight, scales, qzeros, group_size)
    lib.check_same_device("awq_dequantize", {"qweight": qweight, "scales": scales,
                                             "qzeros": qzeros})
    return _DEQUANTIZE(qweight, scales, qzeros)


CASE_K = 256          # two groups


def inputs(m: int, n: int, k: int, dtype: str, device: str = "cpu", seed: int = 41):
    """Seeded x [M, K] and AWQ tensors for K x N (N a multiple of 8), made on the CPU: codes
    and zeros uniform in 0..15, scales in [0.001, 0.021) (a 4-bit layer's range)."""
    from .reference import pack
    g = torch.Generator().manual_seed(seed)
    codes = torch.randint(0, 16, (k, n), generator=g).numpy()
    zeros = torch.randint(0, 16, (k // 128, n), generator=g).numpy()
    scales = torch.rand((k // 128, n), generator=g) * 0.02 + 0.001
    dt = torch.bfloat16 if dtype == "bf16" else torch.float16
    x = lib.random((m, k), seed + 1, dtype, device)
    return (x, torch.from_numpy(pack(codes)).to(device), scales.to(dt).to(device),
            torch.from_numpy(pack(zeros)).to(device))


def case(rows: int, cols: int, dtype: str, device: str = "cpu") -> tuple[float, float]:
    """(max error, tolerance) of awq_gemm against the reference at M = rows, N = cols rounded
    down to a multiple of 8 (at least 8), K = CASE_K."""
    from ... import dtypes
    from .reference import awq_gemm as reference, dequantize, tolerance
    n = max(8, cols // 8 * 8)
    x, qweight, scales, qzeros = inputs(rows, n, CASE_K, dtype, device)
    host = [t.cpu().numpy() for t in (qweight, qzeros)]
    xs, ss = x.float().cpu().numpy(), scales.float().cpu().numpy()
    want = getattr(dtypes, dtype).round(
        reference(xs, host[0], ss, host[1]).astype("float32"))
    got = awq_gemm(x, qweight, scales, qzeros)
    prefill = config.TABLE.choose(rows, n, lib.target_of(x)).kernel in config.PREFILL_KERNELS
    w = dequantize(host[0], ss, host[1])
    return lib.max_error(got, want), tolerance(xs, w, want, dtype, rounded_weights=prefill)


OP = lib.Op("awq_gemm", {"awq_gemm": awq_gemm, "awq_dequantize": awq_dequantize}, KERNELS,
            DTYPES, config.TABLE, "ktile.ops.awq.reference", also=(config.REDUCE,), case=case)
OPS = [OP]
