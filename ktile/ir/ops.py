"""The kt dialect's operations.

Each op states its operands, results and properties; `verify_` checks what the IR alone can
(shapes and element types). Checks that need a target or the whole kernel live in the passes.
The tracer never builds these classes itself: it goes through `ktile.ir.emit`.
"""
from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (ArrayAttr, Float64Type, FloatAttr, IndexType, IntegerAttr, IntegerType,
                                   StringAttr, i64)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (AttrSizedOperandSegments, IRDLOperation, irdl_op_definition, operand_def,
                       opt_prop_def, prop_def, result_def, traits_def, var_operand_def)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .types import GlobalType, RegTileType, RegVecType, SharedTileType, SharedVecType

UNARY_FNS = ("neg", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "silu", "gelu", "relu", "abs",
             "sin", "cos", "tanh", "sigmoid", "recip", "not")
BINARY_FNS = ("add", "sub", "mul", "div", "max", "min", "pow", "eq", "ne", "lt", "le", "gt", "ge",
              "and", "or")
COMPARE_FNS = ("eq", "ne", "lt", "le", "gt", "ge")
REDUCE_KINDS = ("sum", "max", "min")
MMA_VARIANTS = ("AB", "ABt", "AtB", "AtBt")


def _str(value: str) -> StringAttr:
    return StringAttr(value)


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def _float(value: float) -> FloatAttr:
    return FloatAttr(float(value), Float64Type())


class KtOp(IRDLOperation):
    """Common accessors for kt ops."""

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


# ---- global memory -------------------------------------------------------------------------

@irdl_op_definition
class LoadOp(KtOp):
    """Global → register. Tile coordinates (batch, depth, row tile, col tile); a vector reads
    row `row` (in elements) and column tile `col`. Elements outside the global read `pad`."""
    name = "kt.load"
    src = operand_def(GlobalType)
    coords = var_operand_def(IndexType)
    pad = prop_def(FloatAttr)
    result = result_def()

    def __init__(self, src: SSAValue, coords: Sequence[SSAValue], result_type: Attribute,
                 pad: float = 0.0):
        super().__init__(operands=[src, list(coords)], properties={"pad": _float(pad)},
                         result_types=[result_type])

    def verify_(self) -> None:
        _check_coords(self, self.coords)
        if not isinstance(self.result.type, (RegTileType, RegVecType)):
            raise VerifyException("kt.load produces a register tile or vector")


@irdl_op_definition
class StoreOp(KtOp):
    """Register → global; elements outside the global are not written."""
    name = "kt.store"
    dst = operand_def(GlobalType)
    coords = var_operand_def(IndexType)
    value = operand_def()

    def __init__(self, dst: SSAValue, coords: Sequence[SSAValue], value: SSAValue):
        super().__init__(operands=[dst, list(coords), value])

    def verify_(self) -> None:
        _check_coords(self, self.coords)
        if not isinstance(self.value.type, (RegTileType, RegVecType)):
            raise VerifyException("kt.store writes a register tile or vector")


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
        if self.rows.type.length.data != self.result.type.rows.data:
            raise VerifyException("kt.gather: one index per result row")


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
        if self.rows.type.length.data != self.value.type.rows.data:
            raise VerifyException("kt.scatter: one index per value row")


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
        if not isinstance(self.result.type, (SharedTileType, SharedVecType)):
            raise VerifyException("kt.alloc produces a shared tile or vector")


@irdl_op_definition
class CopyAsyncOp(KtOp):
    """Global → shared, by every warp of the block together, asynchronously: the data is
    there only after a `kt.wait_for` naming `dst` (counter "vm"). A TMA copy (sm_90a) has
    `map`, the kernel's tensor map it uses (tensor-maps), and `arrival`, its tile's mbarrier
    slot (lds-alloc): it completes on that mbarrier, not on the counter."""
    name = "kt.copy_async"
    src = operand_def(GlobalType)
    coords = var_operand_def(IndexType)
    dst = operand_def()
    arrival = opt_prop_def(IntegerAttr)
    map = opt_prop_def(IntegerAttr)

    def __init__(self, src: SSAValue, coords: Sequence[SSAValue], dst: SSAValue):
        super().__init__(operands=[src, list(coords), dst])

    def verify_(self) -> None:
        _check_coords(self, self.coords)
        if not isinstance(self.dst.type, (SharedTileType, SharedVecType)):
            raise VerifyException("kt.copy_async writes a shared tile or vector")


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
        tiles = isinstance(src, SharedTileType) and isinstance(res, RegTileType)
        vectors = isinstance(src, SharedVecType) and isinstance(res, RegVecType)
        if not (tiles or vectors):
            raise VerifyException("kt.lds_load reads a shared tile into a register tile, or "
                                  "a shared vector into a register vector")
        grid = subtile_grid(src, res)
        if grid is None:
            raise VerifyException(f"kt.lds_load: the result's shape {_shape_words(res)} does "
                                  f"not divide the source's {_shape_words(src)}")
        for name, value, count in (("row", self.row, grid[0]), ("col", self.col, grid[1])):
            known = constant_int(value)
            if known is not None and not 0 <= known < count:
                raise VerifyException(f"kt.lds_load: {name} {known} is outside the source, "
                                      f"whose {name}s of sub-tiles are [0, {count})")


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
    """Register → shared (this warp's tile); other warps see it after a barrier."""
    name = "kt.lds_store"
    dst = operand_def()
    value = operand_def()

    def __init__(self, dst: SSAValue, value: SSAValue):
        super().__init__(operands=[dst, value])


