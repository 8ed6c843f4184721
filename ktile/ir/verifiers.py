"""The type relations of the kt ops, one small check each.

Invariant: a module whose kt ops pass these checks holds only the shapes and element types the
tracer gives, so the passes, the interpreter and the C++ translation may rely on them for IR
from any source: traced, hand-written, or produced by a tool. Each check reads one op's own
operand and result types (O(1), no walks) and raises `IRError`, naming the op and the types
that disagree.
"""
from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, IndexType, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..dtypes import DType
from ..errors import KernelError
from .query import kernel_of, loc_of
from .types import (GlobalType, RegTileType, RegVecType, SharedTileType, SharedVecType,
                    dtype_or_none)

REGISTER = (RegTileType, RegVecType)
SHARED = (SharedTileType, SharedVecType)
KT_VALUES = (*REGISTER, *SHARED)

# The accumulator dtypes of an MMA: fp32, or i32 for i8 operands.
MMA_ACCUMULATORS = (dtypes.fp32, dtypes.i32)
# The layout each MMA variant reads a and b in (t: that operand transposed).
MMA_LAYOUTS = {"AB": ("row", "col"), "ABt": ("row", "row"), "AtB": ("col", "col"),
               "AtBt": ("col", "row")}


class IRError(VerifyException, KernelError):
    """A kt op whose types break its relation. To xDSL it is a VerifyException
    (`module.verify()`, `ktile-opt --verify-diagnostics`); to ktile a KernelError at the op's
    location: IR is its author's to fix, whoever wrote it."""

    def __init__(self, op: Operation, message: str, hint: str | None = None):
        KernelError.__init__(self, message, loc=loc_of(op), kernel=kernel_of(op), op=op.name,
                             hint=hint)
        self.operation = op


# ---- what a type is ----------------------------------------------------------------------------

def shape_of(ty: Attribute) -> tuple[int, ...]:
    """(rows, cols) of a tile, (length,) of a vector, () of anything else."""
    if isinstance(ty, (RegTileType, SharedTileType)):
        return ty.shape
    if isinstance(ty, (RegVecType, SharedVecType)):
        return (ty.length.data,)
    return ()


def is_scalar(ty: Attribute) -> bool:
    """A scalar operand of an elementwise op: f32, index or an integer of a ktile dtype (i32,
    i8, i1), what the interpreter and the headers compute with."""
    if isinstance(ty, IntegerType):
        return dtype_or_none(ty) is not None
    return isinstance(ty, (Float32Type, IndexType))


def dtype_of(ty: Attribute) -> DType | None:
    """The element dtype of a kt type, or of a scalar; None for a type ktile has no dtype for."""
    if isinstance(ty, (GlobalType, *KT_VALUES)):
        return dtype_or_none(ty.element)
    if isinstance(ty, IndexType):
        return dtypes.i32
    return dtype_or_none(ty)


def same_register_form(a: Attribute, b: Attribute) -> bool:
    """Same kind of register value, shape, layout (tile) or axis (vector) and element type.
    The fragment is not compared: the `fragments` pass tags a value for the MMA that reads it,
    and the headers read a tile whatever its tag."""
    if isinstance(a, RegTileType) and isinstance(b, RegTileType):
        return a.shape == b.shape and a.layout == b.layout and a.element == b.element
    return isinstance(a, RegVecType) and a == b


# ---- memory ------------------------------------------------------------------------------------

def check_dim(op: Operation, dim: int, meanings: Sequence[str]) -> None:
    if not 0 <= dim < len(meanings):
        names = ", ".join(f"{k} {m}" for k, m in enumerate(meanings))
        raise IRError(op, f"dim {dim} is not one of {names}")


