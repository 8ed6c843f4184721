"""Elementwise ops: kt.unary, kt.binary, kt.select, kt.cast.

Float math is done in float32 and rounded to the result's dtype; integer math in int64 and
wrapped to the result's width; masks are numpy bool. A vector operand of a tile op
broadcasts along its axis: a "row" vector (one value per tile row) as v[:, None], a "col"
vector as v[None, :]; a scalar operand broadcasts everywhere. What each function computes
is its row of the functions' table (ktile/ir/elementwise.py).
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from xdsl.ir import Attribute

from ..errors import InternalError
from ..ir import elementwise
from ..ir import ops as kt
from ..ir.types import RegTileType, RegVecType
from .values import cast_rounder, element_dtype, f32, is_array_type, result_rounder


def _in_numpy(semantics: Callable) -> Callable:
    """A row's semantics as a function of the operands alone."""
    return functools.partial(semantics, np)


def _functions(rows, domain: str) -> dict[str, Callable]:
    """name -> numpy function, for the rows with semantics in `domain`."""
    return {f.name: _in_numpy(getattr(f, domain)) for f in rows if getattr(f, domain)}


FLOAT_UNARY = _functions(elementwise.UNARY, "floating")
INT_UNARY = _functions(elementwise.UNARY, "integer")
LOGICAL_UNARY = _functions(elementwise.UNARY, "logical")
_COMPARES = [f for f in elementwise.BINARY if f.rule == "compare"]
_COMPUTES = [f for f in elementwise.BINARY if f.rule != "compare"]
FLOAT_BINARY = _functions(_COMPUTES, "floating")
INT_BINARY = _functions(_COMPUTES, "integer")
COMPARE = _functions(_COMPARES, "floating")
LOGICAL = _functions(_COMPUTES, "logical")

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
    if fn not in INT_BINARY or result.kind == "float":  # pow computes in float32 always
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
    if kind == "bool" and fn in LOGICAL_UNARY:
        return LOGICAL_UNARY[fn], lambda a: a
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
