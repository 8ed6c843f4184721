"""Shared memory across warps: sub-tile stores into a larger shared tile, cross-warp
reductions of whole register tiles (`hk.group.sum(tile)`), the two things a split-K kernel
needs to combine its warps' partial results without one branch per warp; and a list of shared
tiles indexed by a device value (`bufs[k % 2]`), what a multi-buffered loop needs."""
from __future__ import annotations

from ..ir.ops import LdsSelectOp, constant_int
from . import tracer
from .memory import SharedTile
from .tiles import Tile, Vec
from .values import Scalar, as_index, describe


def _b():
    return tracer.current().builder


# ---- sub-tile stores -----------------------------------------------------------------------

def store_subtile(dst: SharedTile, value, row, col) -> None:
    """`s.store(value, row=R, col=C)`: the value fills sub-tile (R, C) of `s`, counted in units
    of the value's shape as `s.load(desc, row=, col=)` counts them. A coordinate known while
    tracing must be inside `s`; one computed on the device is the author's to keep inside
    (the interpreter checks it, the hardware does not)."""
    _check_stored_value(dst, value)
    grid = _subtile_grid(dst, value)
    row_s, col_s = as_index(row, "shared store row"), as_index(col, "shared store col")
    if dst.is_vector and constant_int(row_s.v) != 0:
        raise tracer.error("a shared vector has one row: its sub-vector store takes only `col`",
                           op="lds_store", hint="sv.store(v, col=c) writes elements [c·L, c·L+L) "
                                                "for a vector v of length L")
    for name, coord, count in (("row", row_s, grid[0]), ("col", col_s, grid[1])):
        known = constant_int(coord.v)
        if known is not None and not 0 <= known < count:
            raise _outside(dst, value, f"{name} {known}", grid)
    _b().lds_store(dst.v, value.v, [row_s.v, col_s.v])


def _check_stored_value(dst: SharedTile, value) -> None:
    if not isinstance(value, (Tile, Vec)):
        raise tracer.error(f"store() writes a register tile or vector, got {describe(value)}",
                           op="lds_store")
    if isinstance(value, Vec) != dst.is_vector:
        raise tracer.error(f"store of {describe(value)} into {dst.describe()}: register tiles "
                           f"go into shared tiles, register vectors into shared vectors",
                           op="lds_store")
    if value.dtype != dst.dtype:
        raise tracer.error(f"store of {describe(value)} into a {dst.dtype!r} shared "
                           f"{'vector' if dst.is_vector else 'tile'}", op="lds_store",
                           hint=f"convert first: value.to({dst.dtype!r})")


def _subtile_grid(dst: SharedTile, value) -> tuple[int, int]:
    """Value-shaped sub-tiles of `dst` down and across; refused when they do not tile it."""
    if dst.is_vector:
        length, part = dst.ty.length.data, value.length
        if length % part:
            raise tracer.error(
                f"store of a {part}-element vector into a {length}-element shared vector at a "
                f"col: the register vector's length must divide the shared vector's",
                op="lds_store", hint="a sub-vector store writes the col-th piece of the shared "
                                     "vector, in units of the register vector's length")
        return 1, length // part
    (rows, cols), (r, c) = dst.ty.shape, value.shape
    if rows % r or cols % c:
        raise tracer.error(
            f"store of a {r}x{c} tile into a {rows}x{cols} shared tile at (row, col): the "
            f"register tile's rows and columns must divide the shared tile's",
            op="lds_store", hint=f"a sub-tile store writes sub-tile (row, col) in units of the "
                                 f"register tile's shape: use rows that divide {rows} and "
                                 f"columns that divide {cols}")
    return rows // r, cols // c


def _outside(dst: SharedTile, value, coordinate: str, grid: tuple[int, int]):
    if dst.is_vector:
        shared, part = f"{dst.ty.length.data}-element shared vector", f"{value.length}-element"
    else:
        shared = f"{dst.ty.rows.data}x{dst.ty.cols.data} shared tile"
        part = f"{value.rows}x{value.cols}"
    return tracer.error(
        f"shared store {coordinate} is outside the {shared}: in {part} sub-tiles, row is in "
        f"[0, {grid[0]}) and col in [0, {grid[1]})", op="lds_store",
        hint="row and col count sub-tiles of the stored value's shape, not elements")


# ---- cross-warp reductions -----------------------------------------------------------------

