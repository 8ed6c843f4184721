"""The functions a kernel body calls: coordinates, constructors, math, MMA, memory, waits.

Each checks its arguments against the kernel author's intent and emits one op through the
builder seam. Namespaces `arch`, `math`, `group` and `lds` group them as hk-dsl does.
"""
from __future__ import annotations

import math as _pymath
from typing import Any

from .. import dtypes
from ..ir import emit
from ..ir import types as irt
from ..ir.ops import MMA_VARIANTS, constant_int, mma_dims, subtile_grid
from . import tracer
from .types import RT, RV, ST, SV
from .memory import Coord, Global, GlobalView, SharedTile
from .tiles import Tile, Vec, reduce_tile, reduce_vec
from .values import Scalar, as_index, as_scalar, describe


def _b():
    return tracer.current().builder


# ---- coordinates and integer helpers -------------------------------------------------------

def tile_coord(batch, depth, row, col) -> Coord:
    """The tile at (batch, depth, row tile, col tile) of a 4-D global."""
    return Coord((batch, depth, row, col))


def cdiv(a, b):
    """Ceiling division; Python ints stay Python ints."""
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return as_index(a, "cdiv numerator")._binary("cdiv", b)


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

def _unary(fn: str):
    def apply(x):
        if isinstance(x, (Tile, Vec)):
            if not x.dtype.is_float and fn not in ("abs", "relu", "neg"):
                raise tracer.error(f"{fn} needs a float tile, got {describe(x)}", op=fn,
                                   hint="convert first with .to(hk.fp32)")
            return x._wrap(_b().unary(fn, x.v))
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return _python_unary(fn, float(x))
        s = as_scalar(x, f"{fn} argument")
        return Scalar(_b().unary(fn, to_float(s).v))
    apply.__name__ = fn
    apply.__doc__ = f"Elementwise {fn} of a tile, vector or scalar."
    return apply


def _python_unary(fn: str, x: float) -> float:
    table = {"exp": _pymath.exp, "exp2": lambda v: 2.0 ** v, "log": _pymath.log,
             "log2": _pymath.log2, "sqrt": _pymath.sqrt, "rsqrt": lambda v: 1 / _pymath.sqrt(v),
             "abs": abs, "relu": lambda v: max(v, 0.0), "sin": _pymath.sin, "cos": _pymath.cos,
             "tanh": _pymath.tanh}
    if fn not in table:
        raise tracer.error(f"{fn} of a Python number", hint="apply it to a tile or scalar")
    return table[fn](x)


exp = _unary("exp")
exp2 = _unary("exp2")
log = _unary("log")
log2 = _unary("log2")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
silu = _unary("silu")
gelu = _unary("gelu")
relu = _unary("relu")
sigmoid = _unary("sigmoid")
tanh = _unary("tanh")
sin = _unary("sin")
cos = _unary("cos")


def abs(x):  # noqa: A001 - hk-dsl's name
    return _unary("abs")(x)


def maximum(x, y):
    return _minmax("max", x, y)


def minimum(x, y):
    return _minmax("min", x, y)


def _minmax(fn: str, x, y):
    if isinstance(x, (Tile, Vec)):
        return x._binary(fn, y)
    if isinstance(y, (Tile, Vec)):
        return y._binary(fn, x, reverse=True)
    if isinstance(x, Scalar):
        return x._binary(fn, y)
    if isinstance(y, Scalar):
        return y._binary(fn, x, reverse=True)
    return max(x, y) if fn == "max" else min(x, y)


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
    xv = _broadcast_like(x, shape_src)
    yv = _broadcast_like(y, shape_src)
    return shape_src._wrap(_b().select(cond.v, xv.v, yv.v))


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
    return reduce_vec(v, "sum") if isinstance(v, Vec) else _not_vec("sum", v)


def _not_vec(fn, v):
    raise tracer.error(f"hk.{fn} reduces a register vector to a scalar, got {describe(v)}",
                       hint=f"for tiles use hk.row_{fn} or hk.col_{fn}")


def block_reduce(kind: str, x):
    """Cross-warp combine: every warp gets the `kind` of all warps' x, in warp order."""
    if not isinstance(x, (Vec, Scalar)):
        raise tracer.error(f"group.{kind} combines a vector or scalar across warps, got "
                           f"{describe(x)}", op=f"group.{kind}",
                           hint="reduce the tile first (hk.row_sum), then combine the vector")
    if isinstance(x, Scalar) and not x.is_float:
        x = to_float(x)
    return type(x)(_b().block_reduce(kind, x.v))


