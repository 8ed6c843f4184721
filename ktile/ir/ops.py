"""The kt dialect's operations.

Each op states its operands, results and properties; `verify_` checks what the IR alone can
(shapes and element types). Checks that need a target or the whole kernel live in the passes.
The tracer never builds these classes itself: it goes through `ktile.ir.emit`.
"""
from __future__ import annotations

import struct
from collections.abc import Sequence
from functools import lru_cache

from xdsl.dialects import arith
from xdsl.dialects.builtin import (ArrayAttr, Float64Type, FloatAttr, IndexType, IntegerAttr, IntegerType,
                                   StringAttr, i64)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (AttrSizedOperandSegments, IRDLOperation, irdl_op_definition, operand_def,
                       opt_prop_def, prop_def, result_def, traits_def, var_operand_def)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from . import elementwise
from . import verifiers as check
from .types import GlobalType, RegTileType, RegVecType, SharedTileType, SharedVecType
from .verifiers import IRError

# The elementwise functions and their dtype rules, from their one table (ir/elementwise.py).
UNARY_FNS = tuple(f.name for f in elementwise.UNARY)
BINARY_FNS = tuple(f.name for f in elementwise.BINARY)
COMPARE_FNS = elementwise.names_with_rule("compare")
BITWISE_FNS = elementwise.names_with_rule("bitwise")
# What a unary function's operand holds: "mask" (i1), "number" (float or integer) or "float".
UNARY_OPERANDS = {f.name: f.rule for f in elementwise.UNARY}
REDUCE_KINDS = ("sum", "max", "min")
MMA_VARIANTS = ("AB", "ABt", "AtB", "AtBt")


# An op's property attributes, each made once per process per value: attributes are immutable,
# and making one (with its verifier) costs more than the op that holds it.

@lru_cache(maxsize=None)
def _str(value: str) -> StringAttr:
    return StringAttr(value)


