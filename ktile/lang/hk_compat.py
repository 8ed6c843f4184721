"""hk-dsl 0.8.0's kernel spellings, beside ktile's own (`import ktile as hk`).

Each name here takes hk-dsl's arguments and means the nearest ktile thing on every target;
docs/hk-compat.md is the table. Where the two APIs share a spelling with another meaning, the
hk form is told apart by its arguments (`hk.mma("mma_ABt", ...)`: a str first) or by an entry
point only hk has (`hk.group(4)`, `hk.lds.alloc`, `x.at[...]`, `x.tile[...]`), so ktile's own
spellings keep their meaning. hk's synchronous defaults live on hk's entry points: a shared
tile from `hk.lds.alloc` and a group from `hk.group(W)` wait for their loads unless told
`wait=False`; ktile's `hk.shared` / `hk.group.load` stay asynchronous.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any

from .. import dtypes
from . import tracer
from .hk_methods import landed
from .memory import Coord, Global, GlobalView, SharedTile
from .shared_ops import select_shared
from .tiles import Tile, Vec
from .types import RT, RV, ST, SV
from .values import Scalar, as_index, describe


def _b():
    return tracer.current().builder


# hk-dsl's value classes, for isinstance: its Int and Bool are ktile's device scalars, its
# SharedVec a shared tile holding a vector
Int = Bool = Scalar
SharedVec = SharedTile


# ---- vector types tied to a tile type --------------------------------------------------------

def col_vec(tile: RT) -> RV:
    """hk's col_vec: one value per *row* of `tile` (what `t.sum(axis=1)` gives), which is
    ktile's `RV(dtype, rows, axis="row")`. The word "col" names the vector's shape (a column
    of values), not the axis it runs along."""
    _tile_type(tile, "col_vec")
    return RV(tile.dtype, tile.rows, "row")


def row_vec(tile: RT) -> RV:
    """hk's row_vec: one value per *column* of `tile`: ktile's `RV(dtype, cols, axis="col")`."""
    _tile_type(tile, "row_vec")
    return RV(tile.dtype, tile.cols, "col")


def _tile_type(tile, what: str) -> None:
    if not isinstance(tile, RT):
        raise tracer.error(f"hk.{what} takes a register tile type hk.RT(...), got "
                           f"{describe(tile)}", hint=f"hk.{what}(hk.RT(hk.fp32, 16, 64))")


# ---- constructors with into= -----------------------------------------------------------------

def zeros(desc, *, into=None):
    from . import elementwise
    return landed(elementwise.zeros(desc), into)


def full(desc, value: float, *, into=None):
    from . import elementwise
    return landed(elementwise.full(desc, value), into)


def neg_infty(desc, *, into=None):
    from . import elementwise
    return landed(elementwise.neg_infty(desc), into)


def broadcast_row(desc: RT, vec: Vec) -> Tile:
    """A tile of type `desc` whose row i is vec[i] everywhere (vec: one value per row)."""
    return _broadcast(desc, vec, "row", "broadcast_row")


def broadcast_col(desc: RT, vec: Vec) -> Tile:
    """A tile of type `desc` whose column j is vec[j] everywhere (vec: one value per column)."""
    return _broadcast(desc, vec, "col", "broadcast_col")


def _broadcast(desc: RT, vec, per: str, what: str) -> Tile:
    _tile_type(desc, what)
    if not isinstance(vec, Vec) or vec.axis != per:
        kind = "col_vec (one value per row)" if per == "row" else "row_vec (one value per column)"
        raise tracer.error(f"hk.{what} takes a {kind}, got {describe(vec)}")
    from . import elementwise
    return elementwise.zeros(RT(vec.dtype, desc.rows, desc.cols, desc.layout)) + vec


# ---- random numbers ----------------------------------------------------------------------------

def rand(first, *args, into=None):
    """hk's `hk.rand(tile_type, seed, offset, row_stride)`: element (r, c) is Triton's
    `tl.rand(seed, offset + r*row_stride + c)`; ktile's own `hk.rand(seed, offsets)` when the
    first argument is not a type."""
    from . import elementwise
    if not isinstance(first, RT):
        return landed(elementwise.rand(first, *args), into)
    if len(args) != 3:
        raise tracer.error(f"hk.rand(tile_type, seed, offset, row_stride) takes 4 arguments, got "
                           f"{1 + len(args)}", op="rand")
    seed, offset, stride = args
    shape = RT(dtypes.i32, first.rows, first.cols)
    offsets = elementwise.iota(shape, "row") * stride + elementwise.iota(shape, "col") + offset
    return landed(elementwise.rand(seed, offsets), into)


# ---- min / max of anything -------------------------------------------------------------------

def max(a, b):  # noqa: A001 - hk-dsl's name
    """Elementwise max of tiles or vectors; the max of two ints or device Ints."""
    from .elementwise import maximum
    return maximum(a, b)


def min(a, b):  # noqa: A001
    from .elementwise import minimum
    return minimum(a, b)


# ---- hk.math with into= ------------------------------------------------------------------------

def _math_binary(fn: str):
    def apply(a, b, *, into=None):
        if not isinstance(a, (Tile, Vec)):
            raise tracer.error(f"hk.math.{fn} takes a register tile or vector first, got "
                               f"{describe(a)}", op=f"math.{fn}")
        return landed(a._binary(fn, b), into)
    apply.__name__ = fn
    return apply


def _with_into(function):
    def apply(*args, into=None):
        return landed(function(*args), into)
    apply.__name__ = getattr(function, "__name__", "math")
    apply.__doc__ = function.__doc__
    return apply


MATH_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div"}


def add_math_forms(namespace: type) -> None:
    """hk.math as hk-dsl spells it: every function also takes `into=`, and the operators
    come as add/sub/mul/div (a vector second operand broadcasts)."""
    for name, value in list(vars(namespace).items()):
        if isinstance(value, staticmethod):
            setattr(namespace, name, staticmethod(_with_into(value.__func__)))
    for name, fn in MATH_BINARY.items():
        setattr(namespace, name, staticmethod(_math_binary(fn)))


# ---- matrix multiply, hk's order -------------------------------------------------------------

def hk_variant(name: str) -> str:
    """"mma_ABt" -> "ABt" (hk writes the prefix)."""
    return name.removeprefix("mma_")


# ---- globals: x.tile[...] and x.at[...] --------------------------------------------------------

class View(GlobalView):
    """hk's View, `x.tile[r, c]` (in tiles) or `x.at[r, c]` (in elements): loads and stores
    convert the element type as hk's do, and take hk's `into=` and `bounded=`. They are
    bounded whatever `bounded=` says: ktile never reads or writes past a global's edge.
    `x[coord]`, the spelling ktile shares with hk, takes the keywords but keeps ktile's rule
    that the element types match (`converts=False`)."""

    def __init__(self, g: Global, coord: Coord, converts: bool = True):
        super().__init__(g, coord)
        self.converts = converts

    def load(self, desc, pad: float = 0.0, *, into=None, bounded=False, period=None):
        if period is not None:
            raise tracer.error("load(period=...) repeats columns of a gfx950 strip; ktile has no "
                               "strips", op="load", hint="load the tile and broadcast it yourself")
        if not isinstance(desc, (RT, RV)):
            raise tracer.error(f"load() takes a register type hk.RT(...) or a vector type, got "
                               f"{describe(desc)}", op="load")
        native = _retyped(desc, self.g.dtype) if self.converts else desc
        value = GlobalView.load(self, native, pad).to(desc.dtype)
        return landed(_rows_below(value, bounded), into)

    def store(self, value, *, bounded=False) -> None:
        _store_bound(bounded)
        if isinstance(value, (Tile, Vec)) and self.converts:
            value = value.to(self.g.dtype)
        GlobalView.store(self, value)


class ElementIndexer:
    """`x.at[...]`: a View at an element coordinate of 1 to 4 parts (left-padded with 0)."""

    def __init__(self, g: Global):
        self.g = g

    def __getitem__(self, idx) -> View:
        from .memory import left_padded
        return View(self.g, Coord(left_padded(idx), unit="element"))

    def __setitem__(self, idx, value) -> None:
        self[idx].store(value)


def _retyped(desc, dtype):
    if isinstance(desc, RT):
        return RT(dtype, desc.rows, desc.cols, desc.layout)
    return RV(dtype, desc.length, desc.axis)


def _rows_below(value, bounded):
    """hk's `bounded=n`: rows from n on read 0. True/False add nothing: ktile's loads are
    always bounded by the global's edge."""
    if isinstance(bounded, bool) or bounded is None:
        return value
    if not isinstance(value, Tile):
        raise tracer.error("bounded=n limits the rows of a tile load, not a vector load",
                           op="load")
    return value.lower_fill_(bounded, 0.0)