def check_coords(op: Operation, coords: Sequence[SSAValue], unit: Attribute | None = None) -> None:
    """Four coordinates (batch, depth, row, col), in tiles or, with `unit = "element"`, in
    elements; a unit other than those two is no coordinate form the lowerings know."""
    word = "tile" if unit is None else getattr(unit, "data", None)
    if word not in ("tile", "element"):
        raise IRError(op, f"unit {unit} is not a coordinate unit: \"tile\" (the default) or "
                          f"\"element\"")
    if len(coords) != 4:
        raise IRError(op, f"takes 4 {word} coordinates (batch, depth, row, col), got "
                          f"{len(coords)}")


def check_register(op: Operation, what: str, ty: Attribute) -> None:
    if not isinstance(ty, REGISTER):
        raise IRError(op, f"{what} is {ty}; it must be a register tile or vector "
                          f"(!kt.rt or !kt.rv)")


def check_shared(op: Operation, what: str, ty: Attribute) -> None:
    if not isinstance(ty, SHARED):
        raise IRError(op, f"{what} is {ty}; it must be a shared tile or vector "
                          f"(!kt.st or !kt.sv)")


def check_same_element(op: Operation, a: tuple[str, Attribute], b: tuple[str, Attribute],
                       why: str) -> None:
    (a_what, a_ty), (b_what, b_ty) = a, b
    if a_ty.element != b_ty.element:  # type: ignore[attr-defined]
        raise IRError(op, f"{a_what} {a_ty} and {b_what} {b_ty} differ in element type: {why}",
                      hint="convert the register value with kt.cast")


def check_row_indices(op: Operation, rows: Attribute, tile: tuple[str, Attribute]) -> None:
    """Gather and scatter: one i32 row index per row of the tile."""
    what, ty = tile
    if dtype_of(rows) != dtypes.i32:
        raise IRError(op, f"the row indices {rows} must be an i32 register vector")
    if rows.length.data != ty.rows.data:  # type: ignore[attr-defined]
        raise IRError(op, f"the row indices {rows} and {what} {ty} disagree: one index per "
                          f"row of {what}")


def check_lds_store(op: Operation, dst: Attribute, value: Attribute) -> None:
    """A register value stored into shared memory fills the whole shared tile or vector."""
    check_shared(op, "the destination", dst)
    check_register(op, "the stored value", value)
    if isinstance(value, RegTileType) != isinstance(dst, SharedTileType):
        raise IRError(op, f"stores {value} into {dst}: a register tile goes into a shared "
                          f"tile, a register vector into a shared vector")
    if shape_of(value) != shape_of(dst):
        raise IRError(op, f"the stored value {value} and the shared destination {dst} differ "
                          f"in shape: a store writes the whole shared value",
                      hint="store a register value of the shared value's shape")
    check_same_element(op, ("the stored value", value), ("the destination", dst),
                       "a store into shared memory does not convert")


def check_lds_store_subtile(op: Operation, dst: Attribute, value: Attribute,
                            coords: Sequence[SSAValue]) -> None:
    """A sub-tile store: (row, col) in units of the value's shape, which divides the
    destination's; a constant coordinate lies inside the destination."""
    check_shared(op, "the destination", dst)
    check_register(op, "the stored value", value)
    if isinstance(value, RegTileType) != isinstance(dst, SharedTileType):
        raise IRError(op, f"stores {value} into {dst}: a register tile goes into a shared "
                          f"tile, a register vector into a shared vector")
    if len(coords) != 2:
        raise IRError(op, f"takes no coordinates or 2 (row, col) in units of the stored "
                          f"value's shape, got {len(coords)}")
    check_same_element(op, ("the stored value", value), ("the destination", dst),
                       "a store into shared memory does not convert")
    grid = _store_grid(dst, value)
    if grid is None:
        raise IRError(op, f"the stored value {value} does not divide the destination {dst}: "
                          f"a sub-tile store writes one value-shaped part of it")
    for name, coord, count in zip(("row", "col"), coords, grid):
        known = _constant_index(coord)
        if known is not None and not 0 <= known < count:
            raise IRError(op, f"{name} {known} is outside the destination, whose {name}s of "
                              f"sub-tiles are [0, {count})")


