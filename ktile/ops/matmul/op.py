"""`ktile.ops.matmul(a, b, bias=None, *, out_dtype=None, out=None)` and `ktile.ops.linear(x,
weight, bias=None)`: torch semantics (`torch.matmul` for 2-D a [M, K] and b [K, N] plus a
bias [N]; `F.linear`), registered as `torch.ops.ktile.matmul` / `matmul_out`.

a, b and bias are bf16 or fp16 (one dtype); the output is a's dtype or `out_dtype` (bf16, fp16,
fp32). Products accumulate in fp32; the bias is added in fp32 and the sum rounded once. b is
read by its strides, never copied: row-major [K, N], or `W.t()` for a row-major weight W [N, K]
(nn.Linear's layout); any other layout is refused. On sm_90a M = 1 with b = W.t() and K a
multiple of 16 takes the decode GEMV (one kernel, W streamed once) and M 2..64 with b = W.t()
the wgmma skinny kernel (config.py); M ≤ 64 otherwise the skinny kernels, K split over blocks
and the partials summed in a fixed order; larger M the tile kernels.
"""
from __future__ import annotations

import functools
from typing import Optional

import torch

from ...errors import InputError
from .. import _library as lib
from . import checks, config, gemv, gemv_stream, skinny, skinny_wgmma, swap_gemv, tiles, tiles_ws
from .tiles_ws_nn import wgmma_ws_nn
from .dtypes import NAMES, name_of, pair

KERNELS = {"skinny_nt": skinny.skinny_nt, "skinny_nn": skinny.skinny_nn,
           "splitk_reduce": skinny.splitk_reduce, "wgmma_nt": tiles.wgmma_nt,
           "skinny_wgmma_nt": skinny_wgmma.skinny_wgmma_nt,
           "wgmma_gemv_nt": skinny_wgmma.wgmma_gemv_nt, "swap_gemv_nt": swap_gemv.swap_gemv_nt,
           "wgmma_sync_nt": tiles.wgmma_sync_nt, "wgmma_ws_nt": tiles_ws.wgmma_ws_nt,
           "wgmma_ws_persistent_nt": tiles_ws.wgmma_ws_persistent_nt,
           "tiles_nt": tiles.tiles_nt, "tiles_nn": tiles.tiles_nn, "gemv_nt": gemv.gemv_nt,
           "gemv_stream_nt": gemv_stream.gemv_stream_nt, "wgmma_ws_nn": wgmma_ws_nn}
TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


@functools.lru_cache(maxsize=None)
def _multiprocessors(index: int) -> int:
    return torch.cuda.get_device_properties(index).multi_processor_count


def multiprocessors(t: torch.Tensor) -> int:
    if t.device.type != "cuda":
        return config.CPU_MULTIPROCESSORS
    return _multiprocessors(t.device.index or 0)


ZERO_BIAS_MIN = 1 << 16
_ZERO_BIAS: dict = {}


def zero_bias(n: int, like: torch.Tensor) -> torch.Tensor:
    """N zeros of like's dtype and device, a view of one kept buffer: a call without a bias
    adds 0 (no rounding changes: the sum is rounded once either way), so one build of each
    kernel serves both forms, and the build tests build what runs. The buffer is made at the
    first call without a bias per device and dtype, ZERO_BIAS_MIN wide, and grows for wider
    N; never inside a CUDA-graph capture (it would live in the graph's pool): refused there."""
    key = (like.device, like.dtype)
    zeros = _ZERO_BIAS.get(key)
    if zeros is None or zeros.numel() < n:
        if like.device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            raise InputError(f"matmul: the first call without a bias on {like.device} in "
                             f"{lib.dtype_name(like)} (N = {n}) is inside a CUDA-graph "
                             f"capture; it makes the zero bias the kernels read",
                             hint="make one eager call without a bias before capturing")
        zeros = torch.zeros(max(n, ZERO_BIAS_MIN), dtype=like.dtype, device=like.device)
        _ZERO_BIAS[key] = zeros
    return zeros[:n]