def _store_bound(bounded) -> None:
    if isinstance(bounded, bool) or bounded is None:
        return
    raise tracer.error("store(bounded=n): ktile's stores drop only what lies past the global's "
                       "edge; a row limit inside it would need a masked store ktile lacks",
                       op="store", hint="store with bounded=True (ktile stores never write past "
                                        "the edge), or store a tile holding only the rows you own")


# ---- coordinates ---------------------------------------------------------------------------

def coord(b=0, d=0, r=0, c=0, *, unit: str = "tile") -> Coord:
    """hk's coordinate: in tiles (hk.tile_coord) or, unit="element", in elements."""
    if unit not in ("tile", "element"):
        raise tracer.error(f"hk.coord unit= is 'tile' or 'element', got {unit!r}")
    return Coord((b, d, r, c), unit=unit)


# ---- shared memory: hk.lds --------------------------------------------------------------------

class LdsTile(SharedTile):
    """A shared tile from `hk.lds.alloc`: hk's loads from it wait by default."""

    def load(self, desc, row=0, col=0, *, wait: bool = True, into=None):
        """Shared -> registers, waited for unless wait=False (then `hk.lds.wait_for(t)`)."""
        return _waited(SharedTile.load(self, desc, row, col), wait, into)

    def subtile(self, rows: int, cols: int, row=0, col=0) -> "LdsWindow":
        """The rows x cols window at (row, col), counted in windows (hk's units)."""
        return LdsWindow(self, rows, cols, row, col)