def _store_grid(dst: Attribute, value: Attribute) -> tuple[int, int] | None:
    """Value-shaped parts of `dst` down and across; None when the shape does not divide."""
    (rows, cols), (r, c) = _as_rows_cols(shape_of(dst)), _as_rows_cols(shape_of(value))
    return None if rows % r or cols % c else (rows // r, cols // c)


def _as_rows_cols(shape: tuple[int, ...]) -> tuple[int, int]:
    """A vector's (length,) as one row."""
    return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])


def _constant_index(value: SSAValue) -> int | None:
    """The integer an `arith.constant` gives `value`, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def check_lds_select(op: Operation, tiles: Sequence[Attribute], result: Attribute,
                     index: int | None) -> None:
    """kt.lds_select: a non-empty list of shared tiles of one type, the result of that type,
    and a constant index inside the list."""
    if not tiles:
        raise IRError(op, "selects from no tiles: name the shared tiles of the list")
    for k, ty in enumerate(tiles):
        check_shared(op, f"tile {k}", ty)
        if ty != tiles[0]:
            raise IRError(op, f"tile {k} is {ty} but tile 0 is {tiles[0]}: the tiles of a list "
                              f"indexed on the device are all one type")
    if result != tiles[0]:
        raise IRError(op, f"the result {result} is not the tiles' type {tiles[0]}")
    if index is not None and not 0 <= index < len(tiles):
        raise IRError(op, f"index {index} is outside the list of {len(tiles)} tiles, whose "
                          f"indices are [0, {len(tiles)})")


def check_listed_once(op: Operation, tiles: Sequence[SSAValue]) -> None:
    """Each tile once: lds-alloc places the list's tiles one after another, base + i × stride."""
    for k, value in enumerate(tiles):
        if value in tiles[:k]:
            raise IRError(op, f"tile {k} is tile {tiles.index(value)} again: each tile of a list "
                              f"indexed on the device is listed once",
                          hint="index a list of distinct shared tiles")


def check_waited(op: Operation, values: Sequence[SSAValue]) -> None:
    if not values:
        raise IRError(op, "waits for nothing: name the tiles whose asynchronous writes it waits "
                          "for")
    for k, value in enumerate(values):
        if not isinstance(value.type, KT_VALUES):
            raise IRError(op, f"operand {k} is {value.type}; a wait names register or shared "
                              f"tiles and vectors")


# ---- MMA ---------------------------------------------------------------------------------------

def check_mma_operands(op: Operation, a: Attribute, b: Attribute, acc: Attribute,
                       result: Attribute, b_what: str = "b") -> None:
    """What every MMA needs besides its shapes: a and b of one element type, an fp32 or i32
    accumulator, and a result of the accumulator's type."""
    if a.element != b.element:  # type: ignore[attr-defined]
        raise IRError(op, f"a {a} and {b_what} {b} differ in element type: an MMA multiplies "
                          f"operands of one dtype", hint="convert one with kt.cast")
    if dtype_of(acc) not in MMA_ACCUMULATORS:
        raise IRError(op, f"the accumulator {acc} must hold f32 (or i32 for i8 operands)")
    if acc.shape != result.shape or acc.element != result.element:  # type: ignore[attr-defined]
        raise IRError(op, f"the result {result} is not of the accumulator's type {acc}")


def check_mma_layouts(op: Operation, variant: str, a: RegTileType, b: RegTileType) -> None:
    want_a, want_b = MMA_LAYOUTS[variant]
    if a.layout.data != want_a or b.layout.data != want_b:
        raise IRError(op, f"variant {variant} reads a in {want_a} layout and b in {want_b} "
                          f"layout, got a {a} and b {b}")


def check_mma_fragments(op: Operation, roles: Sequence[tuple[str, RegTileType]]) -> None:
    """An operand tagged by `fragments` carries the tag of the role it plays here."""
    for role, ty in roles:
        if ty.fragment.data not in ("none", role):
            raise IRError(op, f"operand {role} {ty} carries the {ty.fragment.data!r} fragment, "
                              f"not {role!r}")


