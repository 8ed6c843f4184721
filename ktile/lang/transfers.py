"""Moving tiles: shared memory, asynchronous group copies, waits and barriers, rows by index."""
from __future__ import annotations

from .. import dtypes
from ..ir import types as irt
from ..ir.ops import constant_int, subtile_grid
from . import tracer
from .memory import Global, GlobalView, SharedTile
from .tiles import Tile, Vec
from .types import RT, RV, ST, SV
from .elementwise import ir_type_of_register_desc
from .values import Scalar, as_index, describe

def _b():
    return tracer.current().builder


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
    from . import pipeline
    if pipeline.intercepts_load(dst):   # a pipeline's stage, or a load inside a role
        pipeline.group_load(dst, src)
        return
    group_copy(dst, src)


def group_copy(dst: SharedTile, src: GlobalView) -> None:
    """The checked kt.copy_async of `load_async`, for any shared tile (a pipeline's stages too:
    pipeline_forms.py)."""
    if not isinstance(dst, SharedTile):
        raise tracer.error(f"group load writes a shared tile, got {describe(dst)}",
                           op="group.load", hint="allocate one with hk.shared(hk.ST(...))")
    if not isinstance(src, GlobalView):
        raise tracer.error(f"group load reads g[coord], got {describe(src)}", op="group.load")
    if src.g.dtype != dst.dtype:
        raise tracer.error(f"group load of {src.g.dtype!r} global '{src.g.name}' into a "
                           f"{dst.dtype!r} shared tile", op="group.load")
    _b().copy_async(src.g.v, [s.v for s in src.coord.scalars()], dst.v, src.coord.unit)


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
    from .roles import check_meeting
    check_meeting("a barrier")
    _b().barrier()



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


