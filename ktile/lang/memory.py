"""Traced memory: tile coordinates, globals (the tensor parameters) and their tile views,
shared tiles and vectors."""
from __future__ import annotations

from ..dtypes import DType
from ..ir import types as irt
from . import tracer
from .tiles import Tile, Vec
from .types import RT, RV
from .values import Scalar, Value, _b, as_index, describe


class Coord:
    """Where a tile or vector of a 4-D global sits: (batch, depth, row, col) in `unit`s.
    "tile" (hk.tile_coord, `g.tile[...]`): row and col count whole tiles of the shape loaded
    or stored (a vector's row counts elements). "element" (hk.elem_coord, `g.at[...]`): the
    tile starts at element (row, col), any offset, ragged edges masked as for tiles."""

    def __init__(self, parts, unit: str = "tile"):
        self.parts = tuple(parts)
        self.unit = unit
        if len(self.parts) != 4:
            raise tracer.error(f"a{'n' if unit == 'element' else ''} {unit} coordinate has 4 "
                               f"parts (batch, depth, row, col), got {len(self.parts)}",
                               hint=f"use {self.spelling}(b, d, r, c)")
        self._check_parts()
        self._scalars: list[Scalar] | None = None

    def _check_parts(self) -> None:
        """Refuse a part that is no integer where the coordinate is written (the call's own
        line), not where it is first loaded from, which may be lines later. The parts become
        IR only at that first use, so a kernel's IR does not depend on where it made them."""
        for part, name in zip(self.parts, ("batch", "depth", "row", "col")):
            if isinstance(part, Scalar) and not part.is_float:
                continue
            if isinstance(part, int) or _is_numpy_int(part):
                continue
            what = f"{self.spelling[3:]} {name}"
            raise tracer.error(f"{what} must be an integer, got {describe(part)}",
                               hint=f"{self.spelling}(b, d, r, c) takes Python ints and integer "
                                    f"device scalars (hk.arch.block_idx.x, x.cols // 64, ...)")

    @property
    def spelling(self) -> str:
        return "hk.elem_coord" if self.unit == "element" else "hk.tile_coord"

    def scalars(self) -> list[Scalar]:
        if self._scalars is None:
            names = ("batch", "depth", "row", "col")
            self._scalars = [as_index(p, f"{self.spelling[3:]} {n}")
                             for p, n in zip(self.parts, names)]
        return self._scalars


class SharedTile(Value):
    """A shared-memory tile or vector of the block."""
    kind = "shared tile"

    def describe(self) -> str:
        return "a shared vector" if self.is_vector else "a shared tile"

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
        from .transfers import check_desc_matches_shared, subtile_coords
        ty = check_desc_matches_shared(self, desc)
        row_s, col_s = subtile_coords(self, desc, ty, row, col)
        v = _b().lds_load(self.v, row_s.v, col_s.v, ty)
        return Vec(v) if isinstance(desc, RV) else Tile(v)

    @property
    def T(self):
        """`s.T`, only as the right operand of `@`: `acc += a @ s.T` multiplies this warp's
        register tile a by the shared tile's transpose (an MMA reading B from shared memory;
        on sm_90a a warpgroup `wgmma`)."""
        from .tiles import Transposed
        return Transposed(self)

    def __matmul__(self, other):
        """`sa @ sb.T`: both MMA operands from shared memory (this warp's rows of sa)."""
        from .tiles import MatMul
        return MatMul.of(self, other)

    def store(self, value: Tile | Vec, row=None, col=None) -> None:
        """Registers → shared; other warps see it after `hk.barrier()`. With `row=`/`col=`
        the value fills sub-tile (row, col) of this larger shared tile, in units of the
        value's shape (as `load(desc, row=, col=)` reads one); device values are allowed."""
        if row is not None or col is not None:
            from .shared_ops import store_subtile
            store_subtile(self, value, 0 if row is None else row, 0 if col is None else col)
            return
        if not isinstance(value, (Tile, Vec)):
            raise tracer.error(f"store() writes a register tile or vector, got {describe(value)}")
        if value.dtype != self.dtype:
            raise tracer.error(f"store of {describe(value)} into a {self.dtype!r} shared "
                               f"{'vector' if self.is_vector else 'tile'}", op="lds_store",
                               hint=f"convert first: value.to({self.dtype!r})")
        if self._shape_words(value) != self._shape_words(self):
            raise tracer.error(
                f"store of {describe(value)} into a {self._shape_words(self)}: a store writes "
                f"the whole shared {'vector' if self.is_vector else 'tile'}", op="lds_store",
                hint="store a register value of the shared one's shape (a tile into a tile, a "
                     "vector into a vector)")
        _b().lds_store(self.v, value.v)

    @staticmethod
    def _shape_words(x) -> str:
        """The shape of a register or shared value, comparable across the two."""
        ty = x.ty
        if hasattr(ty, "length"):
            return f"{ty.length.data}-element vector"
        return f"{ty.rows.data}x{ty.cols.data} tile"