# ---- elementwise -------------------------------------------------------------------------------

def check_elementwise_operand(op: Operation, what: str, ty: Attribute) -> None:
    if not isinstance(ty, REGISTER) and not is_scalar(ty):
        raise IRError(op, f"{what} is {ty}; an elementwise op takes register tiles, vectors "
                          f"and f32 or integer scalars")


def check_unary(op: Operation, x: Attribute, result: Attribute, needs: str) -> None:
    """Result of the operand's type; `needs` the operand dtype kind: "float", "number"
    (float or integer) or "mask" (i1)."""
    if not isinstance(x, (*REGISTER, Float32Type)):
        raise IRError(op, f"the operand is {x}; it must be a register tile or vector, or an "
                          f"f32 scalar")
    same = same_register_form(x, result) if isinstance(x, REGISTER) else x == result
    if not same:
        raise IRError(op, f"the result {result} is not of the operand's type {x}")
    kind = dtype_of(x).kind  # type: ignore[union-attr]
    allowed = {"float": ("float",), "number": ("float", "int"), "mask": ("bool",)}[needs]
    if kind not in allowed:
        fn = op.fn.data  # type: ignore[attr-defined]
        raise IRError(op, f"{fn} of {x}: {fn} needs {_kind_words(needs)} values",
                      hint="convert first with kt.cast" if needs != "mask" else None)


def _kind_words(needs: str) -> str:
    return {"float": "float", "number": "float or integer", "mask": "i1 (mask)"}[needs]


def check_broadcast(op: Operation, x: Attribute, y: Attribute, result: Attribute) -> None:
    """The result takes the shape of the operands: a tile if any operand is one, else a vector.
    Tiles have the result's shape; a vector on a tile has one value per row (axis row) or per
    column (axis col); vectors on a vector have its length; a scalar goes anywhere."""
    check_elementwise_operand(op, "operand x", x)
    check_elementwise_operand(op, "operand y", y)
    owner = _shape_owner(x, y)
    if owner is None:
        raise IRError(op, f"operands {x} and {y} are scalars: kt ops compute on register "
                          f"tiles and vectors (scalars use arith)")
    if type(result) is not type(owner) or shape_of(result) != shape_of(owner):
        raise IRError(op, f"the result {result} does not have the shape of its operands "
                          f"({x} and {y}): an elementwise op keeps its operands' shape")
    for what, ty in (("operand x", x), ("operand y", y)):
        _check_fits(op, what, ty, result)


def _shape_owner(x: Attribute, y: Attribute) -> Attribute | None:
    for kind in (RegTileType, RegVecType):
        for ty in (x, y):
            if isinstance(ty, kind):
                return ty
    return None


def _check_fits(op: Operation, what: str, ty: Attribute, result: Attribute) -> None:
    """`ty` broadcasts onto a result of type `result`."""
    if isinstance(ty, RegTileType):
        if ty.shape != result.shape:  # type: ignore[attr-defined]
            raise IRError(op, f"{what} {ty} and the result {result} differ in shape: "
                              f"elementwise tiles have one shape")
    elif isinstance(ty, RegVecType) and isinstance(result, RegTileType):
        axis = ty.axis.data
        want = result.rows.data if axis == "row" else result.cols.data
        if ty.length.data != want:
            side = "rows" if axis == "row" else "columns"
            raise IRError(op, f"{what} {ty} is a {axis} vector of {ty.length.data}, but the "
                              f"tile {result} has {want} {side}: a {axis} vector holds one "
                              f"value per tile {side[:-1]}")
    elif isinstance(ty, RegVecType) and ty.length != result.length:  # type: ignore[attr-defined]
        raise IRError(op, f"{what} {ty} and the result {result} differ in length")