@lru_cache(maxsize=None, typed=True)   # typed: True is not the integer 1 here
def _int(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def _float(value: float) -> FloatAttr:
    """Keyed by the value's bits, so that -0.0 is not 0.0 and each NaN is itself."""
    return _float_of_bits(struct.pack("<d", float(value)))


@lru_cache(maxsize=None)
def _float_of_bits(bits: bytes) -> FloatAttr:
    return FloatAttr(struct.unpack("<d", bits)[0], Float64Type())


class KtOp(IRDLOperation):
    """Common accessors for kt ops, and their verification as a user error."""

    def verify(self, verify_nested_ops: bool = True) -> None:
        """xDSL's checks of the op's definition (operand count and kinds, properties), then
        the op's own relations (`verify_`); a failure of either is an IRError, a KernelError
        at the op."""
        try:
            super().verify(verify_nested_ops)
        except IRError:
            raise
        except VerifyException as err:
            raise IRError(self, str(err).strip()) from None

    def prop_str(self, name: str) -> str:
        return self.properties[name].data  # type: ignore[attr-defined]

    def prop_int(self, name: str) -> int | None:
        attr = self.properties.get(name)
        return None if attr is None else attr.value.data  # type: ignore[attr-defined]

    def prop_float(self, name: str) -> float:
        return self.properties[name].value.data  # type: ignore[attr-defined]


# ---- scalars the hardware gives ------------------------------------------------------------

@irdl_op_definition
class BlockIdxOp(KtOp):
    name = "kt.block_idx"
    dim = prop_def(IntegerAttr)
    result = result_def(IndexType)
    traits = traits_def(Pure())

    def __init__(self, dim: int):
        super().__init__(properties={"dim": _int(dim)}, result_types=[IndexType()])

    def verify_(self) -> None:
        check.check_dim(self, self.dim.value.data, ("x", "y", "z"))


@irdl_op_definition
class WarpIdOp(KtOp):
    name = "kt.warp_id"
    result = result_def(IndexType)
    traits = traits_def(Pure())

    def __init__(self):
        super().__init__(result_types=[IndexType()])


@irdl_op_definition
class ExtentOp(KtOp):
    """One extent of a global: dim 0 batch, 1 depth, 2 rows, 3 cols."""
    name = "kt.extent"
    src = operand_def(GlobalType)
    dim = prop_def(IntegerAttr)
    result = result_def(IndexType)
    traits = traits_def(Pure())

    def __init__(self, src: SSAValue, dim: int):
        super().__init__(operands=[src], properties={"dim": _int(dim)}, result_types=[IndexType()])

    def verify_(self) -> None:
        check.check_dim(self, self.dim.value.data, ("batch", "depth", "rows", "cols"))


# ---- global memory -------------------------------------------------------------------------

# The units of a global access's coordinates (`unit`; absent: "tile"). In tiles, an R×C tile
# at (b, d, r, c) starts at element row r·R, column c·C (a vector of length L: row r, column
# c·L); in elements it starts at row r, column c. Batch and depth count planes either way.
COORD_UNITS = ("tile", "element")


def _unit_props(unit: str) -> dict[str, Attribute]:
    """The `unit` property: tile coordinates (the default) leave it out, so the IR of every
    kernel that uses only tile coordinates reads as it always has."""
    return {} if unit == "tile" else {"unit": _str(unit)}


def coord_unit(op: Operation) -> str:
    """The units of a kt.load / kt.store / kt.copy_async's coordinates: "tile" or "element"."""
    attr = op.properties.get("unit")
    return "tile" if attr is None else attr.data  # type: ignore[attr-defined]


def coord_scale(op: Operation, ty: Attribute) -> tuple[int, int]:
    """What an access's (row, col) coordinates are multiplied by to give the element where
    its tile or vector of type `ty` starts."""
    if coord_unit(op) == "element":
        return 1, 1
    if isinstance(ty, (RegVecType, SharedVecType)):
        return 1, ty.length.data  # type: ignore[attr-defined]
    return ty.rows.data, ty.cols.data  # type: ignore[attr-defined]


@irdl_op_definition
class LoadOp(KtOp):
    """Global → register. Tile coordinates (batch, depth, row tile, col tile); a vector reads
    row `row` (in elements) and column tile `col`. With `unit = "element"` the coordinates
    are elements: the tile or vector starts at row `row`, column `col` (`coord_scale`).
    Elements outside the global read `pad`."""
    name = "kt.load"
    src = operand_def(GlobalType)
    coords = var_operand_def(IndexType)
    pad = prop_def(FloatAttr)
    unit = opt_prop_def(StringAttr)
    result = result_def()

    def __init__(self, src: SSAValue, coords: Sequence[SSAValue], result_type: Attribute,
                 pad: float = 0.0, unit: str = "tile"):
        super().__init__(operands=[src, list(coords)],
                         properties={"pad": _float(pad), **_unit_props(unit)},
                         result_types=[result_type])

    def verify_(self) -> None:
        check.check_coords(self, self.coords, self.unit)
        check.check_register(self, "the result", self.result.type)
        check.check_same_element(self, ("the global", self.src.type),
                                 ("the result", self.result.type),
                                 "a load does not convert (kt.cast after it does)")


@irdl_op_definition
class StoreOp(KtOp):
    """Register → global, at coordinates as kt.load's (`unit` too); elements outside the
    global are not written."""
    name = "kt.store"
    dst = operand_def(GlobalType)
    coords = var_operand_def(IndexType)
    value = operand_def()
    unit = opt_prop_def(StringAttr)

    def __init__(self, dst: SSAValue, coords: Sequence[SSAValue], value: SSAValue,
                 unit: str = "tile"):
        super().__init__(operands=[dst, list(coords), value], properties=_unit_props(unit))

    def verify_(self) -> None:
        check.check_coords(self, self.coords, self.unit)
        check.check_register(self, "the stored value", self.value.type)
        check.check_same_element(self, ("the stored value", self.value.type),
                                 ("the global", self.dst.type),
                                 "a store does not convert (kt.cast before it does)")


@irdl_op_definition
class GatherOp(KtOp):
    """Rows by index: row i of the result is row `rows[i]` of global (batch, depth), column
    tile `col`. A negative or out-of-range index reads zeros."""
    name = "kt.gather"
    src = operand_def(GlobalType)
    batch = operand_def(IndexType)
    depth = operand_def(IndexType)
    rows = operand_def(RegVecType)
    col = operand_def(IndexType)
    result = result_def(RegTileType)

    def __init__(self, src, batch, depth, rows, col, result_type):
        super().__init__(operands=[src, batch, depth, rows, col], result_types=[result_type])

    def verify_(self) -> None:
        check.check_row_indices(self, self.rows.type, ("the result", self.result.type))
        check.refuse_flat(self, "a gather", self.result.type)
        check.check_same_element(self, ("the global", self.src.type),
                                 ("the result", self.result.type), "a gather does not convert")


@irdl_op_definition
class ScatterOp(KtOp):
    """Rows by index: row i of `value` goes to row `rows[i]`; a negative index (a padding
    slot) or one past the global's rows is dropped."""
    name = "kt.scatter"
    dst = operand_def(GlobalType)
    batch = operand_def(IndexType)
    depth = operand_def(IndexType)
    rows = operand_def(RegVecType)
    col = operand_def(IndexType)
    value = operand_def(RegTileType)

    def __init__(self, dst, batch, depth, rows, col, value):
        super().__init__(operands=[dst, batch, depth, rows, col, value])

    def verify_(self) -> None:
        check.check_row_indices(self, self.rows.type, ("the value", self.value.type))
        check.refuse_flat(self, "a scatter", self.value.type)
        check.check_same_element(self, ("the value", self.value.type),
                                 ("the global", self.dst.type), "a scatter does not convert")


# ---- shared memory, asynchronous copies, waits ---------------------------------------------

@irdl_op_definition
class AllocOp(KtOp):
    """A shared tile or vector for the whole block; `lds-alloc` sets its byte offset and, for a
    tile a TMA copy writes (sm_90a), its mbarrier's `arrival` slot."""
    name = "kt.alloc"
    offset = opt_prop_def(IntegerAttr)
    arrival = opt_prop_def(IntegerAttr)
    result = result_def()

    def __init__(self, result_type: Attribute):
        super().__init__(result_types=[result_type])

    def verify_(self) -> None:
        check.check_shared(self, "the result", self.result.type)


@irdl_op_definition
class CopyAsyncOp(KtOp):
    """Global → shared, by every warp of the block together, asynchronously: the data is
    there only after a `kt.wait_for` naming `dst` (counter "vm"). A TMA copy (sm_90a) has
    `map`, the kernel's tensor map it uses (tensor-maps), and `arrival`, its tile's mbarrier
    slot (lds-alloc): it completes on that mbarrier, not on the counter. Coordinates as
    kt.load's (`unit` too)."""
    name = "kt.copy_async"
    src = operand_def(GlobalType)
    coords = var_operand_def(IndexType)
    dst = operand_def()
    arrival = opt_prop_def(IntegerAttr)
    map = opt_prop_def(IntegerAttr)
    unit = opt_prop_def(StringAttr)

    def __init__(self, src: SSAValue, coords: Sequence[SSAValue], dst: SSAValue,
                 unit: str = "tile"):
        super().__init__(operands=[src, list(coords), dst], properties=_unit_props(unit))

    def verify_(self) -> None:
        check.check_coords(self, self.coords, self.unit)
        check.check_shared(self, "the destination", self.dst.type)
        check.check_same_element(self, ("the global", self.src.type),
                                 ("the destination", self.dst.type), "a copy does not convert")


@irdl_op_definition
class LdsLoadOp(KtOp):
    """Shared → register, asynchronous: usable only after a `kt.wait_for` (counter "lds").
    Reads sub-tile (`row`, `col`) of `src`, in units of the result's shape: rows [row·R,
    row·R+R) and columns [col·C, col·C+C) of an R×C result; a vector of length L reads
    elements [col·L, col·L+L) (`row` is 0). The result's shape divides the source's. A
    coordinate outside `src` is invalid IR when constant, an error in the interpreter, and an
    unchecked read of other shared memory on the hardware. Copies and waits see a read of the
    whole of `src`."""
    name = "kt.lds_load"
    src = operand_def()
    row = operand_def(IndexType)
    col = operand_def(IndexType)
    result = result_def()

    def __init__(self, src: SSAValue, row: SSAValue, col: SSAValue, result_type: Attribute):
        super().__init__(operands=[src, row, col], result_types=[result_type])

    def verify_(self) -> None:
        src, res = self.src.type, self.result.type
        check.refuse_flat(self, "a load from shared memory", res)
        tiles = isinstance(src, SharedTileType) and isinstance(res, RegTileType)
        vectors = isinstance(src, SharedVecType) and isinstance(res, RegVecType)
        if not (tiles or vectors):
            raise IRError(self, f"reads {src} into {res}: a shared tile loads into a register "
                                f"tile, a shared vector into a register vector")
        grid = subtile_grid(src, res)
        if grid is None:
            raise IRError(self, f"the result's shape {_shape_words(res)} does not divide the "
                                f"source's {_shape_words(src)} (result {res}, source {src})")
        check.check_same_element(self, ("the source", src), ("the result", res),
                                 "a shared load does not convert")
        for name, value, count in (("row", self.row, grid[0]), ("col", self.col, grid[1])):
            known = constant_int(value)
            if known is not None and not 0 <= known < count:
                raise IRError(self, f"{name} {known} is outside the source, whose {name}s of "
                                    f"sub-tiles are [0, {count})")


def subtile_grid(src: Attribute, result: Attribute) -> tuple[int, int] | None:
    """How many result-shaped sub-tiles a shared tile or vector holds down and across (a
    vector is one row); None when the result's shape does not divide the source's."""
    if isinstance(src, SharedVecType):
        length, part = src.length.data, result.length.data  # type: ignore[attr-defined]
        return None if length % part else (1, length // part)
    (rows, cols), (r, c) = src.shape, result.shape  # type: ignore[attr-defined]
    return None if rows % r or cols % c else (rows // r, cols // c)


def _shape_words(ty: Attribute) -> str:
    if isinstance(ty, (SharedVecType, RegVecType)):
        return f"{ty.length.data}"
    return f"{ty.rows.data}x{ty.cols.data}"  # type: ignore[attr-defined]


def constant_int(value: SSAValue) -> int | None:
    """The integer `value` holds when an `arith.constant` makes it, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


@irdl_op_definition
class LdsStoreOp(KtOp):
    """Register → shared (this warp's tile); other warps see it after a barrier. Without
    `coords` the value fills the whole of `dst`; with `coords` = (row, col) it writes sub-tile
    (row, col) of `dst` in units of the value's shape, as `kt.lds_load` reads one (a vector:
    elements [col·L, col·L+L), row 0). A constant coordinate outside `dst` is invalid IR; a
    computed one is checked by the interpreter, not by the hardware. Copies and waits see a
    write of the whole of `dst`."""
    name = "kt.lds_store"
    dst = operand_def()
    value = operand_def()
    coords = var_operand_def(IndexType)

    def __init__(self, dst: SSAValue, value: SSAValue, coords: Sequence[SSAValue] = ()):
        super().__init__(operands=[dst, value, list(coords)])

    def verify_(self) -> None:
        check.refuse_flat(self, "a store to shared memory", self.value.type)
        if not self.coords:
            check.check_lds_store(self, self.dst.type, self.value.type)
            return
        check.check_lds_store_subtile(self, self.dst.type, self.value.type, self.coords)


@irdl_op_definition
class LdsSelectOp(KtOp):
    """One shared tile of a list, chosen by an index computed on the device (`bufs[i]`): the
    result is `tiles[index]`, usable wherever a shared tile is. The tiles are one type and
    each is named once. An index outside [0, len(tiles)) is invalid IR when constant, an
    error in the interpreter, and unchecked on the hardware. lds-alloc places the tiles
    contiguously and sets `offset` (the first tile's) and `stride` (bytes from one to the
    next): the translation is base + index × stride. The waits pass treats an access through
    the result as an access to every tile of the list (they may alias)."""
    name = "kt.lds_select"
    index = operand_def(IndexType)
    tiles = var_operand_def()
    offset = opt_prop_def(IntegerAttr)
    stride = opt_prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, tiles: Sequence[SSAValue], index: SSAValue):
        tiles = list(tiles)   # at least one: the front end refuses an empty list
        super().__init__(operands=[index, tiles], result_types=[tiles[0].type])

    def verify_(self) -> None:
        check.check_lds_select(self, [t.type for t in self.tiles], self.result.type,
                               constant_int(self.index))
        check.check_listed_once(self, list(self.tiles))


@irdl_op_definition
class WaitForOp(KtOp):
    """Wait until the named tiles' asynchronous writes are done. `waits` derives the counts:
    at most `vm` global→shared copies, `lds` shared→register loads and `wgmma` groups (sm_90a's
    mma from shared) may stay in flight, and `arrivals` lists the mbarrier slots of the TMA
    copies it completes."""
    name = "kt.wait_for"
    tiles = var_operand_def()
    vm = opt_prop_def(IntegerAttr)
    lds = opt_prop_def(IntegerAttr)
    wgmma = opt_prop_def(IntegerAttr)
    arrivals = opt_prop_def(ArrayAttr)

    def __init__(self, tiles: Sequence[SSAValue]):
        super().__init__(operands=[list(tiles)])

    def verify_(self) -> None:
        check.check_waited(self, self.tiles)


@irdl_op_definition
class BarrierOp(KtOp):
    """All warps of the block meet here; shared-memory writes before it are seen after it."""
    name = "kt.barrier"

    def __init__(self):
        super().__init__()


# ---- compute -------------------------------------------------------------------------------

@irdl_op_definition
class MmaOp(KtOp):
    """acc + op(a) · op(b), accumulating in fp32. variant AB: a is M×K, b is K×N; ABt: b is
    N×K; AtB: a is K×M; AtBt: both transposed."""
    name = "kt.mma"
    a = operand_def(RegTileType)
    b = operand_def(RegTileType)
    acc = operand_def(RegTileType)
    variant = prop_def(StringAttr)
    result = result_def(RegTileType)

    def __init__(self, a: SSAValue, b: SSAValue, acc: SSAValue, variant: str):
        super().__init__(operands=[a, b, acc], properties={"variant": _str(variant)},
                         result_types=[acc.type])

    def verify_(self) -> None:
        variant = self.variant.data
        check.check_choice(self, "variant", variant, MMA_VARIANTS)
        a, b, acc = self.a.type, self.b.type, self.acc.type
        check.refuse_flat(self, "an MMA", a, b, acc)
        m, n, k = mma_dims(variant, a.shape, b.shape)
        if k is None:
            raise IRError(self, f"variant {variant}: the inner dimensions of a {a} and b {b} "
                                f"differ", hint="for C = A·Bᵀ with both row-major use ABt")
        if acc.shape != (m, n):
            raise IRError(self, f"variant {variant}: the accumulator {acc} is not the "
                                f"product's shape {m}x{n}")
        check.check_mma_operands(self, a, b, acc, self.result.type)
        check.check_mma_layouts(self, variant, a, b)
        check.check_mma_fragments(self, (("a", a), ("b", b), ("acc", acc)))


@irdl_op_definition
class MmaSharedOp(KtOp):
    """acc + a · bᵀ, accumulating in fp32, with `b` read from a shared tile: a is this warp's
    M×K register tile (row layout), b the block's N×K shared tile (K contiguous), read whole.
    `a` may be a shared tile too, holding the block's rows (warps × M, K contiguous): warp w
    multiplies its rows [w·M, (w+1)·M) (what `a.load(RT(M, K), row=w)` would give).
    Each warp multiplies its own a by the same b; every warp of the block executes the op
    together (on sm_90a a warpgroup's four warps issue one `wgmma` over their stacked a rows),
    so `verify` refuses it under warp-dependent control flow.
    `variant` "AB" (absent: "ABt"): b holds B as K×N, N contiguous (`a @ s`; sm_90a's wgmma
    reads it N-major, its transposed-B form, 16-bit operands and a register a only)."""
    name = "kt.mma_shared"
    a = operand_def(RegTileType | SharedTileType)
    b = operand_def(SharedTileType)
    acc = operand_def(RegTileType)
    variant = opt_prop_def(StringAttr)
    result = result_def(RegTileType)

    def __init__(self, a: SSAValue, b: SSAValue, acc: SSAValue, variant: str = "ABt"):
        props = {} if variant == "ABt" else {"variant": _str(variant)}
        super().__init__(operands=[a, b, acc], properties=props, result_types=[acc.type])

    @property
    def a_shared(self) -> bool:
        return isinstance(self.a.type, SharedTileType)

    @property
    def b_kn(self) -> bool:
        """Whether b holds B as K×N (N contiguous: `a @ s`) rather than N×K (`a @ s.T`)."""
        return self.variant is not None and self.variant.data == "AB"

    @property
    def b_nk(self) -> tuple[int, int]:
        """(N, K) of the shared b, whichever way it holds B."""
        rows, cols = self.b.type.shape
        return (cols, rows) if self.b_kn else (rows, cols)

    def verify_(self) -> None:
        a, b, acc = self.a.type, self.b.type, self.acc.type
        check.refuse_flat(self, "an MMA", a, acc)
        if self.variant is not None:
            check.check_choice(self, "variant", self.variant.data, ("ABt", "AB"))
        if self.b_kn and self.a_shared:
            raise IRError(self, "variant AB (b as K×N) takes a from registers only")
        (m, k), (n, kb) = a.shape, self.b_nk
        if k != kb:
            raise IRError(self, f"a {a} is {m}x{k} but the shared b {b} is {n}x{kb}: their K "
                                f"(columns) differ")
        if self.a_shared and (acc.shape[1] != n or m % acc.shape[0]):
            raise IRError(self, f"the accumulator {acc} is not a warp's rows of the shared a "
                                f"{a} by the shared b's {n} rows")
        if not self.a_shared and acc.shape != (m, n):
            raise IRError(self, f"the accumulator {acc} is not the product's shape {m}x{n}")
        check.check_mma_operands(self, a, b, acc, self.result.type, b_what="the shared b")
        if not self.a_shared and a.layout.data != "row":
            raise IRError(self, f"a {a} must be in row layout: a @ bᵀ reads a by rows")
        check.check_mma_fragments(self, (("acc", acc),) if self.a_shared else
                                  (("a", a), ("acc", acc)))


def mma_dims(variant: str, a: tuple[int, int], b: tuple[int, int]):
    """(M, N, K) of an MMA variant, K None when the inner dimensions differ."""
    am, ak = (a[1], a[0]) if variant.startswith("At") else a
    bk, bn = (b[1], b[0]) if variant.endswith("Bt") else b
    return am, bn, (ak if ak == bk else None)


@irdl_op_definition
class UnaryOp(KtOp):
    name = "kt.unary"
    fn = prop_def(StringAttr)
    x = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, fn: str, x: SSAValue):
        super().__init__(operands=[x], properties={"fn": _str(fn)}, result_types=[x.type])

    def verify_(self) -> None:
        fn = self.fn.data
        check.check_choice(self, "function", fn, UNARY_FNS)
        check.check_unary(self, self.x.type, self.result.type, UNARY_OPERANDS[fn])


@irdl_op_definition
class BinaryOp(KtOp):
    """Elementwise x ∘ y. y may be a tile of x's shape, a vector broadcast along its axis,
    or a scalar."""
    name = "kt.binary"
    fn = prop_def(StringAttr)
    x = operand_def()
    y = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, fn: str, x: SSAValue, y: SSAValue, result_type: Attribute):
        super().__init__(operands=[x, y], properties={"fn": _str(fn)}, result_types=[result_type])

    def verify_(self) -> None:
        fn = self.fn.data
        check.check_choice(self, "function", fn, BINARY_FNS)
        x, y, result = self.x.type, self.y.type, self.result.type
        check.check_broadcast(self, x, y, result)
        check.refuse_flat_with_vector(self, x, y, result)
        check.check_binary_dtype(self, x, y, result, elementwise.BY_NAME[fn].rule)


@irdl_op_definition
class SelectOp(KtOp):
    name = "kt.select"
    cond = operand_def()
    x = operand_def()
    y = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, cond: SSAValue, x: SSAValue, y: SSAValue):
        super().__init__(operands=[cond, x, y], result_types=[x.type])

    def verify_(self) -> None:
        check.check_select(self, self.cond.type, self.x.type, self.y.type, self.result.type)
        check.refuse_flat_with_vector(self, self.cond.type, self.x.type, self.y.type,
                                      self.result.type)


@irdl_op_definition
class CastOp(KtOp):
    name = "kt.cast"
    x = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, x: SSAValue, result_type: Attribute):
        super().__init__(operands=[x], result_types=[result_type])

    def verify_(self) -> None:
        check.check_cast(self, self.x.type, self.result.type)


@irdl_op_definition
class ReduceOp(KtOp):
    """A tile reduced along its columns (axis "row": one value per row) or rows (axis "col"),
    or a vector or a whole tile reduced to a scalar (axis "all")."""
    name = "kt.reduce"
    kind = prop_def(StringAttr)
    axis = prop_def(StringAttr)
    x = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, kind: str, axis: str, x: SSAValue, result_type: Attribute):
        super().__init__(operands=[x], properties={"kind": _str(kind), "axis": _str(axis)},
                         result_types=[result_type])

    def verify_(self) -> None:
        check.check_choice(self, "kind", self.kind.data, REDUCE_KINDS)
        check.check_reduce(self, self.axis.data, self.x.type, self.result.type)


@irdl_op_definition
class BlockReduceOp(KtOp):
    """Cross-warp combine: every warp gets the reduction of all warps' values, in a fixed
    order so the result is the same run to run: vectors and scalars fold warps 0, 1, ... in
    turn; register tiles combine as a pairwise tree over warps (`tile_reduce_order`) through
    a shared scratch of warps × the tile, whose byte `offset` lds-alloc sets."""
    name = "kt.block_reduce"
    kind = prop_def(StringAttr)
    x = operand_def()
    result = result_def()
    offset = opt_prop_def(IntegerAttr)   # a tile's scratch in shared memory (lds-alloc)

    def __init__(self, kind: str, x: SSAValue):
        super().__init__(operands=[x], properties={"kind": _str(kind)}, result_types=[x.type])

    def verify_(self) -> None:
        check.check_choice(self, "kind", self.kind.data, REDUCE_KINDS)
        check.check_block_reduce(self, self.x.type, self.result.type)
        check.refuse_flat(self, "a cross-warp reduction of a tile (hk.group)", self.x.type)


@irdl_op_definition
class FillOp(KtOp):
    name = "kt.fill"
    value = prop_def(FloatAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, value: float, result_type: Attribute):
        super().__init__(properties={"value": _float(value)}, result_types=[result_type])

    def verify_(self) -> None:
        check.check_register(self, "the result", self.result.type)


@irdl_op_definition
class IotaOp(KtOp):
    """Each element's index within the tile along `axis` ("row" or "col"), or each element's
    index within a vector."""
    name = "kt.iota"
    axis = prop_def(StringAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, axis: str, result_type: Attribute):
        super().__init__(properties={"axis": _str(axis)}, result_types=[result_type])

    def verify_(self) -> None:
        check.check_choice(self, "axis", self.axis.data, ("row", "col"))
        check.check_register(self, "the result", self.result.type)


@irdl_op_definition
class CausalMaskOp(KtOp):
    """x with `fill` where the element's column (col0 + j) is past its row (row0 + i)."""
    name = "kt.causal_mask"
    x = operand_def(RegTileType)
    row0 = operand_def(IndexType)
    col0 = operand_def(IndexType)
    fill = prop_def(FloatAttr)
    result = result_def(RegTileType)
    traits = traits_def(Pure())

    def __init__(self, x, row0, col0, fill: float):
        super().__init__(operands=[x, row0, col0], properties={"fill": _float(fill)},
                         result_types=[x.type])

    def verify_(self) -> None:
        check.check_keeps_type(self, self.x.type, self.result.type)


@irdl_op_definition
class RandOp(KtOp):
    """Uniform [0, 1) floats from Philox-4x32-10 at (seed, offset), the draws of Triton's
    `tl.rand(seed, offsets)`. With `counter = "quad"` (hk.rand4) offset o draws word o & 3 of
    the call at counter o >> 2 (`tl.rand4x(seed, o >> 2)`): four offsets to one call."""
    name = "kt.rand"
    seed = operand_def(IntegerType)
    offsets = operand_def()
    counter = opt_prop_def(StringAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, seed: SSAValue, offsets: SSAValue, result_type: Attribute,
                 counter: str = "element"):
        props = {} if counter == "element" else {"counter": _str(counter)}
        super().__init__(operands=[seed, offsets], properties=props, result_types=[result_type])

    def verify_(self) -> None:
        check.check_rand(self, self.seed.type, self.offsets.type, self.result.type)
        check.check_choice(self, "counter", rand_counter(self), ("element", "quad"))


def rand_counter(op: Operation) -> str:
    """A kt.rand's counter layout: "element" (one Philox call per offset, the default, left
    out of the IR) or "quad" (one call per four offsets)."""
    attr = op.properties.get("counter")
    return "element" if attr is None else attr.data  # type: ignore[attr-defined]


OPS = [BlockIdxOp, WarpIdOp, ExtentOp, LoadOp, StoreOp, GatherOp, ScatterOp, AllocOp,
       CopyAsyncOp, LdsLoadOp, LdsStoreOp, LdsSelectOp, WaitForOp, BarrierOp, MmaOp,
       MmaSharedOp, UnaryOp, BinaryOp, SelectOp, CastOp, ReduceOp, BlockReduceOp, FillOp, IotaOp,
       CausalMaskOp, RandOp]
