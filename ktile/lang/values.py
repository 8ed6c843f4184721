"""Traced values: what kernel code holds while it is traced, with Python operators.

Each wraps one SSA value of the trace. Arithmetic on them emits kt / arith ops through the
builder seam; every mistake the author can make here is a `KernelError` at their line.
"""
from __future__ import annotations

import math
from typing import Any

from .. import dtypes
from ..dtypes import DType
from ..ir import emit
from ..ir import types as irt
from . import tracer
from .types import RT, RV, SV, ST, as_dtype

Number = (int, float, bool)


def _b():
    return tracer.current().builder


class Value:
    __slots__ = ("v",)
    __array_priority__ = 1000  # numpy scalars defer to our operators

    def __init__(self, v):
        self.v = v

    @property
    def ty(self):
        return self.v.type

    def __bool__(self):
        raise tracer.error(
            f"a device {self.kind} has no Python truth value",
            hint="use it directly as the condition of `if`/`while` (not inside `and`/`or`/`not`); "
                 "combine conditions with `&`, `|` and `~`")

    def __iter__(self):
        raise tracer.error(f"a device {self.kind} cannot be iterated in Python")

    def __index__(self):
        raise tracer.error(f"a device {self.kind} is not a Python int here",
                           hint="shapes and Python `range` bounds must be compile-time; use "
                                "a Constexpr, or loop with `for i in range(n)` on device values")

    kind = "value"


# ---- scalars -------------------------------------------------------------------------------

class Scalar(Value):
    """An index, i32, f32 or bool value held by the whole warp."""
    kind = "scalar"

    @property
    def is_float(self) -> bool:
        return isinstance(self.ty, type(emit.f32))

    @property
    def is_bool(self) -> bool:
        return getattr(self.ty, "width", None) is not None and self.ty.width.data == 1

    def _binary(self, fn: str, other: Any, reverse: bool = False) -> "Scalar | Tile | Vec":
        if isinstance(other, (Tile, Vec)):
            return other._binary(fn, self, reverse=not reverse)
        x, y = unify_scalars(self, other)
        if reverse:
            x, y = y, x
        if fn in emit.CMP_INT:
            return Scalar(_b().scalar_compare(fn, x.v, y.v))
        if fn == "pow":
            raise tracer.error("`**` on scalars is not supported", hint="multiply, or use hk.exp2")
        if x.is_float and fn in ("floordiv", "mod", "cdiv"):
            raise tracer.error(f"`{fn}` needs integer operands, got a float scalar")
        if fn == "div" and not x.is_float:
            raise tracer.error("`/` on integer scalars", hint="use `//` for integer division, "
                               "or convert with hk.to_float(x)")
        if fn == "mod":
            return _floor_mod(x, y)
        return Scalar(_b().scalar_binary(fn, x.v, y.v))

    def __neg__(self):
        return self._binary("sub", 0, reverse=True)

    def __invert__(self):
        if not self.is_bool:
            raise tracer.error("`~` applies to a condition (a comparison result)")
        return Scalar(_b().scalar_binary("xor", self.v, _b().const_bool(True)))


def _floor_mod(x: Scalar, y: Scalar) -> Scalar:
    """Python's `%`: the remainder takes the divisor's sign (arith.remsi truncates like C)."""
    b = _b()
    r = b.scalar_binary("mod", x.v, y.v)
    zero = b.const_index(0) if isinstance(x.ty, type(emit.index)) else b.const_int(0, x.ty.width.data)
    nonzero = b.scalar_compare("ne", r, zero)
    signs_differ = b.scalar_compare("lt", b.scalar_binary("xor", r, y.v), zero)
    adjust = b.scalar_binary("and", nonzero, signs_differ)
    return Scalar(b.scalar_select(adjust, b.scalar_binary("add", r, y.v), r))


def _operator(fn: str, reverse: bool = False):
    def apply(self, other):
        return self._binary(fn, other, reverse)
    return apply


def define_operators(cls, table: dict[str, str], reflected: tuple[str, ...]) -> None:
    """Python operators → `cls._binary(fn, other, reverse)`; `reflected` also gets `__rX__`."""
    for dunder, fn in table.items():
        setattr(cls, f"__{dunder}__", _operator(fn))
        if dunder in reflected:
            setattr(cls, f"__r{dunder}__", _operator(fn, reverse=True))
    cls.__hash__ = Value.__hash__