def check_binary_dtype(op: Operation, x: Attribute, y: Attribute, result: Attribute,
                       rule: str) -> None:
    """rule "compare": an i1 mask; "bitwise": integers or masks; "arithmetic": one operand's
    dtype, or the promotion of mixed ones (fp32 when either is a float, else i32)."""
    dx, dy, dr = dtype_of(x), dtype_of(y), dtype_of(result)
    fn = op.fn.data  # type: ignore[attr-defined]
    if rule == "compare" and dr != dtypes.i1:
        raise IRError(op, f"the result of {fn} is {result}; a comparison gives an i1 mask")
    if rule == "bitwise" and "float" in (dx.kind, dy.kind, dr.kind):  # type: ignore[union-attr]
        raise IRError(op, f"{fn} of {x} and {y} into {result}: {fn} takes integers or masks "
                          f"(i1), not floats")
    if rule != "arithmetic":
        return
    floats = "float" in (dx.kind, dy.kind)  # type: ignore[union-attr]
    allowed = {dx, dy, dtypes.fp32 if floats else dtypes.i32}
    if dr not in allowed:
        names = ", ".join(sorted(d.ir for d in allowed))  # type: ignore[union-attr]
        raise IRError(op, f"the result {result} of {fn} on {x} and {y} has element type "
                          f"{dr.ir}; it must be one of {names}")  # type: ignore[union-attr]


def check_select(op: Operation, cond: Attribute, x: Attribute, y: Attribute,
                 result: Attribute) -> None:
    """A mask chooses between x and y element by element: mask, choices and result share one
    shape, and the result has x's type."""
    check_register(op, "the condition", cond)
    if dtype_of(cond) != dtypes.i1:
        raise IRError(op, f"the condition {cond} must be an i1 mask (a comparison's result)")
    if type(result) is not type(cond) or shape_of(result) != shape_of(cond):
        raise IRError(op, f"the result {result} and the condition {cond} differ in shape")
    for what, ty in (("x", x), ("y", y)):
        check_register(op, what, ty)
        if type(ty) is not type(result) or shape_of(ty) != shape_of(result):
            raise IRError(op, f"{what} {ty} and the result {result} differ in shape")
    if not same_register_form(x, result):
        raise IRError(op, f"the result {result} is not of x's type {x}")


def check_cast(op: Operation, x: Attribute, result: Attribute) -> None:
    """A cast changes the element type only: kind, shape and layout (or axis) stay."""
    check_register(op, "the operand", x)
    check_register(op, "the result", result)
    same_kind = type(x) is type(result) and shape_of(x) == shape_of(result)
    if isinstance(x, RegTileType) and same_kind:
        same_kind = x.layout == result.layout  # type: ignore[attr-defined]
    if isinstance(x, RegVecType) and same_kind:
        same_kind = x.axis == result.axis  # type: ignore[attr-defined]
    if not same_kind:
        raise IRError(op, f"casts {x} to {result}: a cast changes the element type only, "
                          f"never the shape, layout or axis")


# ---- reductions and whole-value ops -------------------------------------------------------------

def check_reduce(op: Operation, axis: str, x: Attribute, result: Attribute) -> None:
    """A tile reduced along axis row gives a row vector of its rows' length, along col a col
    vector of its columns' (fp32, or i32 for integer tiles); a float vector or float tile
    reduced with axis all gives an f32 scalar. A flat tile reduces with axis all only."""
    if isinstance(x, RegVecType):
        _check_vector_reduce(op, axis, x, result)
        return
    if not isinstance(x, RegTileType):
        raise IRError(op, f"the operand is {x}; it reduces a register tile or vector")
    if axis == "all":
        _check_vector_reduce(op, axis, x, result)
        return
    if axis not in ("row", "col"):
        raise IRError(op, f"axis {axis!r} of tile {x}: a tile reduces along \"row\" (one value "
                          f"per row), \"col\" (one value per column) or \"all\" (a scalar)")
    refuse_flat(op, f"a {axis} reduction", x)
    length = x.rows.data if axis == "row" else x.cols.data
    acc = dtypes.fp32 if dtype_of(x).kind == "float" else dtypes.i32  # type: ignore[union-attr]
    fits = (isinstance(result, RegVecType) and result.length.data == length
            and result.axis.data == axis and dtype_of(result) == acc)
    if not fits:
        raise IRError(op, f"reducing {x} along {axis} gives !kt.rv<{length}x{acc.ir}, {axis}>, "
                          f"not {result}")


