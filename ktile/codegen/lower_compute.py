"""Lowerings of compute ops: MMA, elementwise maps, reductions, constructors, masks, draws.

Every one is a destination-first call writing a fresh declared value, `T vN; kt::fn(vN, ...);`,
whether vN is a tile, a vector or a scalar (the headers overload each function on all three).
"""
from __future__ import annotations

from ..ir import elementwise
from ..ir import ops as kt
from ..ir.ops_pipeline import role_warps
from .cpp_types import float_literal
from ..ir.types import RegTileType
from .emitter import Emitter, missing_lowering
from .lower_pipeline import written_by_tensor_copies
from .lower_shared import lower_tile_block_reduce

# IR function name → header function name, from the functions' table (C++ keywords `not`,
# `and`, `or` are renamed there)
UNARY_FUNCTIONS = {f.name: f.cpp for f in elementwise.UNARY}
BINARY_FUNCTIONS = {f.name: f.cpp for f in elementwise.BINARY}
# reduce axis → function prefix: "row" gives one value per row, "all" a scalar of a vector
# (of a whole tile: kt::tile_<kind>)
REDUCE_PREFIXES = {"row": "kt::row_", "col": "kt::col_", "all": "kt::vec_"}


def _call(e: Emitter, op, function: str, *operands) -> None:
    args = e.names([op.result, *operands])
    e.define_by_call(op, op.result, f"{function}({args})")


def _named(e: Emitter, op, table: dict[str, str], key: str) -> str:
    function = table.get(key)
    if function is None:
        raise missing_lowering(op, e.target, f"function {key!r}")
    return function


def lower_mma(e: Emitter, op: kt.MmaOp) -> None:
    _call(e, op, f"kt::mma_{op.prop_str('variant')}", op.a, op.b, op.acc)


def lower_mma_shared(e: Emitter, op: kt.MmaSharedOp) -> None:
    """The warp count is a template argument: on sm_90a whole warpgroups (warps % 4 == 0)
    issue wgmma, other blocks mma.sync; the AMD headers ignore it."""
    warps = role_warps(op) or e.warps      # a pipeline role's warps, else the block's
    # shared operands only TMA writes (a register a is none): no proxy fence before the
    # wgmma (lower_pipeline.py)
    shared = (op.a, op.b) if op.a_shared else (op.b,)
    fence = ", false" if all(map(written_by_tensor_copies, shared)) else ""
    function = "kt::mma_AB_shared" if op.b_kn else "kt::mma_ABt_shared"   # `a @ s`, `a @ s.T`
    _call(e, op, f"{function}<{warps}{fence}>", op.a, op.b, op.acc)


def lower_unary(e: Emitter, op: kt.UnaryOp) -> None:
    _call(e, op, _named(e, op, UNARY_FUNCTIONS, op.prop_str("fn")), op.x)


def lower_binary(e: Emitter, op: kt.BinaryOp) -> None:
    _call(e, op, _named(e, op, BINARY_FUNCTIONS, op.prop_str("fn")), op.x, op.y)


def lower_select(e: Emitter, op: kt.SelectOp) -> None:
    _call(e, op, "kt::select", op.cond, op.x, op.y)


def lower_cast(e: Emitter, op: kt.CastOp) -> None:
    _call(e, op, "kt::cast", op.x)


def lower_reduce(e: Emitter, op: kt.ReduceOp) -> None:
    axis = op.prop_str("axis")
    whole_tile = axis == "all" and isinstance(op.x.type, RegTileType)
    prefix = "kt::tile_" if whole_tile else _named(e, op, REDUCE_PREFIXES, axis)
    _call(e, op, prefix + op.prop_str("kind"), op.x)


def lower_block_reduce(e: Emitter, op: kt.BlockReduceOp) -> None:
    """The warp count is a template argument: the header sizes its cross-warp scratch and
    unrolls the fixed-order combine with it. A register tile's reduction is lower_shared's."""
    if isinstance(op.x.type, RegTileType):
        lower_tile_block_reduce(e, op)
        return
    _call(e, op, f"kt::block_reduce_{op.prop_str('kind')}<{e.warps}>", op.x)


def lower_fill(e: Emitter, op: kt.FillOp) -> None:
    value = float_literal(op.prop_float("value"))
    e.define_by_call(op, op.result, f"kt::fill({e.name(op.result)}, {value})")


def lower_iota(e: Emitter, op: kt.IotaOp) -> None:
    axis = op.prop_str("axis")
    e.define_by_call(op, op.result, f"kt::iota<kt::{axis}_axis>({e.name(op.result)})")


def lower_causal_mask(e: Emitter, op: kt.CausalMaskOp) -> None:
    args = e.names([op.result, op.x, op.row0, op.col0])
    fill = float_literal(op.prop_float("fill"))
    e.define_by_call(op, op.result, f"kt::causal_mask({args}, {fill})")


def lower_rand(e: Emitter, op: kt.RandOp) -> None:
    _call(e, op, "kt::rand4" if kt.rand_counter(op) == "quad" else "kt::rand", op.seed,
          op.offsets)


COMPUTE_LOWERINGS = {
    kt.MmaOp: lower_mma,
    kt.MmaSharedOp: lower_mma_shared,
    kt.UnaryOp: lower_unary,
    kt.BinaryOp: lower_binary,
    kt.SelectOp: lower_select,
    kt.CastOp: lower_cast,
    kt.ReduceOp: lower_reduce,
    kt.BlockReduceOp: lower_block_reduce,
    kt.FillOp: lower_fill,
    kt.IotaOp: lower_iota,
    kt.CausalMaskOp: lower_causal_mask,
    kt.RandOp: lower_rand,
}