_ARITHMETIC = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div"}
_COMPARISONS = {"lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq", "ne": "ne"}
define_operators(Scalar, {**_ARITHMETIC, **_COMPARISONS, "floordiv": "floordiv", "mod": "mod",
                          "and": "and", "or": "or", "xor": "xor", "lshift": "shl",
                          "rshift": "shr"},
                 reflected=("add", "sub", "mul", "truediv", "floordiv", "mod", "and", "or"))


def scalar_const(value: Any, like: Scalar | None = None) -> Scalar:
    """A Python number as a scalar of `like`'s type (index for ints, f32 for floats)."""
    b = _b()
    if isinstance(value, bool):
        return Scalar(b.const_bool(value))
    if like is not None and like.is_float:
        return Scalar(b.const_f32(float(value)))
    if like is not None and like.is_bool:
        return Scalar(b.const_bool(bool(value)))
    if isinstance(value, float):
        return Scalar(b.const_f32(value))
    if like is not None and not isinstance(like.ty, type(emit.index)):
        return Scalar(b.const_int(value, like.ty.width.data))
    return Scalar(b.const_index(value))


def as_scalar(value: Any, what: str = "value") -> Scalar:
    if isinstance(value, Scalar):
        return value
    if isinstance(value, Number) or _is_numpy_number(value):
        return scalar_const(value.item() if hasattr(value, "item") else value)
    raise tracer.error(f"{what} must be a scalar, got {describe(value)}")


def as_index(value: Any, what: str) -> Scalar:
    s = as_scalar(value, what)
    if s.is_float:
        raise tracer.error(f"{what} must be an integer, got a float scalar")
    if not isinstance(s.ty, type(emit.index)):
        return Scalar(_b().int_cast(s.v, emit.index))
    return s


def unify_scalars(x: Scalar, y: Any) -> tuple[Scalar, Scalar]:
    if not isinstance(y, Scalar):
        if not (isinstance(y, Number) or _is_numpy_number(y)):
            raise tracer.error(f"cannot combine a scalar with {describe(y)}")
        y = scalar_const(y.item() if hasattr(y, "item") else y, like=x)
        if y.is_float and not x.is_float:
            x = Scalar(_b().index_to_f32(x.v))
        return x, y
    if x.ty == y.ty:
        return x, y
    if x.is_float or y.is_float:
        fx = x if x.is_float else Scalar(_b().index_to_f32(x.v))
        fy = y if y.is_float else Scalar(_b().index_to_f32(y.v))
        return fx, fy
    return as_index(x, "operand"), as_index(y, "operand")


def _is_numpy_number(value: Any) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", 1) == 0


# ---- tiles and vectors ---------------------------------------------------------------------

BINARY_DUNDERS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "max": "maximum",
                  "min": "minimum", "pow": "**", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
                  "eq": "==", "ne": "!=", "and": "&", "or": "|"}


class _Elementwise(Value):
    """Operators shared by register tiles and vectors."""

    @property
    def dtype(self) -> DType:
        return self.ty.dtype

    def _binary(self, fn: str, other: Any, reverse: bool = False):
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

    def to(self, dtype: DType):
        """This value converted to `dtype` (rounded as the target rounds)."""
        dt = as_dtype(dtype, "to()")
        if dt == self.dtype:
            return self
        return self._wrap(_b().cast(self.v, self._retyped(dt)))


define_operators(_Elementwise, {**_ARITHMETIC, **_COMPARISONS, "pow": "pow", "and": "and",
                                 "or": "or"}, reflected=("add", "sub", "mul", "truediv"))


class Tile(_Elementwise):
    """A register tile held by one warp."""
    kind = "register tile"

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
        if other.shape != self.shape:
            raise tracer.error(
                f"`{BINARY_DUNDERS.get(fn, fn)}` of tiles with different shapes: "
                f"{self.rows}x{self.cols} and {other.rows}x{other.cols}",
                hint="elementwise operators need tiles of the same shape")
        return other.v, None

    def _coerce_vec(self, fn: str, vec: "Vec"):
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