@irdl_op_definition
class WaitForOp(KtOp):
    """Wait until the named tiles' asynchronous writes are done. `waits` derives the counts:
    at most `vm` global→shared copies and `lds` shared→register loads may stay in flight, and
    `arrivals` lists the mbarrier slots of the TMA copies it completes."""
    name = "kt.wait_for"
    tiles = var_operand_def()
    vm = opt_prop_def(IntegerAttr)
    lds = opt_prop_def(IntegerAttr)
    arrivals = opt_prop_def(ArrayAttr)

    def __init__(self, tiles: Sequence[SSAValue]):
        super().__init__(operands=[list(tiles)])


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
        if variant not in MMA_VARIANTS:
            raise VerifyException(f"kt.mma variant must be one of {MMA_VARIANTS}")
        m, n, k = mma_dims(variant, self.a.type.shape, self.b.type.shape)
        if k is None:
            raise VerifyException(f"kt.mma {variant}: inner dimensions differ "
                                  f"({self.a.type.shape} and {self.b.type.shape})")
        if self.acc.type.shape != (m, n):
            raise VerifyException(f"kt.mma {variant}: accumulator is {self.acc.type.shape}, "
                                  f"product is {(m, n)}")


@irdl_op_definition
class MmaSharedOp(KtOp):
    """acc + a · bᵀ, accumulating in fp32, with `b` read from a shared tile: a is this warp's
    M×K register tile (row layout), b the block's N×K shared tile (K contiguous), read whole.
    Each warp multiplies its own a by the same b; every warp of the block executes the op
    together (on sm_90a a warpgroup's four warps issue one `wgmma` over their stacked a rows),
    so `verify` refuses it under warp-dependent control flow."""
    name = "kt.mma_shared"
    a = operand_def(RegTileType)
    b = operand_def(SharedTileType)
    acc = operand_def(RegTileType)
    result = result_def(RegTileType)

    def __init__(self, a: SSAValue, b: SSAValue, acc: SSAValue):
        super().__init__(operands=[a, b, acc], result_types=[acc.type])

    def verify_(self) -> None:
        (m, k), (n, kb) = self.a.type.shape, self.b.type.shape
        if k != kb:
            raise VerifyException(f"kt.mma_shared: a is {m}x{k} but the shared b is {n}x{kb}: "
                                  f"their K (columns) differ")
        if self.acc.type.shape != (m, n):
            raise VerifyException(f"kt.mma_shared: accumulator is {self.acc.type.shape}, "
                                  f"product is {(m, n)}")


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
        if self.fn.data not in UNARY_FNS:
            raise VerifyException(f"kt.unary: unknown function {self.fn.data!r}")


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
        if self.fn.data not in BINARY_FNS:
            raise VerifyException(f"kt.binary: unknown function {self.fn.data!r}")


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


@irdl_op_definition
class CastOp(KtOp):
    name = "kt.cast"
    x = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, x: SSAValue, result_type: Attribute):
        super().__init__(operands=[x], result_types=[result_type])


@irdl_op_definition
class ReduceOp(KtOp):
    """A tile reduced along its columns (axis "row": one value per row) or rows (axis "col"),
    or a vector reduced to a scalar (axis "all")."""
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
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(f"kt.reduce: unknown kind {self.kind.data!r}")


@irdl_op_definition
class BlockReduceOp(KtOp):
    """Cross-warp combine: every warp gets the reduction of all warps' values (in warp order,
    so the result is the same run to run)."""
    name = "kt.block_reduce"
    kind = prop_def(StringAttr)
    x = operand_def()
    result = result_def()

    def __init__(self, kind: str, x: SSAValue):
        super().__init__(operands=[x], properties={"kind": _str(kind)}, result_types=[x.type])


@irdl_op_definition
class FillOp(KtOp):
    name = "kt.fill"
    value = prop_def(FloatAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, value: float, result_type: Attribute):
        super().__init__(properties={"value": _float(value)}, result_types=[result_type])


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


@irdl_op_definition
class RandOp(KtOp):
    """Uniform [0, 1) floats from Philox-4x32-10 at (seed, offset), the draws of Triton's
    `tl.rand(seed, offsets)`."""
    name = "kt.rand"
    seed = operand_def(IntegerType)
    offsets = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, seed: SSAValue, offsets: SSAValue, result_type: Attribute):
        super().__init__(operands=[seed, offsets], result_types=[result_type])


def _check_coords(op: IRDLOperation, coords) -> None:
    if len(coords) != 4:
        raise VerifyException(f"{op.name} takes 4 coordinates (batch, depth, row, col), "
                              f"got {len(coords)}")


OPS = [BlockIdxOp, WarpIdOp, ExtentOp, LoadOp, StoreOp, GatherOp, ScatterOp, AllocOp,
       CopyAsyncOp, LdsLoadOp, LdsStoreOp, WaitForOp, BarrierOp, MmaOp, MmaSharedOp, UnaryOp,
       BinaryOp, SelectOp, CastOp, ReduceOp, BlockReduceOp, FillOp, IotaOp, CausalMaskOp, RandOp]
