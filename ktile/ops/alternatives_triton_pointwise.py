"""Triton kernels of the elementwise functions, silu/gelu_and_mul, dropout, rotary,
per-token quantisation and embedding: "triton" alternative routes of those ops
(`ktile/ops/alternatives.py`) and the op benchmark's Triton column. The norms and softmax are in
alternatives_triton.py. Importing this module needs triton. Written here.

Launchers take the op's inputs (contiguous; rows of any rank are viewed 2-D) and write into
the outputs they are given, else new tensors.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

ELEMENT_BLOCK = 4096
COLUMN_BLOCK = 1024
FP8_MAX = 448.0


@triton.jit
def _apply(a, b, OP: tl.constexpr):
    """One elementwise function of fp32 values (b unused by the unary ones)."""
    if OP == "add":
        r = a + b
    elif OP == "sub":
        r = a - b
    elif OP == "mul":
        r = a * b
    elif OP == "maximum":
        r = tl.maximum(a, b)
    elif OP == "minimum":
        r = tl.minimum(a, b)
    elif OP == "exp":
        r = tl.exp(a)
    elif OP == "relu":
        r = tl.maximum(a, 0.0)
    elif OP == "gelu":
        r = 0.5 * a * (1.0 + tl.erf(a * 0.7071067811865476))
    elif OP == "gelu_tanh":   # tanh(y) = 1 - 2 / (1 + e^(2y)), y = sqrt(2/pi) (a + 0.044715 a^3)
        y = 0.7978845608028654 * (a + 0.044715 * a * a * a)
        r = 0.5 * a * (2.0 - 2.0 / (1.0 + tl.exp(2.0 * y)))
    elif OP == "silu":
        r = a / (1.0 + tl.exp(-a))
    elif OP == "neg":
        r = -a
    else:
        r = tl.abs(a)
    return r


@triton.jit
def _elementwise(x, y, out, n, OP: tl.constexpr, BINARY: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=0.0).to(tl.float32)
    b = a
    if BINARY:
        b = tl.load(y + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + offs, _apply(a, b, OP).to(out.dtype.element_ty), mask=mask)


def elementwise(op: str, x, y=None, out=None):
    out = torch.empty_like(x) if out is None else out
    n = x.numel()
    _elementwise[(triton.cdiv(n, ELEMENT_BLOCK),)](x, x if y is None else y, out, n, OP=op,
                                                   BINARY=y is not None, BLOCK=ELEMENT_BLOCK,
                                                   num_warps=8)
    return out


@triton.jit
def _act_and_mul(x, out, d, OP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < d
    gate = tl.load(x + row * 2 * d + offs, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x + row * 2 * d + d + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + row * d + offs, (_apply(gate, gate, OP) * up).to(out.dtype.element_ty),
             mask=mask)


def act_and_mul(act: str, x, out=None):
    """act(x[..., :d]) * x[..., d:] for act in silu, gelu (erf), gelu_tanh."""
    d = x.shape[-1] // 2
    if out is None:
        out = torch.empty((*x.shape[:-1], d), dtype=x.dtype, device=x.device)
    rows = x.numel() // x.shape[-1]
    _act_and_mul[(rows, triton.cdiv(d, COLUMN_BLOCK))](x, out, d, OP=act, BLOCK=COLUMN_BLOCK,
                                                      num_warps=4)
    return out


@triton.jit
def _dropout(x, out, n, p, scale, seed, BLOCK: tl.constexpr):
    # one Philox call per four consecutive elements: group g's four words, in order, are the
    # draws of elements 4g .. 4g + 3. join adds a minor axis, so the nested join's [g, i, j]
    # is word 2j + i: joining (r0, r2) and (r1, r3) puts word k at 4g + k, row-major
    groups = tl.program_id(0) * (BLOCK // 4) + tl.arange(0, BLOCK // 4)
    r0, r1, r2, r3 = tl.rand4x(seed, groups)
    draws = tl.reshape(tl.join(tl.join(r0, r2), tl.join(r1, r3)), [BLOCK])
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    xs = tl.load(x + offs, mask=mask, other=0.0).to(tl.float32)
    keep = draws > p
    tl.store(out + offs, tl.where(keep, xs * scale, 0.0).to(out.dtype.element_ty), mask=mask)


def dropout(x, p: float, seed: int, out=None):
    """ktile's dropout exactly: element i is kept where word i % 4 of tl.rand4x(seed, i // 4)
    > p (ktile/ops/rand/reference.py's rand4, bit-exact with tl.rand4x), kept ones times the
    float32 scale 1 / (1 - p) (ktile/ops/dropout/reference.py's `scale`, computed here)."""
    from .dropout.reference import scale
    out = torch.empty_like(x) if out is None else out
    n = x.numel()
    _dropout[(triton.cdiv(n, ELEMENT_BLOCK),)](x, out, n, p, float(scale(p)), seed,
                                               BLOCK=ELEMENT_BLOCK,
                                               num_warps=8)
    return out


# ---- rotary (NeoX, in place; one program per token and head, q heads then k heads) ------------

@triton.jit
def _rotary_neox(positions, q, k, cache, q_heads, HEAD: tl.constexpr, HALF: tl.constexpr,
                 Q_STRIDE: tl.constexpr, K_STRIDE: tl.constexpr):
    t, h = tl.program_id(0).to(tl.int64), tl.program_id(1)
    half = tl.arange(0, HALF)
    pos = tl.load(positions + t).to(tl.int64)
    cos = tl.load(cache + pos * 2 * HALF + half)
    sin = tl.load(cache + pos * 2 * HALF + HALF + half)
    if h < q_heads:
        base = q + t * Q_STRIDE + h * HEAD
    else:
        base = k + t * K_STRIDE + (h - q_heads) * HEAD
    x1 = tl.load(base + half).to(tl.float32)
    x2 = tl.load(base + HALF + half).to(tl.float32)
    tl.store(base + half, (x1 * cos - x2 * sin).to(base.dtype.element_ty))
    tl.store(base + HALF + half, (x2 * cos + x1 * sin).to(base.dtype.element_ty))


def rotary_neox(positions, q, k, cache, head: int = 128):
    """Full rotation (rot_dim == head size), q `[tokens, heads · head]`, k likewise."""
    tokens = positions.numel()
    q_heads, k_heads = q.shape[-1] // head, k.shape[-1] // head
    _rotary_neox[(tokens, q_heads + k_heads)](positions, q, k, cache, q_heads, HEAD=head,
                                              HALF=head // 2, Q_STRIDE=q.shape[-1],
                                              K_STRIDE=k.shape[-1], num_warps=1)
    return q, k


# ---- per-token quantisation (one program per row) and embedding ------------------------------

@triton.jit
def _round_half_even(v):
    f = tl.floor(v)
    d = v - f
    odd = (f - 2.0 * tl.floor(f * 0.5)) != 0.0
    return f + tl.where((d > 0.5) | ((d == 0.5) & odd), 1.0, 0.0)


@triton.jit
def _quant_per_token(x, q, scales, cols, FP8: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    xs = tl.load(x + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(xs), 0)
    if FP8:
        scale = tl.maximum(amax / 448.0, 1.0 / (448.0 * 512.0))
        v = tl.minimum(tl.maximum(xs * (1.0 / scale), -448.0), 448.0)
    else:
        scale = amax / 127.0
        v = _round_half_even(xs * tl.where(amax > 0, 127.0 / amax, 0.0))
        v = tl.minimum(tl.maximum(v, -128.0), 127.0)
    tl.store(q + row * cols + offs, v.to(q.dtype.element_ty), mask=mask)
    tl.store(scales + row, scale)


def quant_per_token(x, dtype, fp8: bool):
    """(q of x's shape in `dtype`, scales [tokens, 1] float32), dynamic per token."""
    cols = x.shape[-1]
    rows = x.numel() // cols
    q = torch.empty_like(x, dtype=dtype)
    scales = torch.empty((rows, 1), dtype=torch.float32, device=x.device)
    block = triton.next_power_of_2(cols)
    _quant_per_token[(rows,)](x, q, scales, cols, FP8=fp8, BLOCK=block,
                              num_warps=max(1, min(16, block // 512)))
    return q, scales


@triton.jit
def _embedding(ids, weight, out, hidden, vocabulary, BLOCK: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    row = tl.load(ids + t).to(tl.int64)
    inside = (row >= 0) & (row < vocabulary)     # ktile's contract: an id outside gives zeros
    mask = offs < hidden
    values = tl.load(weight + row * hidden + offs, mask=mask & inside, other=0.0)
    tl.store(out + t * hidden + offs, values, mask=mask)


def embedding(ids, weight, out=None):
    hidden = weight.shape[1]
    if out is None:
        out = torch.empty((*ids.shape, hidden), dtype=weight.dtype, device=weight.device)
    _embedding[(ids.numel(), triton.cdiv(hidden, COLUMN_BLOCK))](
        ids, weight, out, hidden, weight.shape[0], BLOCK=COLUMN_BLOCK, num_warps=4)
    return out