class Vec(_Elementwise):
    """A register vector: one value per tile row (axis "row") or column (axis "col")."""
    kind = "register vector"

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
        if other.length != self.length:
            raise tracer.error(f"`{BINARY_DUNDERS.get(fn, fn)}` of vectors of lengths "
                               f"{self.length} and {other.length}")
        return other.v, None

    def sum(self): return reduce_vec(self, "sum")
    def max(self): return reduce_vec(self, "max")
    def min(self): return reduce_vec(self, "min")


def reduce_tile(t: Tile, kind: str, axis: str) -> Vec:
    if not isinstance(t, Tile):
        raise tracer.error(f"{axis}_{kind} reduces a register tile, got {describe(t)}")
    length = t.rows if axis == "row" else t.cols
    acc_dt = dtypes.fp32 if t.dtype.is_float else dtypes.i32
    return Vec(_b().reduce(kind, axis, t.v, irt.rv(acc_dt, length, axis)))


def reduce_vec(v: Vec, kind: str) -> Scalar:
    if not v.dtype.is_float:
        raise tracer.error("vector reductions to a scalar need a float vector")
    return Scalar(_b().reduce(kind, "all", v.v, emit.f32))


class Transposed:
    """`tile.T`: only meaningful as an MMA operand."""

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
        ta = isinstance(left, Transposed)
        tb = isinstance(right, Transposed)
        a = left.tile if ta else left
        b = right.tile if tb else right
        if not isinstance(a, Tile) or not isinstance(b, Tile):
            raise tracer.error(f"`@` multiplies register tiles, got {describe(a)} and {describe(b)}")
        variant = ("At" if ta else "A") + ("Bt" if tb else "B")
        return MatMul(a, b, variant)

    def accumulate_into(self, acc: Tile) -> Tile:
        from .builtins import mma
        return mma(self.a, self.b, acc, variant=self.variant)

    def _materialize(self) -> Tile:
        from .builtins import mma, zeros
        from ..ir.ops import mma_dims
        m, n, _ = mma_dims(self.variant, self.a.shape, self.b.shape)
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


# ---- memory --------------------------------------------------------------------------------

class Coord:
    """A tile coordinate (batch, depth, row tile, col tile)."""

    def __init__(self, parts):
        self.parts = tuple(parts)
        if len(self.parts) != 4:
            raise tracer.error(f"a tile coordinate has 4 parts (batch, depth, row, col), got "
                               f"{len(self.parts)}", hint="use hk.tile_coord(b, d, r, c)")
        self._scalars: list[Scalar] | None = None

    def scalars(self) -> list[Scalar]:
        if self._scalars is None:
            names = ("batch", "depth", "row", "col")
            self._scalars = [as_index(p, f"tile_coord {n}") for p, n in zip(self.parts, names)]
        return self._scalars


class SharedTile(Value):
    """A shared-memory tile or vector of the block."""
    kind = "shared tile"

    @property
    def dtype(self) -> DType:
        return self.ty.dtype

    @property
    def is_vector(self) -> bool:
        return isinstance(self.ty, irt.SharedVecType)

    def load(self, desc: RT | RV, row=0, col=0) -> Tile | Vec:
        """Shared → registers, asynchronously: `hk.wait_for(result)` before using it. Reads
        sub-tile (row, col) in units of desc's shape, which must divide the shared tile's:
        rows [row·R, row·R+R), columns [col·C, col·C+C); a vector reads elements
        [col·L, col·L+L). Device values are allowed; keeping them inside is the author's part."""
        from .builtins import check_desc_matches_shared, subtile_coords
        ty = check_desc_matches_shared(self, desc)
        row_s, col_s = subtile_coords(self, desc, ty, row, col)
        v = _b().lds_load(self.v, row_s.v, col_s.v, ty)
        return Vec(v) if isinstance(desc, RV) else Tile(v)

    def store(self, value: Tile | Vec) -> None:
        """Registers → shared; other warps see it after `hk.barrier()`."""
        if not isinstance(value, (Tile, Vec)):
            raise tracer.error(f"store() writes a register tile or vector, got {describe(value)}")
        _b().lds_store(self.v, value.v)


