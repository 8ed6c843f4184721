"""Traced register tiles and vectors: elementwise operators with broadcasting, reductions,
and `a @ b.T` MMA expressions."""
from __future__ import annotations

from typing import Any

from .. import dtypes
from ..dtypes import DType
from ..ir import emit
from ..ir import types as irt
from . import tracer
from .hk_methods import TileMethods, VecMethods, landed
from .types import RT, as_dtype
from .values import (ARITHMETIC_OPERATORS, COMPARISON_OPERATORS, Scalar, Value, _b,
                     _is_numpy_number, define_operators, describe)


BINARY_DUNDERS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "max": "maximum",
                  "min": "minimum", "pow": "**", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
                  "eq": "==", "ne": "!=", "and": "&", "or": "|"}


class _Elementwise(Value):
    """Operators shared by register tiles and vectors."""
    broadcasts = True   # scalars hand their operators to us

    @property
    def dtype(self) -> DType:
        return self.ty.dtype

    def _binary(self, fn: str, other: Any, reverse: bool = False):
        if fn in BITWISE:
            _check_bitwise(fn, self, other)
        other_v, shape_owner = self._coerce_operand(fn, other)
        x, y = (other_v, self.v) if reverse else (self.v, other_v)
        dt = self._result_dtype(fn, other)
        owner = shape_owner if shape_owner is not None else self
        return owner._wrap(_b().binary(fn, x, y, owner._retyped(dt)))

    def _result_dtype(self, fn: str, other: Any) -> DType:
        if fn in ("lt", "le", "gt", "ge", "eq", "ne"):
            return dtypes.i1
        other_dt = getattr(other, "dtype", None)
        if isinstance(other, Scalar):
            other_dt = dtypes.fp32 if other.is_float else None
        if other_dt is None or other_dt == self.dtype:
            return self.dtype
        if other_dt.is_float or self.dtype.is_float:
            return dtypes.fp32
        return dtypes.i32

    def _coerce_operand(self, fn: str, other: Any):
        """(SSA value, the operand whose shape the result takes if not self)."""
        if isinstance(other, (int, float)) or _is_numpy_number(other):
            value = other.item() if hasattr(other, "item") else other
            b = _b()
            return (b.const_f32(float(value)) if self.dtype.is_float or isinstance(value, float)
                    else b.const_int(int(value), 32)), None
        if isinstance(other, Scalar):
            if other.is_float or self.dtype.is_float:
                return (other.v if other.is_float else _b().index_to_f32(other.v)), None
            return _b().int_cast(other.v, emit.i32), None
        if isinstance(other, Tile):
            return self._coerce_tile(fn, other)
        if isinstance(other, Vec):
            return self._coerce_vec(fn, other)
        raise tracer.error(f"cannot apply `{BINARY_DUNDERS.get(fn, fn)}` to {describe(self)} "
                           f"and {describe(other)}")

    def __neg__(self):
        return self._wrap(_b().unary("neg", self.v))

    def __invert__(self):
        if self.dtype != dtypes.i1:
            raise tracer.error("`~` applies to a mask (a comparison result)")
        return self._wrap(_b().unary("not", self.v))

    def to(self, dtype: DType, *, into=None):
        """This value converted to `dtype` (rounded as the target rounds)."""
        dt = as_dtype(dtype, "to()")
        if dt == self.dtype:
            return landed(self, into)
        return landed(self._wrap(_b().cast(self.v, self._retyped(dt))), into)


define_operators(_Elementwise, {**ARITHMETIC_OPERATORS, **COMPARISON_OPERATORS, "pow": "pow", "and": "and",
                                 "or": "or"}, reflected=("add", "sub", "mul", "truediv"))


