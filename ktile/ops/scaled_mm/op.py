"""`ktile.ops.scaled_mm(a, b, scale_a, scale_b, bias=None, out_dtype=torch.bfloat16,
use_fast_accum=False)`: the fp8 (e4m3) GEMM with torch._scaled_mm's semantics, registered as `torch.ops.ktile.scaled_mm`.

a [M, K] float8_e4m3fn row-major, b [K, N] float8_e4m3fn column-major (b.t() a contiguous
[N, K]: a weight w [N, K] passed as w.t()), K a multiple of 16; scale_a and scale_b float32,
both one value (per tensor) or scale_a [M, 1] (per token) and scale_b [1, N] (per channel);
bias [N] of out_dtype (bf16, fp16 or fp32). out = (a · b) · scale_a · scale_b (+ bias): the
products accumulate in fp32 (wgmma e4m3), the scales and the bias are applied to the fp32
accumulators in the epilogue, and the result is rounded once to out_dtype. On sm_90a each
128-wide K block is promoted into fp32 (torch's default); use_fast_accum=True accumulates all
of K in the wgmma's reduced-precision accumulator (faster, less precise: torch's flag of that
name), the 128 x 256 routes (config.fast_routes). gfx950 accumulates in fp32 either way.

Runs on sm_90a (the kernel is matmul's warp-specialised pipeline at fp8, kernels.py), on
gfx950 (the same program in turns, fp8 MFMA; emulated and built, not timed), and on the CPU
by the interpreter traced for sm_90a; other GPUs are refused before anything runs.
Scales stay tensors (never `.item()`), so a call can be captured in a CUDA graph.
"""
from __future__ import annotations

import warnings
from typing import Optional

import numpy as np
import torch

from ...errors import InputError, KernelWarning
from .. import _library as lib
from ..matmul.dtypes import name_of
from ..matmul.op import zero_bias
from . import checks, config, kernels

KERNELS = {"fp8_ws_nt": kernels.fp8_ws_nt}
OUTPUTS = ("bf16", "fp16", "fp32")
NAMES = tuple(name_of("fp8", o) for o in OUTPUTS)       # "fp8-bf16", ...
TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
INTERPRET_TARGET = "sm_90a"     # the target a CPU call is interpreted for


def target_for(a: torch.Tensor) -> str:
    """The GPU's target where it has routes (sm_90a, gfx950), sm_90a on the CPU (the
    interpreter); other GPUs are refused."""
    target = lib.target_of(a)
    if target is None:
        return INTERPRET_TARGET
    if target not in config.TARGETS:
        raise InputError(f"scaled_mm: {a.device} is {target}; ktile's fp8 GEMM runs on "
                         f"{' and '.join(config.TARGETS)} (wgmma / MFMA e4m3) only",
                         hint="use torch._scaled_mm on this GPU, or ktile.ops.matmul on "
                              "bf16 operands")
    return target


def plan(a: torch.Tensor, n: int, out_name: str, rowwise: bool, bias: bool, fast: bool):
    """(route, kernel) for a [M, K] into [M, N] of out_name; memoized per shape, form and
    accumulation (`fast`: use_fast_accum)."""
    m, k = a.shape
    target = target_for(a)

    def make():
        route = config.choose(m, n, target, rowwise, bias, fast)
        kernel = OP.kernel(route, name_of("fp8", out_name))
        trace_quietly(kernel, target, dict(route.constants, ROWWISE=rowwise, BIAS=bias))
        return route, kernel
    return target, config.TABLE.plan(target, (m, n, k, out_name, rowwise, bias, fast,
                                              a.get_device()), make)


