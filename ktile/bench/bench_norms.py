"""The norms' benches: rms_norm, fused_add_rms_norm, layer_norm, layer_norm_backward (bf16).

torch formulas are the engines' (vLLM's `RMSNorm.forward_native`, torch's layer_norm), defined
once in ktile/ops/alternatives.py (the ops' "torch" routes run them too); the compiled
alternative is the same formula under torch.compile.
"""
from __future__ import annotations

import torch

import ktile.ops as ops
from ktile.ops.alternatives import (
    fused_add_rms_norm_torch as _fused_add_rms_norm_torch,
    layer_norm_torch as _layer_norm_torch,
    rms_norm_torch as _rms_norm_torch,
)

from .cases import Bench, dev, grid, library

EPS = 1e-6
ROWS = (1, 8, 32, 256, 4096, 16384)
WIDTHS = (2048, 4096, 5120, 8192, 14336, 16384)
QUICK = grid((1, 32, 4096, 16384), (4096, 8192))
E = 2   # bf16 bytes


def rand(*shape):
    return torch.randn(*shape, device=dev()).bfloat16()


def rms_norm_torch(x, w):
    return _rms_norm_torch(x, w, EPS)


def fused_add_rms_norm_torch(x, residual, w):
    return _fused_add_rms_norm_torch(x, residual, w, EPS)


def fused_add_rms_norm_in_place_torch(x, residual, w):
    """vLLM's fused_add_rms_norm contract: residual <- x + residual, x <- rms_norm(that)."""
    out, h = fused_add_rms_norm_torch(x, residual, w)
    residual.copy_(h)
    x.copy_(out)
    return x, residual


def fused_add_rms_norm_in_place_ktile(x, residual, w):
    ops.fused_add_rms_norm_(x, residual, w, EPS)
    return x, residual


def layer_norm_torch(x, w, b):
    return _layer_norm_torch(x, w, b, EPS)


def layer_norm_backward_torch(dy, x, w, mean, rstd):
    dx, dw, db = torch.ops.aten.native_layer_norm_backward(
        dy, x, (x.shape[-1],), mean, rstd, w, w, (True, True, True))
    return dx, dw, db


def _rows_cols(s):
    return s.dims["rows"], s.dims["cols"]


def ln_backward_inputs(s):
    rows, cols = _rows_cols(s)
    x, dy, w = rand(rows, cols), rand(rows, cols), rand(cols)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x.float(), (cols,), w.float(), None, EPS)
    return dy, x, w, mean.view(-1), rstd.view(-1)


def _ln_backward_torch(dy, x, w, mean, rstd):
    rows = x.shape[0]
    # the statistics' dtype torch's own forward returns: fp32 on CUDA, x's dtype on the CPU
    stats = torch.float32 if x.is_cuda else x.dtype
    return layer_norm_backward_torch(dy, x, w, mean.view(rows, 1).to(stats),
                                     rstd.view(rows, 1).to(stats))


BENCHES = [
    Bench("rms_norm", grid(ROWS + (65536,), WIDTHS), QUICK,
          make=lambda s: (rand(*_rows_cols(s)), rand(s.dims["cols"])),
          ktile=lambda x, w: ops.rms_norm(x, w, EPS), torch=rms_norm_torch,
          nbytes=lambda s: E * (2 * s.dims["rows"] * s.dims["cols"] + s.dims["cols"]),
          triton="rms_norm"),
    Bench("fused_add_rms_norm", grid(ROWS, WIDTHS), QUICK,
          make=lambda s: (rand(*_rows_cols(s)), rand(*_rows_cols(s)), rand(s.dims["cols"])),
          ktile=lambda x, r, w: ops.fused_add_rms_norm(x, r, w, EPS),
          torch=fused_add_rms_norm_torch,
          nbytes=lambda s: E * (4 * s.dims["rows"] * s.dims["cols"] + s.dims["cols"]),
          triton="fused_add_rms_norm",
          notes="functional form: (out, x + residual) into fresh tensors"),
    Bench("fused_add_rms_norm_", grid(ROWS, WIDTHS), QUICK,
          make=lambda s: (rand(*_rows_cols(s)), rand(*_rows_cols(s)), rand(s.dims["cols"])),
          ktile=fused_add_rms_norm_in_place_ktile, torch=fused_add_rms_norm_in_place_torch,
          nbytes=lambda s: E * (4 * s.dims["rows"] * s.dims["cols"] + s.dims["cols"]),
          triton="fused_add_rms_norm_", mutates=(0, 1),
          notes="vLLM's in-place form: x and residual overwritten"),
    Bench("layer_norm", grid(ROWS, WIDTHS), QUICK,
          make=lambda s: (rand(*_rows_cols(s)), rand(s.dims["cols"]), rand(s.dims["cols"])),
          ktile=lambda x, w, b: ops.layer_norm(x, w, b, EPS), torch=layer_norm_torch,
          nbytes=lambda s: E * (2 * s.dims["rows"] * s.dims["cols"] + 2 * s.dims["cols"]),
          triton="layer_norm"),
    Bench("layer_norm_backward", grid(ROWS, WIDTHS), QUICK, make=ln_backward_inputs,
          ktile=library("layer_norm_backward"), torch=_ln_backward_torch,
          nbytes=lambda s: (E * (3 * s.dims["rows"] * s.dims["cols"] + 3 * s.dims["cols"])
                            + 8 * s.dims["rows"]),
          notes="no Triton alternative (its weight gradient needs a second reduction kernel)"),
]