def group_reduce(kind: str, x):
    """`hk.group.sum/max/min(x)`: every warp gets the elementwise `kind` of x over all warps
    of the block. A register tile combines as a pairwise tree over warps through shared
    scratch (deterministic, no atomics); vectors and scalars fold warps in order."""
    from .elementwise import block_reduce
    from .roles import check_meeting
    check_meeting(f"group.{kind}")
    if not isinstance(x, (Tile, Vec, Scalar)):
        raise tracer.error(
            f"group.{kind} combines a register tile, vector or scalar across warps, got "
            f"{describe(x)}", op=f"group.{kind}",
            hint="load it into registers first (s.load(hk.RT(...)) for a shared tile, "
                 "g[coord].load(hk.RT(...)) for a global)")
    if not isinstance(x, Tile):
        return block_reduce(kind, x)
    if x.dtype.kind == "bool":
        raise tracer.error(f"group.{kind} combines numbers across warps, got {describe(x)}",
                           op=f"group.{kind}",
                           hint="convert the mask to a number tile first: hk.where(mask, 1.0, 0.0)")
    return Tile(_b().block_reduce(kind, x.v))


# ---- a list of shared tiles indexed on the device ------------------------------------------

def select_shared(tiles, index) -> SharedTile:
    """`bufs[i]` for a Python list or tuple of shared tiles of one type: a Python int picks
    the tile while tracing; a device integer gives a shared tile chosen at run time
    (`kt.lds_select`), usable wherever a shared tile is. An index known while tracing must be
    inside the list; one computed on the device is the author's to keep inside (the
    interpreter checks it, the hardware does not)."""
    tiles = _shared_list(tiles)
    if isinstance(index, int) or (isinstance(index, Scalar) and not index.is_float
                                  and constant_int(index.v) is not None):
        known = index if isinstance(index, int) else constant_int(index.v)
        return tiles[_inside_list(known, len(tiles))]
    index_s = as_index(index, "the index of a list of shared tiles")
    v = _b().insert(LdsSelectOp([t.v for t in tiles], index_s.v)).result
    return type(tiles[0])(v)


def is_shared_list(container) -> bool:
    """A list or tuple whose items are all shared tiles: what `select_shared` indexes."""
    return isinstance(container, (list, tuple)) and bool(container) and \
        all(isinstance(t, SharedTile) for t in container)


def _shared_list(tiles) -> list[SharedTile]:
    if not isinstance(tiles, (list, tuple)) or not tiles:
        what = "an empty list" if isinstance(tiles, (list, tuple)) else describe(tiles)
        raise tracer.error(f"a device index picks one of a list of shared tiles, got {what}",
                           op="lds_select", hint="make the list first: bufs = [hk.shared("
                                                 "hk.ST(...)) for _ in range(2)]")
    for k, t in enumerate(tiles):
        if not isinstance(t, SharedTile):
            raise tracer.error(f"item {k} of the list indexed by a device value is "
                               f"{describe(t)}: only a list of shared tiles can be indexed on "
                               f"the device", op="lds_select",
                               hint="index lists of register tiles with Python ints (unroll "
                                    "with range(...)), or keep the buffers in shared memory")
        if t.ty != tiles[0].ty:
            raise tracer.error(f"item {k} of the list is a {_type_words(t)} but item 0 is a "
                               f"{_type_words(tiles[0])}: a device index picks among shared "
                               f"tiles of one type", op="lds_select",
                               hint="allocate every buffer of the list from the same hk.ST(...)")
    if len({id(t.v) for t in tiles}) != len(tiles):
        raise tracer.error("a shared tile appears twice in the list indexed by a device value",
                           op="lds_select", hint="list each buffer once: the buffers are laid "
                                                 "out one after another, base + index × size")
    return list(tiles)


def _type_words(t: SharedTile) -> str:
    ty = t.ty
    if t.is_vector:
        return f"{ty.length.data}-element {t.dtype!r} shared vector"
    return f"{ty.rows.data}x{ty.cols.data} {t.dtype!r} shared tile"


def _inside_list(index: int, count: int) -> int:
    """A list index known while tracing: Python's negative indices count from the end."""
    if -count <= index < count:
        return index % count
    raise tracer.error(f"index {index} is outside the list of {count} shared tiles",
                       op="lds_select", hint=f"index it with 0 to {count - 1} (or a device "
                                             f"value kept in that range, such as k % {count})")
