"""Scalar ops: arith (as MLIR defines it) and the scalars the hardware gives a block.

index is a Python int; iN a Python int wrapped to N bits (two's complement); i1 a bool;
f32 a Python float rounded to float32 after every op.
"""
from __future__ import annotations

import math
import operator

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType

from ..errors import InternalError
from ..ir import ops as kt
from ..ir.query import error_at
from .values import f32, int_width, scalar_fixer


def _int_div(op, fn):
    def divide(a, b):
        if b == 0:
            raise error_at(op, "integer division by zero (the divisor is 0 for this block and "
                               "these tensors)", hint="keep the divisor at least 1 (e.g. "
                               "hk.cdiv(n, tile) rather than n // tile for a count that may "
                               "be below one tile), or branch around the division")
        return fn(a, b)
    return divide


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _trunc_rem(a: int, b: int) -> int:
    return a - b * _trunc_div(a, b)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _shift_right_unsigned(bits: int):
    mask = (1 << bits) - 1
    return lambda a, b: (a & mask) >> b


def _nan_max(a: float, b: float) -> float:
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)


def _nan_min(a: float, b: float) -> float:
    return math.nan if math.isnan(a) or math.isnan(b) else min(a, b)


def _float_div(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


_SCALAR_BINARY = {
    arith.AddiOp: lambda op: operator.add, arith.SubiOp: lambda op: operator.sub,
    arith.MuliOp: lambda op: operator.mul, arith.MaxSIOp: lambda op: max,
    arith.MinSIOp: lambda op: min, arith.AndIOp: lambda op: operator.and_,
    arith.OrIOp: lambda op: operator.or_, arith.XOrIOp: lambda op: operator.xor,
    arith.ShLIOp: lambda op: operator.lshift,
    arith.ShRUIOp: lambda op: _shift_right_unsigned(int_width(op.result.type)),
    arith.DivSIOp: lambda op: _int_div(op, _trunc_div),
    arith.FloorDivSIOp: lambda op: _int_div(op, operator.floordiv),
    arith.CeilDivSIOp: lambda op: _int_div(op, _ceil_div),
    arith.RemSIOp: lambda op: _int_div(op, _trunc_rem),
    arith.AddfOp: lambda op: operator.add, arith.SubfOp: lambda op: operator.sub,
    arith.MulfOp: lambda op: operator.mul, arith.DivfOp: lambda op: _float_div,
    arith.MaximumfOp: lambda op: _nan_max, arith.MinimumfOp: lambda op: _nan_min,
}


def _binary(op, c):
    fn = _SCALAR_BINARY[type(op)](op)
    x, y, o = c.slot(op.lhs), c.slot(op.rhs), c.slot(op.result)
    fix = scalar_fixer(op.result.type)
    if fix is None:
        def h(r, w):
            r[o] = fn(r[x], r[y])
        return h

    def h_fixed(r, w):
        r[o] = fix(fn(r[x], r[y]))
    return h_fixed


# MLIR's predicate numbers (arith.cmpi / arith.cmpf)
_CMPI = {0: operator.eq, 1: operator.ne, 2: operator.lt, 3: operator.le, 4: operator.gt,
         5: operator.ge}
_CMPI_UNSIGNED = {6: operator.lt, 7: operator.le, 8: operator.gt, 9: operator.ge}
_CMPF_ORDERED = {1: operator.eq, 2: operator.gt, 3: operator.ge, 4: operator.lt, 5: operator.le,
                 6: operator.ne, 7: lambda a, b: True}
_CMPF_UNORDERED = {8: operator.eq, 9: operator.gt, 10: operator.ge, 11: operator.lt,
                   12: operator.le, 13: operator.ne, 14: lambda a, b: False}


def _cmpi_fn(op):
    pred = op.predicate.value.data
    if pred in _CMPI:
        return _CMPI[pred]
    mask = (1 << int_width(op.lhs.type)) - 1
    base = _CMPI_UNSIGNED[pred]
    return lambda a, b: base(a & mask, b & mask)


def _cmpf_fn(op):
    pred = op.predicate.value.data
    if pred in (0, 15):
        return lambda a, b: pred == 15
    if pred in _CMPF_ORDERED:
        base = _CMPF_ORDERED[pred]
        return lambda a, b: not (math.isnan(a) or math.isnan(b)) and base(a, b)
    base = _CMPF_UNORDERED[pred]
    return lambda a, b: math.isnan(a) or math.isnan(b) or base(a, b)


def _compare(make_fn):
    def factory(op, c):
        fn = make_fn(op)
        x, y, o = c.slot(op.lhs), c.slot(op.rhs), c.slot(op.result)

        def h(r, w):
            r[o] = bool(fn(r[x], r[y]))
        return h
    return factory


def _constant(op, c):
    attr = op.value
    if isinstance(attr, IntegerAttr):
        value = attr.value.data
        ty = op.result.type
        value = bool(value) if isinstance(ty, IntegerType) and ty.width.data == 1 else value
    elif isinstance(attr, FloatAttr):
        value = f32(attr.value.data)
    else:
        raise InternalError(f"the interpreter has no value for constant {attr}")
    c.constant(op.result, value)
    return None


def _signed(value) -> int:
    """An iN value as a signed int; an i1 true is -1 (all bits set), as MLIR sign-extends."""
    return -1 if value is True else int(value)


def _int_convert(op, c):
    """index_cast, extsi, trunci: the same value, wrapped to the result width."""
    x, o = c.slot(op.input), c.slot(op.result)
    fix = scalar_fixer(op.result.type) or (lambda v: v)

    def h(r, w):
        r[o] = fix(_signed(r[x]))
    return h


def _sitofp(op, c):
    x, o = c.slot(op.input), c.slot(op.result)

    def h(r, w):
        r[o] = f32(_signed(r[x]))
    return h


def _negf(op, c):
    x, o = c.slot(op.operand), c.slot(op.result)

    def h(r, w):
        r[o] = -r[x]
    return h


def _select(op, c):
    cond, x, y, o = c.slot(op.cond), c.slot(op.lhs), c.slot(op.rhs), c.slot(op.result)

    def h(r, w):
        r[o] = r[x] if r[cond] else r[y]
    return h


# ---- what the hardware gives a block -------------------------------------------------------

def _block_idx(op, c):
    dim, o = op.prop_int("dim"), c.slot(op.result)

    def h(r, w):
        r[o] = w.block.idx[dim]
    return h


def _warp_id(op, c):
    o = c.slot(op.result)

    def h(r, w):
        r[o] = w.id
    return h


def _extent(op, c):
    dim, g, o = op.prop_int("dim"), c.slot(op.src), c.slot(op.result)

    def h(r, w):
        r[o] = r[g].shape[dim]
    return h


HANDLERS = {
    **{cls: _binary for cls in _SCALAR_BINARY},
    arith.CmpiOp: _compare(_cmpi_fn), arith.CmpfOp: _compare(_cmpf_fn),
    arith.ConstantOp: _constant, arith.IndexCastOp: _int_convert, arith.ExtSIOp: _int_convert,
    arith.TruncIOp: _int_convert, arith.SIToFPOp: _sitofp, arith.NegfOp: _negf,
    arith.SelectOp: _select,
    kt.BlockIdxOp: _block_idx, kt.WarpIdOp: _warp_id, kt.ExtentOp: _extent,
}
