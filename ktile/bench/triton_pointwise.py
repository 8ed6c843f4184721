"""Plain Triton kernels for the elementwise, activation, dropout, rotary, quantisation and
embedding benches (the norms and softmax are in triton_kernels.py, which collects both)."""
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


def _launch_elementwise(op: str, x, y=None):
    out = torch.empty_like(x)
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


def _launch_act(op: str, x):
    rows, d = x.shape[0], x.shape[1] // 2
    out = torch.empty((rows, d), dtype=x.dtype, device=x.device)
    _act_and_mul[(rows, triton.cdiv(d, COLUMN_BLOCK))](x, out, d, OP=op, BLOCK=COLUMN_BLOCK,
                                                      num_warps=4)
    return out


@triton.jit
def _dropout(x, out, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    xs = tl.load(x + offs, mask=mask, other=0.0).to(tl.float32)
    keep = tl.rand(seed, offs.to(tl.int32)) > p
    tl.store(out + offs, tl.where(keep, xs / (1 - p), 0.0).to(out.dtype.element_ty), mask=mask)


def dropout(x, p: float, seed: int):
    out, n = torch.empty_like(x), x.numel()
    _dropout[(triton.cdiv(n, ELEMENT_BLOCK),)](x, out, n, p, seed, BLOCK=ELEMENT_BLOCK,
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


def _launch_quant(x, dtype, fp8: bool):
    rows, cols = x.shape
    q = torch.empty_like(x, dtype=dtype)
    scales = torch.empty((rows, 1), dtype=torch.float32, device=x.device)
    block = triton.next_power_of_2(cols)
    _quant_per_token[(rows,)](x, q, scales, cols, FP8=fp8, BLOCK=block,
                              num_warps=max(1, min(16, block // 512)))
    return q, scales


@triton.jit
def _embedding(ids, weight, out, hidden, BLOCK: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < hidden
    row = tl.load(ids + t).to(tl.int64)
    tl.store(out + t * hidden + offs, tl.load(weight + row * hidden + offs, mask=mask), mask=mask)


def embedding(ids, weight):
    hidden = weight.shape[1]
    out = torch.empty((ids.numel(), hidden), dtype=weight.dtype, device=weight.device)
    _embedding[(ids.numel(), triton.cdiv(hidden, COLUMN_BLOCK))](ids, weight, out, hidden,
                                                                BLOCK=COLUMN_BLOCK, num_warps=4)
    return out.view(*ids.shape, hidden)


def launchers() -> dict:
    table = {f"binary_{op}": (lambda op: lambda x, y: _launch_elementwise(op, x, y))(op)
             for op in ("add", "sub", "mul", "maximum", "minimum")}
    table.update({f"unary_{op}": (lambda op: lambda x: _launch_elementwise(op, x))(op)
                  for op in ("exp", "relu", "gelu", "silu", "neg", "abs")})
    table.update({
        "silu_and_mul": lambda x: _launch_act("silu", x),
        "gelu_and_mul": lambda x: _launch_act("gelu", x),
        "rotary_neox": rotary_neox,
        "int8_per_token": lambda x: _launch_quant(x, torch.int8, False),
        "fp8_per_token": lambda x: _launch_quant(x, torch.float8_e4m3fn, True),
        "embedding": embedding,
    })
    return table