class LdsWindow:
    """`s.subtile(rows, cols, row, col)`: a window of a shared tile, loaded as a whole."""

    def __init__(self, parent: LdsTile, rows: int, cols: int, row, col):
        self.parent, self.rows, self.cols, self.row, self.col = parent, rows, cols, row, col

    def load(self, desc, *, wait: bool = True, into=None):
        if not isinstance(desc, RT) or (desc.rows, desc.cols) != (self.rows, self.cols):
            raise tracer.error(f"a {self.rows}x{self.cols} shared window loads into a register "
                               f"tile of the same extents, got {describe(desc)}", op="lds_load")
        v = SharedTile.load(self.parent, desc, self.row, self.col)
        return _waited(v, wait, into)


def _waited(value, wait: bool, into):
    from .transfers import wait_for
    if wait:
        wait_for(value)
    return landed(value, into)


class LdsStack:
    """`hk.lds.alloc(T, count=n)`: n shared tiles, `stack[i]` with i a Python int or a device
    integer (then the tile is picked on the device, as `bufs[i]` of a list of shared tiles)."""

    def __init__(self, tiles: list[LdsTile]):
        self.tiles = tiles

    def __getitem__(self, i) -> LdsTile:
        if isinstance(i, Scalar):
            return select_shared(self.tiles, i)
        if not isinstance(i, int) or isinstance(i, bool):
            raise tracer.error(f"a shared stack is indexed by an integer, got {describe(i)}",
                               op="lds stack",
                               hint="index it with a Python int or a device integer such as "
                                    "k % 2")
        if not 0 <= i < len(self.tiles):
            raise tracer.error(f"shared stack index {i} is outside its {len(self.tiles)} buffers")
        return self.tiles[i]

    def __len__(self) -> int:
        return len(self.tiles)


def lds_alloc(tile, name: str = "smem", count: int | None = None, *, shape: str | None = None):
    """hk's `hk.lds.alloc(ST, name=, count=, shape=)`. `name` is hk's C++ name (ktile names
    shared memory itself); `shape` a gfx950 layout hint ktile chooses itself."""
    if not isinstance(name, str):
        raise tracer.error(f"lds.alloc name= is a string, got {describe(name)}")
    if isinstance(tile, SV):
        return _lds_one(tile)
    if not isinstance(tile, ST):
        raise tracer.error(f"hk.lds.alloc takes a shared type hk.ST(...) or hk.SV(...), got "
                           f"{describe(tile)}", op="lds.alloc")
    if count is None:
        return _lds_one(tile)
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        raise tracer.error(f"lds.alloc count= is a positive int, got {count!r}")
    return LdsStack([_lds_one(tile) for _ in range(count)])


def _lds_one(desc) -> LdsTile:
    from .transfers import shared
    return LdsTile(shared(desc).v)


# ---- the group: hk.group(W) and ktile's hk.group.sum --------------------------------------------