def trace_quietly(kernel, target: str, constants: dict) -> None:
    """Trace the route's kernel once without the budgets pass's "close to spilling" warning:
    the promoted 128 x 192 tiles are estimated at 200 of 240 registers and ptxas builds them
    with 0 spills (config.py; tests/tier1/test_scaled_mm_build.py). Other warnings show."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*close to spilling", category=KernelWarning)
        kernel.trace(target, **constants)


def launch(a, b, scale_a, scale_b, bias, out: torch.Tensor, rowwise: bool,
           fast: bool = False) -> None:
    """Run the routed kernel for a [M, K] · b [K, N] into out [M, N] (`fast`: the
    use_fast_accum routes)."""
    (m, _), n = a.shape, out.shape[1]
    target, (route, kernel) = plan(a, n, checks.OUT_DTYPES[out.dtype], rowwise, bias is not None,
                                   fast)
    sa = scale_a.reshape(1, m if rowwise else 1)
    sb = scale_b.reshape(1, n if rowwise else 1)
    # without a bias the kernel reads none (BIAS False); matmul's kept zeros of out's dtype
    # stand in for the [N] argument (out itself may not: the runtime refuses the alias)
    unread = zero_bias(n, out) if bias is None else bias
    args = (a, b.t(), sa, sb, unread, out)
    constants = dict(route.constants, ROWWISE=rowwise, BIAS=bias is not None)   # a pin's too
    if lib._RUNNER:
        lib.run(kernel, *args, **constants)
        return
    lib.run(kernel, *args, target=target, **constants)


def launcher(a, b, scale_a, scale_b, out: torch.Tensor, constants: dict):
    """A call of fp8_ws_nt at `constants` (over the routed form's: a variant the benchmark
    times beside the route) into out, no bias: the kernel traced once, then `run()`."""
    rowwise = checks.is_rowwise(scale_a, scale_b, *out.shape)
    target = target_for(a)
    fast = not constants.get("PROMOTE", True)           # the variant's accumulation's routes
    route = config.choose(a.shape[0], out.shape[1], target, rowwise, False, fast)
    constants = dict(route.constants, **constants, ROWWISE=rowwise, BIAS=False)
    kernel = OP.kernel(route, name_of("fp8", checks.OUT_DTYPES[out.dtype]))
    trace_quietly(kernel, target, constants)
    m, n = out.shape
    args = (a, b.t(), scale_a.reshape(1, m if rowwise else 1),
            scale_b.reshape(1, n if rowwise else 1), zero_bias(n, out), out)
    return lambda: lib.run(kernel, *args, target=target, **constants)


def _scaled_mm(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
               bias: Optional[torch.Tensor], out_dtype: str,
               use_fast_accum: bool = False) -> torch.Tensor:
    out = torch.empty((a.shape[0], b.shape[1]), dtype=TORCH_DTYPES[out_dtype], device=a.device)
    launch(a, b, scale_a, scale_b, bias, out, checks.is_rowwise(scale_a, scale_b, *out.shape),
           use_fast_accum)
    return out


def _scaled_mm_fake(a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum=False):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=TORCH_DTYPES[out_dtype])


_FUNCTIONAL = lib.define("ktile::scaled_mm", _scaled_mm, _scaled_mm_fake)


def scaled_mm(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
              bias: Optional[torch.Tensor] = None,
              out_dtype: torch.dtype = torch.bfloat16,
              use_fast_accum: bool = False) -> torch.Tensor:
    """(a [M, K] · b [K, N]) · scale_a · scale_b (+ bias [N]) in fp32, rounded once to
    out_dtype; a and b float8_e4m3fn (b column-major), the scales float32 per tensor or
    scale_a [M, 1] and scale_b [1, N]; use_fast_accum as torch._scaled_mm's (sm_90a: K
    accumulated in the wgmma without promotion, faster and less precise)."""
    out_name, _ = checks.check_scaled_mm(a, b, scale_a, scale_b, bias, out_dtype)
    checks.check_fast_accum(use_fast_accum)
    return _FUNCTIONAL(a, b, scale_a, scale_b, bias, out_name, use_fast_accum)


CASE_K = 208     # a multiple of 16, not of the K tile (128): the last tile is ragged


def case(rows: int, cols: int, dtype: str, device: str = "cpu", *,
         rowwise: bool = True, bias: bool = True) -> tuple[float, float]:
    """(max error, tolerance) of scaled_mm against the reference for M = rows, N = cols,
    K = CASE_K, e4m3 operands, scales per token and channel (rowwise) or per tensor."""
    from ... import dtypes
    from .reference import scaled_mm as reference, tolerance
    output = dtype.partition("-")[2] or "bf16"
    a, w, scale_a, scale_b, b_vec = operands(rows, cols, CASE_K, output, device, rowwise, bias)
    b = w.t()
    an, bn = a.double().cpu().numpy(), b.double().cpu().numpy()
    san, sbn = scale_a.double().cpu().numpy(), scale_b.double().cpu().numpy()
    bias_n = None if b_vec is None else b_vec.double().cpu().numpy()
    want = reference(an, bn, san, sbn, bias_n, getattr(dtypes, output))
    got = scaled_mm(a, b, scale_a, scale_b, b_vec, out_dtype=TORCH_DTYPES[output])
    tol = tolerance(an, bn, san, sbn, want, output)
    if a.is_cuda and torch.version.cuda:   # sm_90a's wgmma accumulates fp8 in fewer bits:
        from .reference import on_hopper    # the allowance torch._scaled_mm's own error sets
        one = torch.ones((), device=a.device)
        ref = torch._scaled_mm(a, b, one, one, out_dtype=torch.float32).double().cpu().numpy()
        tol = on_hopper(tol, float(np.abs(ref - an @ bn).max()),
                        float(np.abs(san).max()) * float(np.abs(sbn).max()))
    return lib.max_error(got, want), tol


def operands(m: int, n: int, k: int, output: str = "bf16", device: str = "cpu",
             rowwise: bool = True, bias: bool = True, seed: int = 41):
    """Seeded e4m3 a [M, K] and w [N, K] (pass w.t() as b), scales about 0.5..1.5 (per token
    [M, 1] and per channel [1, N], or one value each) and a bias [N] of `output` (or None)."""
    g = torch.Generator().manual_seed(seed)
    a = (torch.randn(m, k, generator=g) * 2).to(torch.float8_e4m3fn)
    w = (torch.randn(n, k, generator=g) * 2).to(torch.float8_e4m3fn)
    shape_a, shape_b = ((m, 1), (1, n)) if rowwise else ((), ())
    scale_a = torch.rand(shape_a, generator=g) + 0.5
    scale_b = torch.rand(shape_b, generator=g) + 0.5
    b_vec = torch.randn(n, generator=g).to(TORCH_DTYPES[output]) if bias else None
    return tuple(None if t is None else t.to(device) for t in (a, w, scale_a, scale_b, b_vec))


OP = lib.Op("scaled_mm", {"scaled_mm": scaled_mm}, KERNELS, NAMES, config.TABLE,
            "ktile.ops.scaled_mm.reference", case=case)
OPS = [OP]