# ---- MMA -----------------------------------------------------------------------------------

def mma(a: Tile, b: Tile, acc: Tile, variant: str = "AB") -> Tile:
    """acc + op(a)·op(b) in fp32. variant AB, ABt, AtB or AtBt (t: that operand transposed)."""
    if variant not in MMA_VARIANTS:
        raise tracer.error(f"unknown MMA variant {variant!r}", op="mma",
                           hint=f"use one of {', '.join(MMA_VARIANTS)}")
    for name, t in (("a", a), ("b", b), ("acc", acc)):
        if not isinstance(t, Tile):
            raise tracer.error(f"mma operand {name} must be a register tile, got {describe(t)}",
                               op="mma")
    if a.dtype != b.dtype:
        raise tracer.error(f"mma operands differ in dtype: a is {a.dtype!r}, b is {b.dtype!r}",
                           op="mma", hint="convert one with .to(...)")
    if acc.dtype not in (dtypes.fp32, dtypes.i32):
        raise tracer.error(f"mma accumulates into fp32 (or i32 for i8), got {acc.dtype!r}",
                           op="mma", hint="start the accumulator with hk.zeros(hk.RT(hk.fp32, m, n))")
    m, n, k = mma_dims(variant, a.shape, b.shape)
    if k is None:
        raise tracer.error(
            f"mma {variant}: the inner dimensions of a ({a.rows}x{a.cols}) and b "
            f"({b.rows}x{b.cols}) differ", op="mma",
            hint="for C = A·Bᵀ both operands are row-major M×K and N×K: use variant ABt")
    if acc.shape != (m, n):
        raise tracer.error(f"mma {variant}: the accumulator is {acc.rows}x{acc.cols} but the "
                           f"product is {m}x{n}", op="mma")
    want_a = "col" if variant.startswith("At") else "row"
    want_b = "row" if variant.endswith("Bt") else "col"
    if a.layout != want_a or b.layout != want_b:
        raise tracer.error(
            f"mma {variant} reads a in {want_a} layout and b in {want_b} layout, got "
            f"a {a.layout} and b {b.layout}", op="mma",
            hint=_variant_hint(a.layout, b.layout))
    return Tile(_b().mma(a.v, b.v, acc.v, variant))


def _variant_hint(a_layout: str, b_layout: str) -> str:
    variant = ("A" if a_layout == "row" else "At") + ("Bt" if b_layout == "row" else "B")
    return f"with these layouts use variant {variant} (or load the tiles in the layouts above)"


def mma_AB(a, b, acc): return mma(a, b, acc, "AB")
def mma_ABt(a, b, acc): return mma(a, b, acc, "ABt")
def mma_AtB(a, b, acc): return mma(a, b, acc, "AtB")
def mma_AtBt(a, b, acc): return mma(a, b, acc, "AtBt")


# ---- shared memory, copies, waits ----------------------------------------------------------

def shared(desc: ST | SV) -> SharedTile:
    """A shared-memory tile or vector for the whole block."""
    if isinstance(desc, ST):
        return SharedTile(_b().alloc(irt.st(desc.dtype, desc.rows, desc.cols)))
    if isinstance(desc, SV):
        return SharedTile(_b().alloc(irt.sv(desc.dtype, desc.length)))
    raise tracer.error(f"shared memory is allocated from hk.ST(...) or hk.SV(...), got "
                       f"{describe(desc)}", op="shared")


def check_desc_matches_shared(src: SharedTile, desc):
    ty = ir_type_of_register_desc(desc, "shared load")
    if desc.dtype != src.dtype:
        raise tracer.error(f"load of {desc.dtype!r} registers from a {src.dtype!r} shared tile",
                           op="lds_load", hint="register and shared tiles must share a dtype")
    if src.is_vector != isinstance(desc, RV):
        raise tracer.error("shared vectors load into RV, shared tiles into RT", op="lds_load")
    if subtile_grid(src.ty, ty) is None:
        raise _not_dividing(src, desc)
    return ty