class Global(Value):
    """A positional tensor parameter: a 4-D global (batch, depth, rows, cols)."""
    kind = "global tensor"

    def __init__(self, v, name: str, index: int):
        super().__init__(v)
        self.name = name
        self.index = index

    @property
    def dtype(self) -> DType:
        return self.ty.dtype

    def _extent(self, dim: int) -> Scalar:
        return Scalar(_b().extent(self.v, dim))

    @property
    def batch(self) -> Scalar: return self._extent(0)
    @property
    def depth(self) -> Scalar: return self._extent(1)
    @property
    def rows(self) -> Scalar: return self._extent(2)
    @property
    def cols(self) -> Scalar: return self._extent(3)

    def __getitem__(self, idx) -> "GlobalView":
        return GlobalView(self, to_coord(idx))

    def __setitem__(self, idx, value) -> None:
        GlobalView(self, to_coord(idx)).store(value)

    def __iter__(self):
        raise tracer.error(f"global '{self.name}' cannot be iterated",
                           hint="index it with a tile coordinate: g[hk.tile_coord(b, d, r, c)]")


class GlobalView:
    """`g[coord]`: where a tile of `g` sits, waiting to be loaded or stored."""

    def __init__(self, g: Global, coord: Coord):
        self.g, self.coord = g, coord

    def load(self, desc: RT | RV, pad: float = 0.0) -> Tile | Vec:
        """Global → registers. Elements past the global's edge read `pad` (bounded load)."""
        from .builtins import ir_type_of_register_desc
        ty = ir_type_of_register_desc(desc, "load")
        if desc.dtype != self.g.dtype:
            raise tracer.error(
                f"load of a {desc.dtype!r} tile from global '{self.g.name}' of {self.g.dtype!r}",
                op="load", hint=f"load as {self.g.dtype!r} and convert with .to({desc.dtype!r})")
        record_coindexing(self.g, self.coord, desc)
        v = _b().load(self.g.v, [s.v for s in self.coord.scalars()], ty, float(pad))
        return Vec(v) if isinstance(desc, RV) else Tile(v)

    def store(self, value) -> None:
        if not isinstance(value, (Tile, Vec)):
            raise tracer.error(f"stores to global '{self.g.name}' take a register tile or "
                               f"vector, got {describe(value)}", op="store")
        if value.dtype != self.g.dtype:
            raise tracer.error(
                f"store of a {value.dtype!r} tile into global '{self.g.name}' of "
                f"{self.g.dtype!r}", op="store",
                hint=f"convert first: value.to({self.g.dtype!r})")
        desc = value.desc if isinstance(value, Tile) else RV(value.dtype, value.length, value.axis)
        record_coindexing(self.g, self.coord, desc)
        _b().store(self.g.v, [s.v for s in self.coord.scalars()], value.v)


def to_coord(idx) -> Coord:
    if isinstance(idx, Coord):
        return idx
    if isinstance(idx, tuple) and len(idx) == 4:
        return Coord(idx)
    raise tracer.error(f"a global is indexed by a tile coordinate of 4 parts (batch, depth, row, "
                       f"col), got {describe(idx)}", hint="use hk.tile_coord(b, d, r, c)")


def record_coindexing(g: Global, coord: Coord, desc) -> None:
    """Globals read or written at one coordinate object with one tile shape must agree in
    extent: the call checks that (the seed's `add` with mismatched tensors is refused)."""
    shape = (desc.rows, desc.cols) if isinstance(desc, RT) else (1, desc.length)
    key = (id(coord), shape)
    trace = tracer.current()
    members = trace.coindexed.setdefault(key, [])
    if g.index not in members:
        members.append(g.index)
    trace.coindexed_keepalive = getattr(trace, "coindexed_keepalive", []) + [coord]


def describe(value: Any) -> str:
    if isinstance(value, Tile):
        return f"a {value.rows}x{value.cols} {value.dtype!r} register tile"
    if isinstance(value, Vec):
        return f"a {value.axis} vector of {value.length} {value.dtype!r}"
    if isinstance(value, SharedTile):
        return "a shared vector" if value.is_vector else "a shared tile"
    if isinstance(value, Global):
        return f"global '{value.name}'"
    if isinstance(value, Scalar):
        return "a float scalar" if value.is_float else "an integer scalar"
    if isinstance(value, (RT, ST, RV, SV)):
        return f"the type {value!r} (not a value: create one with hk.zeros/load)"
    return f"{type(value).__name__} {value!r}" if isinstance(value, Number) else type(value).__name__


def is_nan_or_inf(x: float) -> bool:
    return math.isnan(x) or math.isinf(x)
