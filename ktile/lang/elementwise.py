"""What kernels compute with: constructors, elementwise math, masks, random numbers and
reductions of register tiles and vectors."""
from __future__ import annotations

from typing import Any

from .. import dtypes
from ..ir import elementwise, emit
from ..ir import types as irt
from . import tracer
from .tiles import Tile, Vec, reduce_tile, reduce_vec, reduce_whole
from .types import RT, RV
from .values import Scalar, as_index, as_scalar, describe

def _b():
    return tracer.current().builder


def to_float(x) -> Scalar:
    s = as_scalar(x, "to_float argument")
    return s if s.is_float else Scalar(_b().index_to_f32(s.v))


# ---- constructors --------------------------------------------------------------------------

def ir_type_of_register_desc(desc: Any, what: str):
    if isinstance(desc, RT):
        return irt.rt(desc.dtype, desc.rows, desc.cols, desc.layout)
    if isinstance(desc, RV):
        return irt.rv(desc.dtype, desc.length, desc.axis)
    raise tracer.error(f"{what} needs a register type hk.RT(...) or hk.RV(...), got "
                       f"{describe(desc)}", op=what)


def _wrap(desc, v):
    return Vec(v) if isinstance(desc, RV) else Tile(v)


def full(desc: RT | RV, value: float) -> Tile | Vec:
    return _wrap(desc, _b().fill(float(value), ir_type_of_register_desc(desc, "full")))


def zeros(desc: RT | RV) -> Tile | Vec:
    return full(desc, 0.0)


def ones(desc: RT | RV) -> Tile | Vec:
    return full(desc, 1.0)


def neg_infty(desc: RT | RV) -> Tile | Vec:
    return full(desc, float("-inf"))


def iota(desc: RT | RV, axis: str = "col") -> Tile | Vec:
    """Each element's index within the tile along `axis` ("row" or "col"); for a vector, each
    element's index in it. The dtype must be an integer or float type."""
    if axis not in ("row", "col"):
        raise tracer.error(f"iota axis must be 'row' or 'col', got {axis!r}", op="iota")
    return _wrap(desc, _b().iota(axis, ir_type_of_register_desc(desc, "iota")))


# ---- elementwise math ----------------------------------------------------------------------

def _unary(row: elementwise.Function):
    """hk.<name> of a unary row: a tile or vector maps elementwise; a Python number folds to
    a Python float; a scalar computes in f32."""
    fn = row.name

    def apply(x):
        if isinstance(x, (Tile, Vec)):
            if not x.dtype.is_float and row.rule != "number":
                raise tracer.error(f"{fn} needs a float tile, got {describe(x)}", op=fn,
                                   hint="convert first with .to(hk.fp32)")
            return x._wrap(_b().unary(fn, x.v))
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return row.fold(x)
        s = as_scalar(x, f"{fn} argument")
        return Scalar(_b().unary(fn, to_float(s).v))
    apply.__name__ = apply.__qualname__ = row.hk  # a wrong call reads `exp() takes 1 ...`
    apply.__doc__ = f"Elementwise {row.hk} of a tile, vector or scalar ({row.spelled})."
    return apply


def _binary(row: elementwise.Function):
    """hk.<name> of a binary row (hk.maximum): the operands broadcast as the operator's do;
    two Python numbers fold to a Python number (ints stay ints where the row has integer
    semantics)."""
    def apply(x, y):
        for value, other, reverse in ((x, y, False), (y, x, True)):
            if isinstance(value, (Tile, Vec)):
                return value._binary(row.name, other, reverse=reverse)
        for value, other, reverse in ((x, y, False), (y, x, True)):
            if isinstance(value, Scalar):
                return value._binary(row.name, other, reverse=reverse)
        folded = row.fold(x, y)
        both_int = isinstance(x, int) and isinstance(y, int) and row.integer is not None
        return int(folded) if both_int else folded
    apply.__name__ = apply.__qualname__ = row.hk
    apply.__doc__ = f"Elementwise {row.hk} of tiles, vectors or scalars ({row.spelled})."
    return apply


def _by_name(row: elementwise.Function):
    return _unary(row) if row.arity == 1 else _binary(row)


# hk.exp, hk.round, hk.maximum, ...: one function per row that a kernel calls by name
FUNCTIONS = {name: _by_name(row) for name, row in elementwise.BY_HK_NAME.items()}
globals().update(FUNCTIONS)


def where(cond, x, y):
    """Elementwise `x if cond else y`; cond is a mask (a comparison result)."""
    if isinstance(cond, Scalar):
        xs, ys = as_scalar(x, "where x"), as_scalar(y, "where y")
        return Scalar(_b().scalar_select(cond.v, xs.v, ys.v))
    if not isinstance(cond, (Tile, Vec)) or cond.dtype != dtypes.i1:
        raise tracer.error(f"where() needs a mask (a comparison of tiles) as its condition, got "
                           f"{describe(cond)}", op="where")
    shape_src = x if isinstance(x, type(cond)) else y if isinstance(y, type(cond)) else None
    if shape_src is None:
        raise tracer.error("where() needs x or y to be a tile or vector like its mask", op="where")
    _check_where_operands(cond, x, y)
    xv = _broadcast_like(x, shape_src)
    yv = _broadcast_like(y, shape_src)
    return shape_src._wrap(_b().select(cond.v, xv.v, yv.v))


