"""Plain Triton kernels for the op benchmark's comparison: what a user would write for each op
(one program per row where a row fits in registers, a blocked grid for elementwise work).

Written here, for the benchmark only. `KERNELS` maps a bench's `triton` key to a launcher
taking the bench's inputs and returning the result as the torch formula does. Importing this
module needs triton (the benchmark catches the ImportError and times no Triton alternative).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import triton_pointwise as pointwise
from .bench_pointwise import DROPOUT_P, DROPOUT_SEED

EPS = 1e-6
ROW_BLOCK_MAX = 16384          # widest row held in one program's registers (fp32 values)
SPLIT_PROGRAMS = 528           # 4 programs per H200 multiprocessor, for wide softmax rows


def _row_warps(block: int) -> int:
    return max(1, min(16, block // 256))


def _row_block(cols: int) -> int:
    return triton.next_power_of_2(cols)


# ---- norms ------------------------------------------------------------------------------------

@triton.jit
def _rms_norm(x, res, w, out, res_out, cols, eps, ADD: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    xs = tl.load(x + row * cols + offs, mask=mask, other=0.0)
    if ADD:   # the residual is x + residual rounded to the dtype, as torch's bf16 add gives
        xs = (xs.to(tl.float32) + tl.load(res + row * cols + offs, mask=mask, other=0.0)
              .to(tl.float32)).to(res_out.dtype.element_ty)
        tl.store(res_out + row * cols + offs, xs, mask=mask)
    xf = xs.to(tl.float32)
    inv = tl.rsqrt(tl.sum(xf * xf, 0) / cols + eps)
    ws = tl.load(w + offs, mask=mask, other=0.0).to(tl.float32)
    normed = (xf * inv).to(out.dtype.element_ty).to(tl.float32)
    tl.store(out + row * cols + offs, (normed * ws).to(out.dtype.element_ty), mask=mask)


@triton.jit
def _layer_norm(x, w, b, out, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    xs = tl.load(x + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(xs, 0) / cols
    d = tl.where(mask, xs - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, 0) / cols + eps)
    ws = tl.load(w + offs, mask=mask, other=0.0).to(tl.float32)
    bs = tl.load(b + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + row * cols + offs, (d * rstd * ws + bs).to(out.dtype.element_ty), mask=mask)


def rms_norm(x, w):
    rows, cols = x.shape
    out, block = torch.empty_like(x), _row_block(cols)
    _rms_norm[(rows,)](x, x, w, out, out, cols, EPS, ADD=False, BLOCK=block,
                       num_warps=_row_warps(block))
    return out


def fused_add_rms_norm(x, residual, w):
    rows, cols = x.shape
    out, res_out, block = torch.empty_like(x), torch.empty_like(x), _row_block(cols)
    _rms_norm[(rows,)](x, residual, w, out, res_out, cols, EPS, ADD=True, BLOCK=block,
                       num_warps=_row_warps(block))
    return out, res_out


def fused_add_rms_norm_(x, residual, w):
    """In place: each program reads its row of x and residual before writing them."""
    rows, cols = x.shape
    block = _row_block(cols)
    _rms_norm[(rows,)](x, residual, w, x, residual, cols, EPS, ADD=True, BLOCK=block,
                       num_warps=_row_warps(block))
    return x, residual


def layer_norm(x, w, b):
    rows, cols = x.shape
    out, block = torch.empty_like(x), _row_block(cols)
    _layer_norm[(rows,)](x, w, b, out, cols, EPS, BLOCK=block, num_warps=_row_warps(block))
    return out


# ---- softmax: a row per program, or (wide rows) chunks with online max/sum, then normalise ---

@triton.jit
def _softmax_row(x, out, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x + row * cols + offs, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(v - tl.max(v, 0))
    tl.store(out + row * cols + offs, (e / tl.sum(e, 0)).to(out.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_partials(x, pmax, psum, cols, chunk, splits, BLOCK: tl.constexpr):
    row, split = tl.program_id(0).to(tl.int64), tl.program_id(1)
    lo = split * chunk
    hi = tl.minimum(lo + chunk, cols)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(lo, hi, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < hi
        v = tl.load(x + row * cols + offs, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, v)
        alpha = tl.where(m_new == float("-inf"), 1.0, tl.exp(m - m_new))
        s = s * alpha + tl.where(mask, tl.exp(v - m_new), 0.0)
        m = m_new
    row_max = tl.max(m, 0)
    tl.store(pmax + row * splits + split, row_max)
    tl.store(psum + row * splits + split, tl.sum(s * tl.exp(m - row_max), 0))


@triton.jit
def _softmax_normalize(x, out, pmax, psum, cols, chunk, splits, BLOCK: tl.constexpr,
                       SPLITS: tl.constexpr):
    row, split = tl.program_id(0).to(tl.int64), tl.program_id(1)
    parts = tl.arange(0, SPLITS)
    pm = tl.load(pmax + row * splits + parts, mask=parts < splits, other=float("-inf"))
    ps = tl.load(psum + row * splits + parts, mask=parts < splits, other=0.0)
    m = tl.max(pm, 0)
    inv = 1.0 / tl.sum(ps * tl.exp(pm - m), 0)
    lo = split * chunk
    hi = tl.minimum(lo + chunk, cols)
    for start in range(lo, hi, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < hi
        v = tl.load(x + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(out + row * cols + offs, (tl.exp(v - m) * inv).to(out.dtype.element_ty),
                 mask=mask)


def softmax(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    if cols <= ROW_BLOCK_MAX:
        block = _row_block(cols)
        _softmax_row[(rows,)](x, out, cols, BLOCK=block, num_warps=_row_warps(block))
        return out
    block = 2048
    splits = max(1, min(triton.cdiv(cols, block), triton.cdiv(SPLIT_PROGRAMS, rows)))
    chunk = triton.cdiv(triton.cdiv(cols, splits), block) * block
    splits = triton.cdiv(cols, chunk)
    pmax = torch.empty(rows * splits, dtype=torch.float32, device=x.device)
    psum = torch.empty_like(pmax)
    _softmax_partials[(rows, splits)](x, pmax, psum, cols, chunk, splits, BLOCK=block,
                                      num_warps=8)
    _softmax_normalize[(rows, splits)](x, out, pmax, psum, cols, chunk, splits, BLOCK=block,
                                       SPLITS=triton.next_power_of_2(splits), num_warps=8)
    return out


KERNELS = {
    "rms_norm": rms_norm,
    "fused_add_rms_norm": fused_add_rms_norm,
    "fused_add_rms_norm_": fused_add_rms_norm_,
    "layer_norm": layer_norm,
    "softmax": softmax,
    "dropout": lambda x: pointwise.dropout(x, DROPOUT_P, DROPOUT_SEED),
    **pointwise.launchers(),
}