def resident_blocks(kernel, route, target, a: torch.Tensor) -> Optional[int]:
    """Blocks of `route`'s build a multiprocessor holds (ptxas's registers), for constants no
    route ships (a benchmark's pinned route); None on the CPU or for shipped constants."""
    if a.device.type != "cuda" or config.stream_blocks_per_sm(route) is not None:
        return None
    occupancy = kernel.build(target=target, **route.constants).resources.occupancy
    if occupancy is None:
        return None
    return max(1, occupancy.warps // route.constants.get("WARPS", 4))


def plan(a: torch.Tensor, nt: bool, n: int, out_dtype):
    """(route, its kernel, the split-K reduction's kernel or None, the split count) for a
    [M, K] into [M, N] of out_dtype; memoized per layout, M, N, K, dtypes and device
    (`RoutingTable.plan`: the split count reads the device's multiprocessors)."""
    (m, k), target = a.shape, lib.target_of(a)

    def make():
        route = config.choose("nt" if nt else "nn", m, n, target, k)
        dtype = name_of(lib.kt_dtype(a), checks.OUT_DTYPES.get(out_dtype))
        kernel = OP.kernel(route, dtype)
        if route.kernel == "gemv_stream_nt":                 # the count: its grid's blocks
            return route, kernel, None, config.stream_blocks(
                route, multiprocessors(a), resident_blocks(kernel, route, target, a))
        if not route.kernel.startswith("skinny"):
            return route, kernel, None, 0
        count = config.split_count(route, n, k, multiprocessors(a))
        return route, kernel, OP.kernel(config.REDUCE, dtype), count
    return config.TABLE.plan(target, (nt, m, n, k, a.dtype, out_dtype, a.get_device()), make)


def launch(a: torch.Tensor, b: torch.Tensor, bias: Optional[torch.Tensor],
           out: torch.Tensor) -> None:
    """Run the routed kernels for a [M, K] · b [K, N] (+ bias) into out [M, N]."""
    nt = checks.is_weight_view(b)
    weight = b.t() if nt else b                           # W [N, K], or b [K, N]
    n = out.shape[1]
    route, kernel, reduce, count = plan(a, nt, n, out.dtype)
    bias = zero_bias(n, a) if bias is None else bias
    if route.kernel.startswith("gemv"):
        m, k = a.shape
        if k % config.GEMV_K_MULTIPLE:
            raise InputError(f"matmul: the pinned route {route.kernel} needs K (a.shape[1] = "
                             f"{k}) a multiple of {config.GEMV_K_MULTIPLE}",
                             hint="pin a skinny_nt route for this K")
        rows = (k // 16, 16)                              # each row a plane of 16-wide rows
        grid = {"BLOCKS": count} if route.kernel == "gemv_stream_nt" else {}
        lib.run(kernel, a.view(m, *rows), weight.view(n, *rows), bias.view(n, 1),
                out.view(m, n, 1), **route.constants, **grid)
        return
    if reduce is None:
        lib.run(kernel, a, weight, bias, out, **route.constants)
        return
    part = torch.empty((count, a.shape[0], n), dtype=torch.float32, device=a.device)
    lib.run(kernel, a, weight, part, **route.constants)
    lib.run(reduce, part.view(-1, n), bias, out, **config.REDUCE.constants)


def _matmul(a: torch.Tensor, b: torch.Tensor, bias: Optional[torch.Tensor],
            out_dtype: str) -> torch.Tensor:
    out = torch.empty((a.shape[0], b.shape[1]), dtype=TORCH_DTYPES[out_dtype], device=a.device)
    launch(a, b, bias, out)
    return out


def _matmul_fake(a, b, bias, out_dtype):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=TORCH_DTYPES[out_dtype])


def _matmul_out(a: torch.Tensor, b: torch.Tensor, bias: Optional[torch.Tensor],
                out: torch.Tensor) -> None:
    launch(a, b, bias, out)


def _matmul_out_fake(a, b, bias, out):
    return None


_FUNCTIONAL = lib.define("ktile::matmul", _matmul, _matmul_fake)
_OUT = lib.define("ktile::matmul_out", _matmul_out, _matmul_out_fake, mutates_args=("out",))


def matmul(a: torch.Tensor, b: torch.Tensor, bias: Optional[torch.Tensor] = None, *,
           out_dtype: Optional[torch.dtype] = None,
           out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """a [M, K] · b [K, N] (+ bias [N]) in fp32, rounded once to out_dtype (default a's);
    writes `out` when given ([M, N] of out_dtype) and returns it."""
    out_name = checks.check_matmul("matmul", a, b, bias, out_dtype)
    if out is None:
        return _FUNCTIONAL(a, b, bias, out_name)
    checks.check_out("matmul", out, (a.shape[0], b.shape[1]), TORCH_DTYPES[out_name],
                     {"a": a, "b": b, "bias": bias})
    _OUT(a, b, bias, out)
    return out


def linear(x: torch.Tensor, weight: torch.Tensor,
           bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """F.linear: x [..., K] · weight [N, K]ᵀ (+ bias [N]) → [..., N] of x's dtype; x has 1 to
    4 dimensions, its leading ones folded into M."""
    lib.check_tensor("linear", "x", x, checks.INPUTS)
    lib.check_tensor("linear", "weight", weight, checks.INPUTS, ranks=(2, 2))
    if weight.shape[1] != x.shape[-1]:
        raise InputError(
            f"linear: 'x' is {tuple(x.shape)} and 'weight' {tuple(weight.shape)}: the weight "
            f"is [N, K] with K = x.shape[-1] = {x.shape[-1]} columns",
            hint="pass the layer's weight as stored (out_features, in_features)")
    rows = x.reshape(-1, x.shape[-1])
    y = matmul(rows, weight.t(), bias)
    return y.view(*x.shape[:-1], weight.shape[0])


CASE_K = 200          # not a multiple of any K tile: the last tile is ragged
GEMV_CASE_K = 208     # the GEMV's K: a multiple of 16 (its views), 13 columns per plane: ragged


def case(rows: int, cols: int, dtype: str, device: str = "cpu", *,
         layout: str | None = None) -> tuple[float, float]:
    """(max error, tolerance) of matmul against the reference for M = rows, N = cols, K =
    CASE_K (GEMV_CASE_K under a pinned GEMV route), with a bias, b as W.t() ("nt") or
    row-major ("nn"); by default the layout of the route a test pinned, else "nt"."""
    from ... import dtypes
    from .reference import matmul as reference, tolerance
    pinned = config.TABLE.pinned
    if layout is None:
        layout = pinned.kernel[-2:] if pinned is not None and pinned.kernel != "splitk_reduce" \
            else "nt"
    k = GEMV_CASE_K if pinned is not None and pinned.kernel.startswith("gemv") else CASE_K
    inputs, output = pair(dtype)
    a = lib.random((rows, k), 31, inputs, device)
    w = lib.random((cols, k), 32, inputs, device)
    bias = lib.random((cols,), 33, inputs, device)
    b = w.t() if layout == "nt" else w.t().contiguous()
    an, bn = a.float().cpu().numpy(), b.float().cpu().numpy()
    want = reference(an, bn, bias.float().cpu().numpy(), getattr(dtypes, output))
    got = matmul(a, b, bias, out_dtype=TORCH_DTYPES[output])
    return lib.max_error(got, want), tolerance(an, bn, want, output)


OP = lib.Op("matmul", {"matmul": matmul, "linear": linear}, KERNELS, NAMES, config.TABLE,
            "ktile.ops.matmul.reference", also=(config.REDUCE,), case=case)
OPS = [OP]