def _check_where_operands(cond, x, y) -> None:
    """x and y, where they are values of the mask's kind, have the mask's shape; x and y, where
    both are tiles or vectors, one element type (a vector x or y broadcasts over a tile)."""
    for name, value in (("x", x), ("y", y)):
        if isinstance(value, type(cond)) and _shape_of(value) != _shape_of(cond):
            raise tracer.error(f"the mask is {describe(cond)} but {name} is {describe(value)}: "
                               f"the mask, x and y must have one shape", op="where",
                               hint=f"build the mask from values of {name}'s shape, e.g. "
                                    f"{name} > 0")
    if isinstance(x, (Tile, Vec)) and isinstance(y, (Tile, Vec)) and x.dtype != y.dtype:
        wider = dtypes.fp32 if x.dtype.is_float or y.dtype.is_float else dtypes.i32
        raise tracer.error(f"x is {describe(x)} and y is {describe(y)}: their element types "
                           f"differ", op="where",
                           hint=f"convert one first, e.g. hk.where(mask, x.to({wider!r}), "
                                f"y.to({wider!r}))")


def _shape_of(value) -> tuple:
    return value.shape if isinstance(value, Tile) else (value.length,)


def _broadcast_like(value, like):
    if isinstance(value, type(like)):
        return value
    return like._wrap(_b().binary("add", _b().fill(0.0, like.ty), like._coerce_operand("add", value)[0],
                                  like.ty))


def cast(x, dtype):
    return x.to(dtype)


# ---- reductions ----------------------------------------------------------------------------

def row_sum(t): return reduce_tile(t, "sum", "row")
def row_max(t): return reduce_tile(t, "max", "row")
def row_min(t): return reduce_tile(t, "min", "row")
def col_sum(t): return reduce_tile(t, "sum", "col")
def col_max(t): return reduce_tile(t, "max", "col")
def col_min(t): return reduce_tile(t, "min", "col")


def sum(v):  # noqa: A001
    """A register vector or a whole register tile (every element) reduced to an f32 scalar."""
    return _to_scalar("sum", v)


def tile_sum(t):
    """Every element of a register tile (any layout) summed into an f32 scalar."""
    return _whole(t, "sum")


def tile_max(t):
    """The largest element of a register tile (any layout), as an f32 scalar."""
    return _whole(t, "max")


def tile_min(t):
    """The smallest element of a register tile (any layout), as an f32 scalar."""
    return _whole(t, "min")


def _whole(t, fn):
    if not isinstance(t, Tile):
        raise tracer.error(f"hk.tile_{fn} reduces a register tile to a scalar, got {describe(t)}",
                           hint=f"for a vector use hk.sum(v); per row use hk.row_{fn}")
    return reduce_whole(t, fn)


def _to_scalar(fn, v):
    if isinstance(v, Vec):
        return reduce_vec(v, fn)
    if isinstance(v, Tile):
        return reduce_whole(v, fn)
    raise tracer.error(f"hk.{fn} reduces a register vector or tile to a scalar, got "
                       f"{describe(v)}", hint=f"per row or column use hk.row_{fn} / hk.col_{fn}")


def block_reduce(kind: str, x):
    """Cross-warp combine: every warp gets the `kind` of all warps' x, in warp order."""
    if not isinstance(x, (Vec, Scalar)):
        raise tracer.error(f"group.{kind} combines a vector or scalar across warps, got "
                           f"{describe(x)}", op=f"group.{kind}",
                           hint="reduce the tile first (hk.row_sum), then combine the vector")
    if isinstance(x, Scalar) and not x.is_float:
        x = to_float(x)
    return type(x)(_b().block_reduce(kind, x.v))



# ---- masks, random numbers, rows by index --------------------------------------------------

def causal_mask(x: Tile, row0, col0, fill: float = float("-inf")) -> Tile:
    """x with `fill` where (col0 + j) > (row0 + i): keys past the query."""
    if not isinstance(x, Tile):
        raise tracer.error(f"causal_mask applies to a register tile, got {describe(x)}")
    return Tile(_b().causal_mask(x.v, as_index(row0, "row0").v, as_index(col0, "col0").v,
                                 float(fill)))


def rand(seed, offsets: Tile | Vec) -> Tile | Vec:
    """Uniform [0, 1) fp32 draws, the same as Triton's `tl.rand(seed, offsets)`."""
    return _draw(seed, offsets, "rand", "element")


def rand4(seed, offsets: Tile | Vec) -> Tile | Vec:
    """Uniform [0, 1) fp32 draws, four offsets to one Philox call: offset o draws word o & 3
    of Triton's `tl.rand4x(seed, o >> 2)` (docs/language.md, "Random numbers")."""
    return _draw(seed, offsets, "rand4", "quad")


def _draw(seed, offsets, name: str, counter: str) -> Tile | Vec:
    if not isinstance(offsets, (Tile, Vec)) or offsets.dtype != dtypes.i32:
        raise tracer.error(f"{name} offsets must be an i32 tile or vector, got "
                           f"{describe(offsets)}", op=name,
                           hint="build them with hk.iota(hk.RT(hk.i32, ...)) + base")
    if isinstance(seed, int):
        seed_v = _b().const_int(seed, 64)
    else:
        s = as_scalar(seed, "rand seed")
        seed_v = _b().int_cast(s.v, emit.i64)
    ty = offsets._retyped(dtypes.fp32)
    return offsets._wrap(_b().rand(seed_v, offsets.v, ty, counter))

