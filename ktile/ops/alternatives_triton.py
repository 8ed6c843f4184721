"""Triton kernels of the norms and softmax: the "triton" alternative routes of those ops
(`ktile/ops/alternatives.py`) and the op benchmark's Triton column (ktile/bench/triton_kernels.py).

Plain kernels, what a user would write: one program per row where a row fits in registers;
softmax's wide rows in chunks with an online max and sum, then normalised. Written here.
Importing this module needs triton; the ops import it only when a routing table names a
"triton" route (and ignore that route, with one warning, where triton does not import).

Each launcher takes the op's inputs as 2-D rows and writes into the outputs it is given (an
out= tensor, or the inputs themselves for the in-place form), so the op's out= and in-place
semantics hold whichever route runs.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

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


def _rows(t):
    return t.view(-1, t.shape[-1])


def rms_norm(x, w, eps: float, out=None):
    """out <- rms_norm(x) (a new tensor when out is None); returns out."""
    out = torch.empty_like(x) if out is None else out
    x2 = _rows(x)
    rows, cols = x2.shape
    block = _row_block(cols)
    _rms_norm[(rows,)](x2, x2, w, _rows(out), _rows(out), cols, eps, ADD=False, BLOCK=block,
                       num_warps=_row_warps(block))
    return out


def fused_add_rms_norm(x, residual, w, eps: float, out=None, residual_out=None):
    """(out, residual_out) <- (rms_norm(x + residual), x + residual). `out` may be x and
    `residual_out` residual (the in-place form): each program reads its row before writing."""
    out = torch.empty_like(x) if out is None else out
    residual_out = torch.empty_like(x) if residual_out is None else residual_out
    x2 = _rows(x)
    rows, cols = x2.shape
    block = _row_block(cols)
    _rms_norm[(rows,)](x2, _rows(residual), w, _rows(out), _rows(residual_out), cols, eps,
                       ADD=True, BLOCK=block, num_warps=_row_warps(block))
    return out, residual_out


def layer_norm(x, w, b, eps: float, out=None):
    out = torch.empty_like(x) if out is None else out
    x2 = _rows(x)
    rows, cols = x2.shape
    block = _row_block(cols)
    _layer_norm[(rows,)](x2, w, b, _rows(out), cols, eps, BLOCK=block,
                         num_warps=_row_warps(block))
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


def softmax(x, out=None):
    """Softmax over the last axis of contiguous x, into out (a new tensor when None)."""
    out = torch.empty_like(x) if out is None else out
    x2, o2 = _rows(x), _rows(out)
    rows, cols = x2.shape
    if cols <= ROW_BLOCK_MAX:
        block = _row_block(cols)
        _softmax_row[(rows,)](x2, o2, cols, BLOCK=block, num_warps=_row_warps(block))
        return out
    block = 2048
    splits = max(1, min(triton.cdiv(cols, block), triton.cdiv(SPLIT_PROGRAMS, rows)))
    chunk = triton.cdiv(triton.cdiv(cols, splits), block) * block
    splits = triton.cdiv(cols, chunk)
    pmax = torch.empty(rows * splits, dtype=torch.float32, device=x.device)
    psum = torch.empty_like(pmax)
    _softmax_partials[(rows, splits)](x2, pmax, psum, cols, chunk, splits, BLOCK=block,
                                      num_warps=8)
    _softmax_normalize[(rows, splits)](x2, o2, pmax, psum, cols, chunk, splits, BLOCK=block,
                                       SPLITS=triton.next_power_of_2(splits), num_warps=8)
    return out
