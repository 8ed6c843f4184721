"""Elementwise ops: kt.unary, kt.binary, kt.select, kt.cast.

Float math is done in float32 and rounded to the result's dtype; integer math in int64 and
wrapped to the result's width; masks are numpy bool. A vector operand of a tile op
broadcasts along its axis: a "row" vector (one value per tile row) as v[:, None], a "col"
vector as v[None, :]; a scalar operand broadcasts everywhere.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.ir import Attribute

from ..errors import InternalError
from ..ir import ops as kt
from ..ir.types import RegTileType, RegVecType
from .values import cast_rounder, element_dtype, f32, is_array_type, result_rounder

_ONE = np.float32(1.0)
_ERF = np.frompyfunc(math.erf, 1, 1)


def _sigmoid(x):
    return _ONE / (_ONE + np.exp(-x))


def _gelu(x):
    """The exact (erf) form, as torch's default gelu: erf to float32 (correctly rounded),
    the rest in float32 as a float32 kernel computes it."""
    x32 = np.asarray(x, np.float32)
    erf = np.asarray(_ERF(x32.astype(np.float64) * math.sqrt(0.5)), np.float32)
    return np.float32(0.5) * x32 * (_ONE + erf)


FLOAT_UNARY: dict[str, Callable] = {
    "neg": np.negative, "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2,
    "sqrt": np.sqrt, "rsqrt": lambda x: _ONE / np.sqrt(x), "silu": lambda x: x * _sigmoid(x),
    "gelu": _gelu, "relu": lambda x: np.maximum(x, np.float32(0)), "abs": np.abs,
    "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "sigmoid": _sigmoid,
    "recip": lambda x: _ONE / x,
}
INT_UNARY = {"neg": np.negative, "abs": np.abs, "relu": lambda x: np.maximum(x, 0)}


def _int_div(x, y):
    """Integer division truncating toward zero, as C++ does."""
    q = np.floor_divide(x, y)
    return q + ((q * y != x) & ((x < 0) != (y < 0)))


FLOAT_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
                "max": np.maximum, "min": np.minimum, "pow": np.power}
INT_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _int_div,
              "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
              "or": np.bitwise_or}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}
LOGICAL = {"and": np.logical_and, "or": np.logical_or}

_CONVERT_ARRAY = {"float": lambda a: a.astype(np.float32, copy=False),
                  "int": lambda a: a.astype(np.int64), "same": None}
_CONVERT_SCALAR = {"float": np.float32, "int": int, "same": None}


def operand_reader(ty: Attribute, compute: str, result: Attribute) -> Callable | None:
    """How an operand of type `ty` enters a computation done in `compute` ("float", "int"
    or "same") with a result of type `result`; None when it enters as it is."""
    if not is_array_type(ty):
        return _CONVERT_SCALAR[compute]
    convert = _CONVERT_ARRAY[compute]
    if compute == "float" and element_dtype(ty).kind == "float":
        convert = None  # every float tile is already a float32 array
    if not (isinstance(ty, RegVecType) and isinstance(result, RegTileType)):
        return convert
    index = (slice(None), None) if ty.axis.data == "row" else (None, slice(None))
    if convert is None:
        return lambda a: a[index]
    return lambda a: convert(a)[index]


def _read(slot: int, reader: Callable | None) -> Callable:
    if reader is None:
        return lambda r: r[slot]
    return lambda r: reader(r[slot])


def _binary_plan(op: kt.BinaryOp) -> tuple[Callable, str]:
    """(numpy function, how operands enter) of a kt.binary."""
    fn = op.fn.data
    kinds = {element_dtype(op.x.type).kind, element_dtype(op.y.type).kind}
    result = element_dtype(op.result.type)
    if fn in COMPARE:
        return COMPARE[fn], ("float" if "float" in kinds else "int")
    if fn in LOGICAL and result.kind == "bool":
        return LOGICAL[fn], "same"
    if fn == "pow" or result.kind == "float":
        return FLOAT_BINARY[fn], "float"
    return INT_BINARY[fn], "int"


def _binary(op: kt.BinaryOp, c):
    fn, compute = _binary_plan(op)
    x = _read(c.slot(op.x), operand_reader(op.x.type, compute, op.result.type))
    y = _read(c.slot(op.y), operand_reader(op.y.type, compute, op.result.type))
    o, rnd = c.slot(op.result), result_rounder(element_dtype(op.result.type))

    def h(r, w):
        r[o] = rnd(fn(x(r), y(r)))
    return h


def _unary_fn(op: kt.UnaryOp) -> tuple[Callable, Callable]:
    """(function, operand conversion) of a kt.unary on a tile or vector."""
    fn, kind = op.fn.data, element_dtype(op.result.type).kind
    if kind == "bool" and fn == "not":
        return np.logical_not, lambda a: a
    if kind == "int" and fn in INT_UNARY:
        return INT_UNARY[fn], lambda a: a.astype(np.int64)
    if kind == "float" and fn in FLOAT_UNARY:
        return FLOAT_UNARY[fn], lambda a: a
    raise InternalError(f"kt.unary {fn} of {kind} values has no interpretation")


def _unary(op: kt.UnaryOp, c):
    x, o = c.slot(op.x), c.slot(op.result)
    if not is_array_type(op.result.type):
        return _scalar_unary(op, x, o)
    fn, convert = _unary_fn(op)
    rnd = result_rounder(element_dtype(op.result.type))

    def h(r, w):
        r[o] = rnd(fn(convert(r[x])))
    return h


def _scalar_unary(op: kt.UnaryOp, x: int, o: int):
    if element_dtype(op.result.type).kind != "float" or op.fn.data not in FLOAT_UNARY:
        raise InternalError(f"kt.unary {op.fn.data} of scalar type {op.result.type}")
    fn = FLOAT_UNARY[op.fn.data]

    def h(r, w):
        r[o] = f32(fn(np.float32(r[x])))
    return h


def _select(op: kt.SelectOp, c):
    res = op.result.type
    cond = _read(c.slot(op.cond), operand_reader(op.cond.type, "same", res))
    x = _read(c.slot(op.x), operand_reader(op.x.type, "same", res))
    y = _read(c.slot(op.y), operand_reader(op.y.type, "same", res))
    o, rnd = c.slot(op.result), result_rounder(element_dtype(res))

    def h(r, w):
        r[o] = rnd(np.where(cond(r), x(r), y(r)))
    return h


def _cast(op: kt.CastOp, c):
    x, o = c.slot(op.x), c.slot(op.result)
    convert = cast_rounder(element_dtype(op.result.type))

    def h(r, w):
        r[o] = convert(r[x])
    return h


HANDLERS = {kt.UnaryOp: _unary, kt.BinaryOp: _binary, kt.SelectOp: _select, kt.CastOp: _cast}