def _not_dividing(src: SharedTile, desc):
    if isinstance(desc, RV):
        return tracer.error(
            f"load of a {desc.length}-element vector from a {src.ty.length.data}-element shared "
            f"vector: the register vector's length must divide the shared vector's",
            op="lds_load", hint="a shared load reads the col-th piece of the shared vector, "
                                "in units of the register vector's length")
    rows, cols = src.ty.shape
    bad = [f"{n} {what} do not divide {whole}" for n, what, whole in
           ((desc.rows, "rows", rows), (desc.cols, "columns", cols)) if whole % n]
    return tracer.error(
        f"load of a {desc.rows}x{desc.cols} tile from a {rows}x{cols} shared tile: the register "
        f"tile's rows and columns must divide the shared tile's ({', '.join(bad)})",
        op="lds_load",
        hint=f"a shared load reads sub-tile (row, col) in units of the register tile's shape: "
             f"use rows that divide {rows} and columns that divide {cols}")


def subtile_coords(src: SharedTile, desc, ty, row, col) -> tuple[Scalar, Scalar]:
    """The sub-tile a shared load of `desc` (IR type `ty`) reads, as index scalars. A
    coordinate known while tracing must be inside the shared tile; one computed on the device
    is the author's to keep inside (the interpreter checks it, the hardware does not)."""
    down, across = subtile_grid(src.ty, ty)
    row_s, col_s = as_index(row, "shared load row"), as_index(col, "shared load col")
    if src.is_vector and constant_int(row_s.v) != 0:
        raise tracer.error("a shared vector has one row: its shared load takes only `col`",
                           op="lds_load", hint="sv.load(hk.RV(dtype, L), col=c) reads elements "
                                               "[c·L, c·L+L)")
    for name, value, count in (("row", row_s, down), ("col", col_s, across)):
        known = constant_int(value.v)
        if known is not None and not 0 <= known < count:
            raise _outside(src, desc, f"{name} {known}", (down, across))
    return row_s, col_s


def _outside(src: SharedTile, desc, coordinate: str, grid: tuple[int, int]):
    if isinstance(desc, RV):
        shared, part = f"{src.ty.length.data}-element shared vector", f"{desc.length}-element"
    else:
        shared = f"{src.ty.rows.data}x{src.ty.cols.data} shared tile"
        part = f"{desc.rows}x{desc.cols}"
    return tracer.error(
        f"shared load {coordinate} is outside the {shared}: in {part} sub-tiles, row is in "
        f"[0, {grid[0]}) and col in [0, {grid[1]})", op="lds_load",
        hint="row and col count sub-tiles of the register type's shape, not elements")


def load_async(dst: SharedTile, src: GlobalView) -> None:
    """Global → shared by the whole block, asynchronously; `wait_for(dst)` before reading."""
    if not isinstance(dst, SharedTile):
        raise tracer.error(f"group load writes a shared tile, got {describe(dst)}",
                           op="group.load", hint="allocate one with hk.shared(hk.ST(...))")
    if not isinstance(src, GlobalView):
        raise tracer.error(f"group load reads g[coord], got {describe(src)}", op="group.load")
    if src.g.dtype != dst.dtype:
        raise tracer.error(f"group load of {src.g.dtype!r} global '{src.g.name}' into a "
                           f"{dst.dtype!r} shared tile", op="group.load")
    _b().copy_async(src.g.v, [s.v for s in src.coord.scalars()], dst.v)


def wait_for(*tiles) -> None:
    """Wait until the asynchronous writes into these tiles are done (counts are derived)."""
    if not tiles:
        raise tracer.error("wait_for() needs the tiles it waits for", op="wait_for")
    for t in tiles:
        if not isinstance(t, (Tile, Vec, SharedTile)):
            raise tracer.error(f"wait_for() waits for tiles, got {describe(t)}", op="wait_for")
    _b().wait_for([t.v for t in tiles])


def barrier() -> None:
    """Every warp of the block meets here."""
    _b().barrier()


# ---- masks, random numbers, rows by index --------------------------------------------------

def causal_mask(x: Tile, row0, col0, fill: float = float("-inf")) -> Tile:
    """x with `fill` where (col0 + j) > (row0 + i): keys past the query."""
    if not isinstance(x, Tile):
        raise tracer.error(f"causal_mask applies to a register tile, got {describe(x)}")
    return Tile(_b().causal_mask(x.v, as_index(row0, "row0").v, as_index(col0, "col0").v,
                                 float(fill)))


