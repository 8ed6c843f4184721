"""Quantisation benches: int8 and fp8 e4m3 per-token dynamic quantisation, and per-token
dequantisation (bf16 activations; vLLM's formulas in torch)."""
from __future__ import annotations

import torch

import ktile.ops as ops
from ktile.ops.alternatives import (
    fp8_per_token_torch as _fp8_per_token_torch,
    int8_per_token_torch as _int8_per_token_torch,
)

from .cases import Bench, dev, grid, library

ROWS = (1, 8, 32, 256, 4096, 16384)
WIDTHS = (4096, 8192, 14336)
QUICK = grid((1, 32, 4096, 16384), (4096,))
FP8_MAX = 448.0
E = 2   # bf16 bytes


def rand(s):
    return torch.randn(s.dims["rows"], s.dims["cols"], device=dev()).bfloat16()


def int8_torch(x):
    return _int8_per_token_torch(x)


def fp8_torch(x):
    return _fp8_per_token_torch(x)


def dequant_inputs(s):
    q, scale = int8_torch(rand(s))
    return q, scale


def dequant_torch(q, scale):
    return (q.float() * scale).to(torch.bfloat16)


def quantized_close(got, want) -> tuple[float, float]:
    """q may differ by one step where formulas round a tie differently: compare q · scale,
    relative to the largest value, and allow one quantisation step (1/127 of a row's max)."""
    (gq, gs), (wq, ws) = got, want
    g, w = gq.float() * gs.view(-1, 1), wq.float() * ws.view(-1, 1)
    scale = max(w.abs().max().item(), 1e-30)
    step = 2 ** -3 if gq.dtype == torch.float8_e4m3fn else 1 / 127
    return (g - w).abs().max().item() / scale, step * 1.01


def _quant_bytes(s):
    r, c = s.dims["rows"], s.dims["cols"]
    return E * r * c + r * c + 4 * r


BENCHES = [
    Bench("scaled_int8_quant", grid(ROWS, WIDTHS), QUICK, make=lambda s: (rand(s),),
          ktile=library("scaled_int8_quant"), torch=int8_torch, nbytes=_quant_bytes,
          triton="int8_per_token", compare=quantized_close, notes="dynamic, per token"),
    Bench("scaled_fp8_quant", grid(ROWS, WIDTHS), QUICK, make=lambda s: (rand(s),),
          ktile=lambda x: ops.scaled_fp8_quant(x, use_per_token_if_dynamic=True),
          torch=fp8_torch, nbytes=_quant_bytes, triton="fp8_per_token",
          compare=quantized_close, notes="e4m3fn, dynamic, per token"),
    Bench("dequantize", grid(ROWS, WIDTHS), QUICK, make=dequant_inputs,
          ktile=lambda q, s: ops.dequantize(q, s, torch.bfloat16), torch=dequant_torch,
          nbytes=lambda s: 3 * s.dims["rows"] * s.dims["cols"] + 4 * s.dims["rows"],
          notes="int8, per-token scales, bf16 out; no Triton alternative"),
]