class Group:
    """`hk.group(W)`: W warps copying together. ktile's copies are by the whole block, which
    is the same data movement; W must not exceed the kernel's warps."""

    def __init__(self, warps: int):
        if not isinstance(warps, int) or isinstance(warps, bool) or warps <= 0:
            raise tracer.error(f"hk.group(warps) takes a positive int, got {warps!r}")
        kernel_warps = tracer.current().warps
        if warps > kernel_warps:
            raise tracer.error(f"hk.group({warps}) in a kernel of {kernel_warps} warps",
                               hint=f"raise the kernel's warps= to {warps}, or group fewer")
        self.warps = warps

    @property
    def threads(self) -> int:
        return self.warps * tracer.current().target.wave_size

    def load(self, dst, src, *, wait: bool = True, rows=None, nontemporal: bool = False,
             gather=None, staged: int = 0) -> None:
        """Global -> shared; waits unless wait=False (then `g.wait_for(dst)` and a barrier)."""
        from .transfers import load_async, wait_for
        if rows is not None or gather is not None or staged:
            raise tracer.error("group load rows=/gather=/staged= are not in ktile",
                               op="group.load", hint="load whole tiles (rows past the global's "
                               "edge read 0 already); gather rows with hk.gather")
        load_async(dst, src)
        if wait:
            wait_for(dst)

    def wait_for(self, *tiles, exact: bool = False) -> None:
        from .transfers import wait_for
        wait_for(*tiles)


# ---- hk.collective ---------------------------------------------------------------------------

_COMBINERS = {"add": "sum", "max": "max", "min": "min"}


def cross_warp(vec, op: str, warps: int, *, scratch=None, name: str = "xw"):
    """Every warp gets the combination of all warps' vectors (in warp order)."""
    from .elementwise import block_reduce
    if op not in _COMBINERS:
        raise tracer.error(f"cross_warp op {op!r}: ktile combines with add, max or min",
                           op="collective.cross_warp")
    kernel_warps = tracer.current().warps
    if warps != kernel_warps:
        raise tracer.error(f"cross_warp over {warps} warps in a kernel of {kernel_warps}: ktile "
                           f"combines all of the block's warps", op="collective.cross_warp",
                           hint=f"pass warps={kernel_warps}")
    return block_reduce(_COMBINERS[op], vec)


# ---- control: hk.if_, hk.scope, hk.uniform ------------------------------------------------------

@contextmanager
def if_(cond, *, opaque: bool = False, uniform: bool = False):
    """`with hk.if_(cond):` the body runs where cond holds. Device values made inside stay
    inside (use a plain `if` to carry one out)."""
    from .control import _condition
    if not isinstance(cond, Scalar):
        if cond:
            yield
        return
    b = _b()
    op = b.if_op(_condition(cond, "hk.if_").v, [])
    with b.at_end_of(op.true_region.blocks[0]):
        yield
        b.yield_([])
    with b.at_end_of(op.false_region.blocks[0]):
        b.yield_([])


@contextmanager
def scope():
    """An always-taken region (hk bounds live ranges with it; ktile's compiler does that)."""
    yield


def uniform(cond):
    """hk declares cond workgroup-uniform; ktile's verify pass derives uniformity itself."""
    return cond


# ---- hk.arch extras ----------------------------------------------------------------------------

class CallableScalar(Scalar):
    """A device scalar that hk may also call: `hk.arch.warp_id` and `hk.arch.warp_id()`."""

    def __call__(self) -> Scalar:
        return self


SCHED_CLASSES = ("alu", "valu", "salu", "mma", "wmma", "mfma", "vmem", "vmem_read",
                 "vmem_write", "ds", "ds_read", "ds_write", "trans")


def check_sched_classes(classes) -> None:
    names = (classes,) if isinstance(classes, str) else tuple(classes)
    for c in names:
        if isinstance(c, str) and c not in SCHED_CLASSES:
            raise tracer.error(f"unknown scheduling class {c!r}",
                               hint=f"use one of {', '.join(SCHED_CLASSES)}")


def check_level(level, lo: int, hi: int, what: str) -> None:
    if not isinstance(level, int) or isinstance(level, bool) or not lo <= level <= hi:
        raise tracer.error(f"{what} takes an int in [{lo}, {hi}], got {level!r}")


@contextmanager
def pingpong(behind):
    """hk skews the warps where `behind` holds one barrier behind the others (a CDNA
    schedule). ktile keeps every warp in step on every target: the same results, without the
    skew; hk's 'two barriers inside' rule is then merely conservative."""
    if not isinstance(behind, (Scalar, bool)):
        raise tracer.error(f"pingpong takes a condition, got {describe(behind)}")
    yield


class Target:
    """`hk.arch.target()`: the target being traced, as hk names its facts."""

    def __init__(self, target):
        self.arch = target.name
        self.wave = target.wave_size

    def __repr__(self) -> str:
        return f"Target({self.arch!r}, wave={self.wave})"