def _check_vector_reduce(op: Operation, axis: str, x: Attribute, result: Attribute) -> None:
    if axis != "all":
        raise IRError(op, f"axis {axis!r} of vector {x}: a vector reduces with axis \"all\" "
                          f"to a scalar")
    if dtype_of(x).kind != "float":  # type: ignore[union-attr]
        raise IRError(op, f"reduces {x} to a scalar: a reduction to a scalar needs float "
                          f"elements")
    if not isinstance(result, Float32Type):
        raise IRError(op, f"reducing {x} with axis all gives f32, not {result}")


def check_block_reduce(op: Operation, x: Attribute, result: Attribute) -> None:
    """Each warp contributes a register tile, a register vector or an f32 scalar, and gets
    one of that type."""
    if not isinstance(x, (RegTileType, RegVecType, Float32Type)):
        raise IRError(op, f"the operand is {x}; a group reduce combines a register tile, a "
                          f"register vector or an f32 scalar across warps")
    if isinstance(x, RegTileType) and same_register_form(x, result):
        return   # a tile keeps its form; its fragment tag is the fragments pass's
    if result != x:
        raise IRError(op, f"the result {result} is not of the operand's type {x}")


def check_keeps_type(op: Operation, x: Attribute, result: Attribute) -> None:
    if not same_register_form(x, result):
        raise IRError(op, f"the result {result} is not of the operand's type {x}")


def check_rand(op: Operation, seed: Attribute, offsets: Attribute, result: Attribute) -> None:
    """Philox draws: an i64 seed, i32 offsets, fp32 results of the offsets' shape."""
    if not (isinstance(seed, IntegerType) and seed.width.data == 64):
        raise IRError(op, f"the seed is {seed}; it must be i64")
    check_register(op, "the offsets", offsets)
    if dtype_of(offsets) != dtypes.i32:
        raise IRError(op, f"the offsets {offsets} must be i32")
    check_register(op, "the result", result)
    same = type(result) is type(offsets) and shape_of(result) == shape_of(offsets)
    if not same or dtype_of(result) != dtypes.fp32:
        raise IRError(op, f"the result {result} must be f32 of the offsets' shape "
                          f"({offsets})")


def check_choice(op: Operation, what: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise IRError(op, f"{what} {value!r} is not one of {', '.join(choices)}")


# ---- the flat layout ------------------------------------------------------------------------

FLAT_USES = ("loads and stores of global memory, elementwise math and casts with scalars and "
             "tiles of the same layout, iota, masks, rand, and whole-tile reductions "
             "(hk.sum / hk.max / hk.min of the tile)")


def refuse_flat(op: Operation, what: str, *types: Attribute) -> None:
    """A flat-layout tile (memory order: eight row-contiguous elements per lane unit) has no MMA
    fragment, row/column vector form or shared-memory form: `what` needs one of those."""
    for ty in types:
        if isinstance(ty, RegTileType) and ty.layout.data == "flat":
            raise IRError(op, f"{what} cannot take the flat-layout tile {ty}: a flat tile "
                              f"serves {FLAT_USES}",
                          hint="load the tile in layout \"row\" (hk.RT(dtype, rows, cols)) "
                               "for this, or reduce the whole tile with hk.sum(tile)")


def refuse_flat_with_vector(op: Operation, *types: Attribute) -> None:
    """A vector broadcast against a flat tile: refused (the vector's lane form follows the row
    and col layouts)."""
    if any(isinstance(t, RegVecType) for t in types):
        refuse_flat(op, "broadcasting a register vector", *types)