class Tile(_Elementwise, TileMethods):
    """A register tile held by one warp."""
    kind = "register tile"

    def describe(self) -> str:
        return f"a {self.rows}x{self.cols} {self.dtype!r} register tile"

    @property
    def shape(self) -> tuple[int, int]:
        return self.ty.shape

    @property
    def rows(self) -> int:
        return self.ty.rows.data

    @property
    def cols(self) -> int:
        return self.ty.cols.data

    @property
    def layout(self) -> str:
        return self.ty.layout.data

    @property
    def desc(self) -> RT:
        return RT(self.dtype, self.rows, self.cols, self.layout)

    def _wrap(self, v) -> "Tile":
        return Tile(v)

    def _retyped(self, dt: DType):
        return irt.rt(dt, self.rows, self.cols, self.layout)

    def _coerce_tile(self, fn: str, other: "Tile"):
        _same_dtype(fn, self, other)
        if other.shape != self.shape:
            raise tracer.error(
                f"`{BINARY_DUNDERS.get(fn, fn)}` of tiles with different shapes: "
                f"{self.rows}x{self.cols} and {other.rows}x{other.cols}",
                hint="elementwise operators need tiles of the same shape")
        return other.v, None

    def _coerce_vec(self, fn: str, vec: "Vec"):
        _same_dtype(fn, self, vec)
        want = self.rows if vec.axis == "row" else self.cols
        if vec.length != want:
            side = "rows" if vec.axis == "row" else "columns"
            raise tracer.error(
                f"a {vec.axis} vector of length {vec.length} cannot broadcast over a "
                f"{self.rows}x{self.cols} tile's {want} {side}",
                hint="row vectors (from row reductions) have one value per tile row; column "
                     "vectors one per column")
        return vec.v, None

    @property
    def T(self) -> "Transposed":
        return Transposed(self)

    def __matmul__(self, other):
        return MatMul.of(self, other)

    def __iadd__(self, other):
        if isinstance(other, MatMul):
            return other.accumulate_into(self)
        return self._binary("add", other)

    # reductions as methods, as hk-dsl writes them
    def row_sum(self): return reduce_tile(self, "sum", "row")
    def row_max(self): return reduce_tile(self, "max", "row")
    def row_min(self): return reduce_tile(self, "min", "row")
    def col_sum(self): return reduce_tile(self, "sum", "col")
    def col_max(self): return reduce_tile(self, "max", "col")
    def col_min(self): return reduce_tile(self, "min", "col")


class Vec(_Elementwise, VecMethods):
    """A register vector: one value per tile row (axis "row") or column (axis "col")."""
    kind = "register vector"

    def describe(self) -> str:
        return f"a {self.axis} vector of {self.length} {self.dtype!r}"

    @property
    def length(self) -> int:
        return self.ty.length.data

    @property
    def axis(self) -> str:
        return self.ty.axis.data

    def _wrap(self, v) -> "Vec":
        return Vec(v)

    def _retyped(self, dt: DType):
        return irt.rv(dt, self.length, self.axis)

    def _coerce_tile(self, fn: str, tile: Tile):
        tile._coerce_vec(fn, self)
        return tile.v, tile

    def _coerce_vec(self, fn: str, other: "Vec"):
        _same_dtype(fn, self, other)
        if other.length != self.length:
            raise tracer.error(f"`{BINARY_DUNDERS.get(fn, fn)}` of vectors of lengths "
                               f"{self.length} and {other.length}")
        return other.v, None

    def sum(self): return reduce_vec(self, "sum")
    def max(self): return reduce_vec(self, "max")
    def min(self): return reduce_vec(self, "min")


BITWISE = ("and", "or")


def _check_bitwise(fn: str, x: _Elementwise, other: Any) -> None:
    """`&` and `|` combine masks (comparison results) or integers: a float has no bits a kernel
    means to combine, and a mask mixed with a float is a comparison left out."""
    if _is_float(x) or _is_float(other):
        spelled = BINARY_DUNDERS[fn]
        raise tracer.error(f"`{spelled}` of {describe(x)} and {describe(other)}: `&` and `|` "
                           f"combine masks (comparison results) or integers, not floats",
                           hint=f"compare first and combine the masks, e.g. (x > 0) {spelled} "
                                f"(x < 1); to pick between floats use hk.where(mask, x, y)")


def _is_float(value: Any) -> bool:
    if isinstance(value, _Elementwise):
        return value.dtype.is_float
    if isinstance(value, Scalar):
        return value.is_float
    return isinstance(value, float) or (_is_numpy_number(value) and value.dtype.kind == "f")


def _same_dtype(fn: str, x: _Elementwise, y: _Elementwise) -> None:
    """Tiles and vectors combine only at one element type: which of two a result should take
    (and how the other rounds on the way) is the author's choice, made with `.to()`."""
    if x.dtype == y.dtype:
        return
    wider = dtypes.fp32 if x.dtype.is_float or y.dtype.is_float else dtypes.i32
    raise tracer.error(f"`{BINARY_DUNDERS.get(fn, fn)}` of {describe(x)} and {describe(y)}: "
                       f"their element types differ", hint=f"convert one first, e.g. "
                       f"x.to({wider!r}) + y.to({wider!r})")