def rand(seed, offsets: Tile | Vec) -> Tile | Vec:
    """Uniform [0, 1) fp32 draws, the same as Triton's `tl.rand(seed, offsets)`."""
    if not isinstance(offsets, (Tile, Vec)) or offsets.dtype != dtypes.i32:
        raise tracer.error(f"rand offsets must be an i32 tile or vector, got {describe(offsets)}",
                           op="rand", hint="build them with hk.iota(hk.RT(hk.i32, ...)) + base")
    if isinstance(seed, int):
        seed_v = _b().const_int(seed, 64)
    else:
        s = as_scalar(seed, "rand seed")
        seed_v = _b().int_cast(s.v, emit.i64)
    ty = offsets._retyped(dtypes.fp32)
    return offsets._wrap(_b().rand(seed_v, offsets.v, ty))


def _rows_vec(rows, op: str) -> Vec:
    if not isinstance(rows, Vec) or rows.dtype != dtypes.i32:
        raise tracer.error(f"{op} row indices must be an i32 register vector, got "
                           f"{describe(rows)}", op=op)
    return rows


def gather(src, rows: Vec, desc: RT, col=0, batch=0, depth=0) -> Tile:
    """Row i of the result is row rows[i] of `src` (batch, depth), column tile `col`."""
    if not isinstance(src, Global):
        raise tracer.error(f"gather reads a global, got {describe(src)}", op="gather")
    rows = _rows_vec(rows, "gather")
    ty = ir_type_of_register_desc(desc, "gather")
    if desc.dtype != src.dtype:
        raise tracer.error(f"gather of {desc.dtype!r} rows from global '{src.name}' of "
                           f"{src.dtype!r}", op="gather")
    if rows.length != desc.rows:
        raise tracer.error(f"gather of {desc.rows} rows with {rows.length} indices", op="gather")
    return Tile(_b().gather(src.v, as_index(batch, "batch").v, as_index(depth, "depth").v,
                            rows.v, as_index(col, "col").v, ty))


def scatter(dst, rows: Vec, value: Tile, col=0, batch=0, depth=0) -> None:
    """Row i of `value` goes to row rows[i] of `dst`; negative indices (padding) are dropped."""
    if not isinstance(dst, Global):
        raise tracer.error(f"scatter writes a global, got {describe(dst)}", op="scatter")
    rows = _rows_vec(rows, "scatter")
    if not isinstance(value, Tile):
        raise tracer.error(f"scatter writes a register tile, got {describe(value)}", op="scatter")
    if value.dtype != dst.dtype:
        raise tracer.error(f"scatter of {value.dtype!r} rows into global '{dst.name}' of "
                           f"{dst.dtype!r}", op="scatter", hint=f"convert with .to({dst.dtype!r})")
    if rows.length != value.rows:
        raise tracer.error(f"scatter of {value.rows} rows with {rows.length} indices", op="scatter")
    _b().scatter(dst.v, as_index(batch, "batch").v, as_index(depth, "depth").v, rows.v,
                 as_index(col, "col").v, value.v)


# ---- namespaces ----------------------------------------------------------------------------

class _BlockIdx:
    @property
    def x(self) -> Scalar: return Scalar(_b().block_idx(0))
    @property
    def y(self) -> Scalar: return Scalar(_b().block_idx(1))
    @property
    def z(self) -> Scalar: return Scalar(_b().block_idx(2))


class _Arch:
    """hk.arch: what the hardware gives a running block."""
    block_idx = _BlockIdx()

    @property
    def warp_id(self) -> Scalar:
        return Scalar(_b().warp_id())

    @property
    def num_warps(self) -> int:
        return tracer.current().warps

    @property
    def wave_size(self) -> int:
        return tracer.current().target.wave_size

    @staticmethod
    def barrier() -> None:
        barrier()


class _Math:
    exp, exp2, log, log2, sqrt, rsqrt = exp, exp2, log, log2, sqrt, rsqrt
    silu, gelu, relu, sigmoid, tanh, sin, cos = silu, gelu, relu, sigmoid, tanh, sin, cos
    maximum, minimum = staticmethod(maximum), staticmethod(minimum)
    abs = staticmethod(abs)


class _Group:
    """hk.group: operations of the whole block's warps together."""
    load = staticmethod(load_async)

    @staticmethod
    def sum(x): return block_reduce("sum", x)

    @staticmethod
    def max(x): return block_reduce("max", x)

    @staticmethod
    def min(x): return block_reduce("min", x)


class _Lds:
    """hk.lds: shared memory (LDS on AMD)."""
    alloc = staticmethod(shared)
    load_async = staticmethod(load_async)


arch = _Arch()
math = _Math()
group = _Group()
lds = _Lds()

__all__ = [n for n in dir() if not n.startswith("_")]
