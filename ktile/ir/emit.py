"""The builder seam: the only place that constructs IR operations for the tracer.

The tracer asks for an op by what it means (`b.load(g, coords, ty)`); this module picks the
xDSL classes, keeps the insertion point, and stamps every op with the Python location the
tracer gives it. Swapping the IR library touches this file and `ops.py`/`types.py` alone.

Ops are built through xDSL's `Operation.create` (the parser's path: operands, result types
and properties given as they are stored) rather than the classes' constructors, whose generic
argument building costs about half of a trace; the properties are the attributes made once per
process below. Each builder gives an op equal to the class constructor's
(tests/tier0/test_trace_speed_paths.py), and the verify pass checks it like any other.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from functools import lru_cache

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (ArrayAttr, DictionaryAttr, FileLineColLoc, Float32Type,
                                   Float64Type, FloatAttr, FunctionType, IndexType, IntAttr,
                                   IntegerAttr, IntegerType, ModuleOp, StringAttr, UnknownLoc,
                                   i1, i32, i64)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from . import ops as kt

Loc = tuple[str, int, int]
CMP_INT = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
CMP_FLOAT = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
INT_BINARY = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp,
              "floordiv": arith.FloorDivSIOp, "div": arith.DivSIOp, "mod": arith.RemSIOp,
              "cdiv": arith.CeilDivSIOp, "max": arith.MaxSIOp, "min": arith.MinSIOp,
              "and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp,
              "shl": arith.ShLIOp, "shr": arith.ShRUIOp}
FLOAT_BINARY = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp,
                "div": arith.DivfOp, "max": arith.MaximumfOp, "min": arith.MinimumfOp}
# a comparison's `predicate` property: the index of its name in xDSL's (and MLIR's) list
CMPI_PREDICATES = {name: i for i, name in enumerate(arith.CMPI_COMPARISON_OPERATIONS)}
CMPF_PREDICATES = {name: i for i, name in enumerate(arith.CMPF_COMPARISON_OPERATIONS)}

index = IndexType()
f32 = Float32Type()
f64 = Float64Type()


def is_int_like(t: Attribute) -> bool:
    return isinstance(t, (IndexType, IntegerType))


class Builder:
    """Appends ops at an insertion point, each stamped with `loc_of()`."""

    def __init__(self, loc_of: Callable[[], Loc | None]):
        self.module = ModuleOp([])
        self._blocks: list[Block] = [self.module.body.block]
        self._loc_of = loc_of
        self._constants: dict[tuple, SSAValue] = {}

    # ---- plumbing ------------------------------------------------------------------------

    def insert(self, op: Operation) -> Operation:
        op.location = location(self._loc_of())
        self._blocks[-1].add_op(op)
        return op

    def _build(self, cls: type[Operation], operands: Sequence[SSAValue] = (),
               result_types: Sequence[Attribute] = (),
               properties: dict[str, Attribute] | None = None) -> Operation:
        """A `cls` op with these operands (variadic ones flattened in place), results and
        properties, appended at the insertion point at the tracer's location."""
        op = cls.create(operands=operands, result_types=result_types,
                        properties=properties or {}, location=location(self._loc_of()))
        self._blocks[-1].add_op(op)
        return op

    def _value(self, cls: type[Operation], operands: Sequence[SSAValue],
               result_type: Attribute, properties: dict[str, Attribute] | None = None
               ) -> SSAValue:
        """`_build` of an op with one result, which it returns."""
        return self._build(cls, operands, (result_type,), properties).results[0]

    @contextmanager
    def at_end_of(self, block: Block):
        self._blocks.append(block)
        try:
            yield block
        finally:
            self._blocks.pop()

    def func(self, name: str, arg_types: Sequence[Attribute], result_types: Sequence[Attribute],
             attrs: dict[str, Attribute] | None = None) -> FuncOp:
        fn = FuncOp(name, (list(arg_types), list(result_types)))
        for key, value in (attrs or {}).items():
            fn.attributes[key] = value
        self.insert(fn)
        return fn

    def ret(self, values: Sequence[SSAValue] = ()) -> None:
        self.insert(ReturnOp(*values))

    def set_module_attr(self, key: str, value: Attribute) -> None:
        self.module.attributes[key] = value

    # ---- scalars -------------------------------------------------------------------------

    def _constant(self, attr: Attribute) -> SSAValue:
        """One constant per value and type in each block, reused by later uses there
        (attributes are immutable values: equal attributes are the same constant)."""
        key = (id(self._blocks[-1]), constant_key(attr))
        found = self._constants.get(key)
        if found is None or found.owner.parent is not self._blocks[-1]:
            found = self._value(arith.ConstantOp, (), attr.get_type(), {"value": attr})
            self._constants[key] = found
        return found

    def const_index(self, value: int) -> SSAValue:
        return self._constant(integer_attr(int(value), index))

    def const_int(self, value: int, width: int = 32) -> SSAValue:
        return self._constant(integer_attr(int(value), integer_type(width)))

    def const_f32(self, value: float) -> SSAValue:
        return self._constant(f32_attr(float(value)))

    def const_bool(self, value: bool) -> SSAValue:
        return self._constant(integer_attr(int(bool(value)), i1))

    def scalar_binary(self, fn: str, x: SSAValue, y: SSAValue) -> SSAValue:
        # the overflow and fast-math flags are left to their defaults, as the classes do
        table = INT_BINARY if is_int_like(x.type) else FLOAT_BINARY
        return self._value(table[fn], (x, y), x.type)

    def scalar_compare(self, fn: str, x: SSAValue, y: SSAValue) -> SSAValue:
        if is_int_like(x.type):
            cls, predicate = arith.CmpiOp, CMPI_PREDICATES[CMP_INT[fn]]
        else:
            cls, predicate = arith.CmpfOp, CMPF_PREDICATES[CMP_FLOAT[fn]]
        return self._value(cls, (x, y), i1, {"predicate": int_attr(predicate)})

    def scalar_select(self, cond: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._value(arith.SelectOp, (cond, x, y), x.type)

    def index_to_f32(self, x: SSAValue) -> SSAValue:
        if isinstance(x.type, IndexType):
            x = self._value(arith.IndexCastOp, (x,), i64)
        return self._value(arith.SIToFPOp, (x,), f32)

    def int_cast(self, x: SSAValue, to: Attribute) -> SSAValue:
        """index ↔ iN."""
        if x.type == to:
            return x
        if isinstance(x.type, IndexType) or isinstance(to, IndexType):
            return self._value(arith.IndexCastOp, (x,), to)
        op = arith.ExtSIOp if to.width.data > x.type.width.data else arith.TruncIOp
        return self._value(op, (x,), to)

    # ---- hardware scalars ----------------------------------------------------------------

    def block_idx(self, dim: int) -> SSAValue:
        return self._value(kt.BlockIdxOp, (), index, {"dim": int_attr(dim)})

    def warp_id(self) -> SSAValue:
        return self._value(kt.WarpIdOp, (), index)

    def extent(self, g: SSAValue, dim: int) -> SSAValue:
        return self._value(kt.ExtentOp, (g,), index, {"dim": int_attr(dim)})

    # ---- memory --------------------------------------------------------------------------

    def load(self, g: SSAValue, coords: Sequence[SSAValue], ty: Attribute, pad: float,
             unit: str = "tile") -> SSAValue:
        return self._value(kt.LoadOp, (g, *coords), ty,
                           {"pad": f64_attr(float(pad)), **unit_props(unit)})

    def store(self, g: SSAValue, coords: Sequence[SSAValue], value: SSAValue,
              unit: str = "tile") -> None:
        self._build(kt.StoreOp, (g, *coords, value), (), unit_props(unit))

    def gather(self, g, batch, depth, rows, col, ty) -> SSAValue:
        return self._value(kt.GatherOp, (g, batch, depth, rows, col), ty)

    def scatter(self, g, batch, depth, rows, col, value) -> None:
        self._build(kt.ScatterOp, (g, batch, depth, rows, col, value))

    def alloc(self, ty: Attribute) -> SSAValue:
        return self._value(kt.AllocOp, (), ty)

    def copy_async(self, g: SSAValue, coords: Sequence[SSAValue], dst: SSAValue,
                   unit: str = "tile") -> None:
        self._build(kt.CopyAsyncOp, (g, *coords, dst), (), unit_props(unit))

    def lds_load(self, src: SSAValue, row: SSAValue, col: SSAValue, ty: Attribute) -> SSAValue:
        return self._value(kt.LdsLoadOp, (src, row, col), ty)

    def lds_store(self, dst: SSAValue, value: SSAValue,
                  coords: Sequence[SSAValue] = ()) -> None:
        """The whole of `dst`, or with coords = (row, col) one value-shaped sub-tile."""
        self._build(kt.LdsStoreOp, (dst, value, *coords))

    def wait_for(self, tiles: Sequence[SSAValue]) -> None:
        self._build(kt.WaitForOp, tuple(tiles))

    def barrier(self) -> None:
        self._build(kt.BarrierOp)

    # ---- compute -------------------------------------------------------------------------

    def mma(self, a: SSAValue, b: SSAValue, acc: SSAValue, variant: str) -> SSAValue:
        return self._value(kt.MmaOp, (a, b, acc), acc.type, {"variant": string_attr(variant)})

    def mma_shared(self, a: SSAValue, b: SSAValue, acc: SSAValue,
                   variant: str = "ABt") -> SSAValue:
        props = None if variant == "ABt" else {"variant": string_attr(variant)}
        return self._value(kt.MmaSharedOp, (a, b, acc), acc.type, props)

    def unary(self, fn: str, x: SSAValue) -> SSAValue:
        return self._value(kt.UnaryOp, (x,), x.type, {"fn": string_attr(fn)})

    def binary(self, fn: str, x: SSAValue, y: SSAValue, ty: Attribute) -> SSAValue:
        return self._value(kt.BinaryOp, (x, y), ty, {"fn": string_attr(fn)})

    def select(self, cond: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._value(kt.SelectOp, (cond, x, y), x.type)

    def cast(self, x: SSAValue, ty: Attribute) -> SSAValue:
        return self._value(kt.CastOp, (x,), ty)

    def reduce(self, kind: str, axis: str, x: SSAValue, ty: Attribute) -> SSAValue:
        return self._value(kt.ReduceOp, (x,), ty,
                           {"kind": string_attr(kind), "axis": string_attr(axis)})

    def block_reduce(self, kind: str, x: SSAValue) -> SSAValue:
        return self._value(kt.BlockReduceOp, (x,), x.type, {"kind": string_attr(kind)})

    def fill(self, value: float, ty: Attribute) -> SSAValue:
        return self._value(kt.FillOp, (), ty, {"value": f64_attr(float(value))})

    def iota(self, axis: str, ty: Attribute) -> SSAValue:
        return self._value(kt.IotaOp, (), ty, {"axis": string_attr(axis)})

    def causal_mask(self, x, row0, col0, fill: float) -> SSAValue:
        return self._value(kt.CausalMaskOp, (x, row0, col0), x.type,
                           {"fill": f64_attr(float(fill))})

    def rand(self, seed: SSAValue, offsets: SSAValue, ty: Attribute,
             counter: str = "element") -> SSAValue:
        props = {} if counter == "element" else {"counter": StringAttr(counter)}
        return self._value(kt.RandOp, (seed, offsets), ty, props)

    # ---- control flow --------------------------------------------------------------------

    def for_loop(self, lb: SSAValue, ub: SSAValue, step: SSAValue,
                 inits: Sequence[SSAValue]) -> scf.ForOp:
        body = Block(arg_types=[lb.type, *[v.type for v in inits]])
        op = scf.ForOp(lb, ub, step, list(inits), body)
        self.insert(op)
        return op

    def if_op(self, cond: SSAValue, result_types: Sequence[Attribute]) -> scf.IfOp:
        op = scf.IfOp(cond, list(result_types), Region(Block()), Region(Block()))
        self.insert(op)
        return op

    def while_op(self, inits: Sequence[SSAValue]) -> scf.WhileOp:
        types = [v.type for v in inits]
        op = scf.WhileOp(list(inits), types, Region(Block(arg_types=types)),
                         Region(Block(arg_types=types)))
        self.insert(op)
        return op

    def yield_(self, values: Sequence[SSAValue]) -> None:
        self._build(scf.YieldOp, tuple(values))

    def condition(self, cond: SSAValue, values: Sequence[SSAValue]) -> None:
        self.insert(scf.ConditionOp(cond, *values))


def constant_key(attr: Attribute) -> object:
    """What tells two constants apart: the attribute, except that a float's sign and NaN
    count (0.0 == -0.0 and NaN != NaN as numbers)."""
    if not isinstance(attr, FloatAttr):
        return attr
    value = attr.value.data
    return attr.type, math.copysign(1.0, value), value if value == value else "nan"


# ---- attributes, made once -------------------------------------------------------------------
# xDSL attributes are immutable and checked when built (a few microseconds each), so the
# builder makes each distinct one once per process; every trace reuses it.

@lru_cache(maxsize=4096)
def location(loc: Loc | None) -> Attribute:
    """The op location of a kernel line (file, line, column); UnknownLoc where none is."""
    if not loc:
        return UnknownLoc()
    return FileLineColLoc(StringAttr(loc[0]), IntAttr(loc[1]), IntAttr(loc[2]))


@lru_cache(maxsize=4096)
def integer_attr(value: int, ty: Attribute) -> IntegerAttr:
    return IntegerAttr(value, ty)


@lru_cache(maxsize=64)
def integer_type(width: int) -> IntegerType:
    return IntegerType(width)


def f32_attr(value: float) -> FloatAttr:
    """A float constant; -0.0 and 0.0 are different attributes (equal as Python keys)."""
    return _f32_attr(value, math.copysign(1.0, value))


@lru_cache(maxsize=4096)
def _f32_attr(value: float, sign: float) -> FloatAttr:
    return FloatAttr(value, f32)


@lru_cache(maxsize=4096)
def string_attr(value: str) -> StringAttr:
    return StringAttr(value)


def f64_attr(value: float) -> FloatAttr:
    """A kt op's float property (f64, as ops.py's constructors make it); -0.0 and 0.0 apart."""
    return _f64_attr(value, math.copysign(1.0, value))


@lru_cache(maxsize=4096)
def _f64_attr(value: float, sign: float) -> FloatAttr:
    return FloatAttr(value, f64)


def unit_props(unit: str) -> dict[str, Attribute]:
    """A global access's `unit` property, left out for tile coordinates (ops.py's rule)."""
    return {} if unit == "tile" else {"unit": string_attr(unit)}


def int_attr(value: int) -> IntegerAttr:
    return integer_attr(value, i64)


def array_attr(values: Sequence[Attribute]) -> ArrayAttr:
    return ArrayAttr(list(values))


def dict_attr(values: dict[str, Attribute]) -> DictionaryAttr:
    return DictionaryAttr(values)