def reduce_tile(t: Tile, kind: str, axis: str) -> Vec:
    if not isinstance(t, Tile):
        raise tracer.error(f"{axis}_{kind} reduces a register tile, got {describe(t)}")
    if t.layout == "flat":
        raise tracer.error(f"{axis}_{kind} of a flat-layout tile: a flat tile has no row or "
                           f"column vectors", op=f"{axis}_{kind}",
                           hint=f"reduce the whole tile to a scalar with hk.{kind}(tile), or "
                                f"load it in layout \"row\"")
    length = t.rows if axis == "row" else t.cols
    acc_dt = dtypes.fp32 if t.dtype.is_float else dtypes.i32
    return Vec(_b().reduce(kind, axis, t.v, irt.rv(acc_dt, length, axis)))


def reduce_vec(v: Vec, kind: str) -> Scalar:
    if not v.dtype.is_float:
        raise tracer.error("vector reductions to a scalar need a float vector")
    return Scalar(_b().reduce(kind, "all", v.v, emit.f32))


def reduce_whole(t: Tile, kind: str) -> Scalar:
    """Every element of a float tile combined into one f32 scalar (per warp: each warp reduces
    its own tile; hk.group.<kind> then combines the warps)."""
    if not t.dtype.is_float:
        raise tracer.error(f"hk.{kind} of a whole tile needs float elements, got {t.dtype.name}",
                           op=kind, hint="cast it first: tile.to(hk.fp32)")
    return Scalar(_b().reduce(kind, "all", t.v, emit.f32))


class Transposed:
    """`tile.T` (or `shared_tile.T`): only meaningful as an MMA operand."""

    def __init__(self, tile: Tile):
        self.tile = tile

    def __matmul__(self, other):
        return MatMul.of(self, other)

    def __getattr__(self, name):
        raise tracer.error(f"`.T` of a tile can only be used as an operand of `@` (an MMA), "
                           f"not for `.{name}`")


class MatMul:
    """`a @ b.T`, waiting for an accumulator: `acc += a @ b.T` or `c = a @ b.T`."""

    def __init__(self, a: Tile, b: Tile, variant: str):
        self.a, self.b, self.variant = a, b, variant

    @staticmethod
    def of(left, right) -> "MatMul":
        from .memory import SharedTile
        ta = isinstance(left, Transposed)
        tb = isinstance(right, Transposed)
        a = left.tile if ta else left
        b = right.tile if tb else right
        a_ok = isinstance(a, Tile) or (isinstance(a, SharedTile) and not ta
                                       and isinstance(b, SharedTile))
        if not a_ok or not isinstance(b, (Tile, SharedTile)):
            raise tracer.error(f"`@` multiplies register tiles (b may be a shared tile, as "
                               f"`a @ s.T`), got {describe(a)} and {describe(b)}")
        variant = ("At" if ta else "A") + ("Bt" if tb else "B")
        return MatMul(a, b, variant)

    def accumulate_into(self, acc: Tile) -> Tile:
        from .mma import mma
        return mma(self.a, self.b, acc, variant=self.variant)

    def _materialize(self) -> Tile:
        from .elementwise import zeros
        from .mma import mma
        from ..ir.ops import mma_dims
        from .memory import SharedTile
        if isinstance(self.a, SharedTile):
            raise tracer.error("`sa @ sb.T` accumulates into a warp's tile: write "
                               "`acc += sa @ sb.T`", op="mma from shared",
                               hint="start acc with hk.zeros(hk.RT(hk.fp32, rows, N)), rows "
                                    "being sa's rows / the warps")
        b_shape = self.b.ty.shape if isinstance(self.b, SharedTile) else self.b.shape
        m, n, _ = mma_dims(self.variant, self.a.shape, b_shape)
        acc = zeros(RT(dtypes.fp32, m, n))
        return mma(self.a, self.b, acc, variant=self.variant)

    def __getattr__(self, name):
        return getattr(self._materialize(), name)


def _materializing(dunder: str):
    def apply(self, *args):
        return getattr(self._materialize(), dunder)(*args)
    return apply


for _dunder in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                "__truediv__", "__rtruediv__", "__neg__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(MatMul, _dunder, _materializing(_dunder))