class Global(Value):
    """A positional tensor parameter: a 4-D global (batch, depth, rows, cols)."""
    kind = "global tensor"

    def describe(self) -> str:
        return f"global '{self.name}'"

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

    @property
    def tile(self) -> "TileIndexer":
        """`g.tile[r, c]`: a tile coordinate of 1 to 4 parts (hk-dsl's spelling of `g[r, c]`)."""
        return TileIndexer(self)

    @property
    def at(self):
        """`g.at[r, c]`: hk-dsl's view at an element coordinate of 1 to 4 parts."""
        from .hk_compat import ElementIndexer
        return ElementIndexer(self)

    def __getitem__(self, idx) -> "GlobalView":
        from .hk_compat import View  # takes hk's into=/bounded= too; no conversion here
        return View(self, to_coord(idx), converts=False)

    def __setitem__(self, idx, value) -> None:
        self[idx].store(value)

    def __iter__(self):
        raise tracer.error(f"global '{self.name}' cannot be iterated",
                           hint="index it with a tile coordinate: g[r, c] or "
                                "g[hk.tile_coord(b, d, r, c)]")


class GlobalView:
    """`g[coord]`: where a tile of `g` sits, waiting to be loaded or stored."""

    def __init__(self, g: Global, coord: Coord):
        self.g, self.coord = g, coord

    def load(self, desc: RT | RV, pad: float = 0.0) -> Tile | Vec:
        """Global → registers. Elements past the global's edge read `pad` (bounded load)."""
        from .elementwise import ir_type_of_register_desc
        ty = ir_type_of_register_desc(desc, "load")
        if desc.dtype != self.g.dtype:
            raise tracer.error(
                f"load of a {desc.dtype!r} tile from global '{self.g.name}' of {self.g.dtype!r}",
                op="load", hint=f"load as {self.g.dtype!r} and convert with .to({desc.dtype!r})")
        record_coindexing(self.g, self.coord, desc)
        v = _b().load(self.g.v, [s.v for s in self.coord.scalars()], ty, float(pad),
                      self.coord.unit)
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
        _b().store(self.g.v, [s.v for s in self.coord.scalars()], value.v, self.coord.unit)


def _is_numpy_int(value) -> bool:
    import numpy as np
    return isinstance(value, np.integer)


def to_coord(idx) -> Coord:
    """`g[idx]`, `g.tile[idx]`: a coordinate, or its parts (`left_padded`)."""
    if isinstance(idx, Coord):
        return idx
    return Coord(left_padded(idx))


def left_padded(idx) -> tuple:
    """The 1 to 4 parts of an index (one part, or a tuple of them) as (batch, depth, row, col):
    the missing leading parts are 0, as a tensor of fewer than 4 dimensions is padded with
    leading extents of 1 at the call (`x[r, c]` is `x[0, 0, r, c]`)."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    if 1 <= len(parts) <= 4:
        return (0,) * (4 - len(parts)) + parts
    raise tracer.error(f"a global is indexed by 1 to 4 parts ([col], [row, col], [depth, row, "
                       f"col] or [batch, depth, row, col]), got {len(parts)} parts",
                       hint="index it as g[r, c] (the leading parts are 0) or "
                            "g[hk.tile_coord(b, d, r, c)]")


class TileIndexer:
    """`g.tile[...]`: `g` at a coordinate in whole tiles of the shape loaded or stored, of 1 to 4
    parts (`left_padded`), as hk-dsl spells it; the same as `g[...]`."""

    def __init__(self, g: Global):
        self.g = g

    def __getitem__(self, idx) -> GlobalView:
        from .hk_compat import View  # hk's view: converting loads, into=, bounded=
        return View(self.g, to_coord(idx))

    def __setitem__(self, idx, value) -> None:
        self[idx].store(value)


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
