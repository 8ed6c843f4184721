"""Lowerings of scalar ops: arith (plain C++ expressions) and what the hardware gives a block
(`kt.block_idx`, `kt.warp_id`, `kt.extent`).

Integer semantics follow arith: `divsi`/`remsi` truncate as C++ `/` and `%` do; `floordivsi`
and `ceildivsi` round as their names say, which C++ operators do not, so they call
`kt::floordiv` / `kt::ceildiv`. Float `maximumf`/`minimumf` propagate NaN (`kt::maximum`).
`fptosi` converts as a tile's `.to(int)` does (truncate, saturate, NaN -> 0), never as a bare
`static_cast`, which is undefined for NaN and out-of-range values.
"""
from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr

from ..ir import ops as kt
from .cpp_types import cpp_type, float_literal, int_literal
from .emitter import Emitter, missing_lowering

_INFIX = {arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*", arith.DivSIOp: "/",
          arith.RemSIOp: "%", arith.AndIOp: "&", arith.OrIOp: "|", arith.XOrIOp: "^",
          arith.ShLIOp: "<<", arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*",
          arith.DivfOp: "/"}
_CALLS = {arith.FloorDivSIOp: "kt::floordiv", arith.CeilDivSIOp: "kt::ceildiv",
          arith.ShRUIOp: "kt::shift_right_logical", arith.MaximumfOp: "kt::maximum",
          arith.MinimumfOp: "kt::minimum"}
_INT_MINMAX = {arith.MaxSIOp: ">", arith.MinSIOp: "<"}
# ordered float predicates are false on NaN, as C++ comparisons are; `une` is true on NaN,
# as C++ `!=` is
_CMPI = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}
_CMPF = {"oeq": "==", "une": "!=", "olt": "<", "ole": "<=", "ogt": ">", "oge": ">="}
_CASTS = (arith.IndexCastOp, arith.SIToFPOp, arith.ExtSIOp, arith.TruncIOp, arith.ExtFOp,
          arith.TruncFOp)
_CPP_FLOATS = ("float", "double")   # C++'s own floats: float_to_int takes them as they are
_BLOCK_IDX = ("kt::block_idx_x()", "kt::block_idx_y()", "kt::block_idx_z()")
_EXTENTS = ("batch", "depth", "rows", "cols")


def lower_constant(e: Emitter, op: arith.ConstantOp) -> None:
    value = op.value
    if isinstance(value, FloatAttr):
        literal = float_literal(value.value.data)
    elif isinstance(value, IntegerAttr):
        literal = int_literal(value.value.data, value.type)
    else:
        raise missing_lowering(op, e.target, f"a constant of {value}")
    e.define_by_value(op, op.result, literal, qualifier="const")


def lower_infix(e: Emitter, op) -> None:
    e.define_by_value(op, op.result, f"{e.name(op.lhs)} {_INFIX[type(op)]} {e.name(op.rhs)}")


def lower_call(e: Emitter, op) -> None:
    e.define_by_value(op, op.result, f"{_CALLS[type(op)]}({e.names([op.lhs, op.rhs])})")


def lower_int_minmax(e: Emitter, op) -> None:
    lhs, rhs = e.name(op.lhs), e.name(op.rhs)
    e.define_by_value(op, op.result, f"{lhs} {_INT_MINMAX[type(op)]} {rhs} ? {lhs} : {rhs}")


def lower_cmpi(e: Emitter, op: arith.CmpiOp) -> None:
    _compare(e, op, _CMPI, arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data])


def lower_cmpf(e: Emitter, op: arith.CmpfOp) -> None:
    _compare(e, op, _CMPF, arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data])


def _compare(e: Emitter, op, table: dict[str, str], predicate: str) -> None:
    infix = table.get(predicate)
    if infix is None:
        raise missing_lowering(op, e.target, f"predicate {predicate}")
    e.define_by_value(op, op.result, f"{e.name(op.lhs)} {infix} {e.name(op.rhs)}")


def lower_select(e: Emitter, op: arith.SelectOp) -> None:
    cond, x, y = (e.name(v) for v in op.operands)
    e.define_by_value(op, op.result, f"{cond} ? {x} : {y}")


def lower_cast(e: Emitter, op) -> None:
    target_type = cpp_type(op.result.type)
    e.define_by_value(op, op.result, f"static_cast<{target_type}>({e.name(op.input)})")


def lower_fptosi(e: Emitter, op: arith.FPToSIOp) -> None:
    """float -> int through kt::detail::float_to_int (ktile/common/conversions.hpp), the one
    definition tiles convert with too; a 16-bit float widens exactly to float first."""
    x = e.name(op.input)
    if cpp_type(op.input.type) not in _CPP_FLOATS:
        x = f"kt::detail::as_float({x})"
    e.define_by_value(op, op.result,
                      f"kt::detail::float_to_int<{cpp_type(op.result.type)}>({x})")


def lower_block_idx(e: Emitter, op: kt.BlockIdxOp) -> None:
    e.define_by_value(op, op.result, _BLOCK_IDX[op.prop_int("dim")])


def lower_warp_id(e: Emitter, op: kt.WarpIdOp) -> None:
    e.define_by_value(op, op.result, "kt::warp_id()")


def lower_extent(e: Emitter, op: kt.ExtentOp) -> None:
    e.define_by_value(op, op.result, f"{e.name(op.src)}.{_EXTENTS[op.prop_int('dim')]}()")


SCALAR_LOWERINGS = {
    arith.ConstantOp: lower_constant,
    **{cls: lower_infix for cls in _INFIX},
    **{cls: lower_call for cls in _CALLS},
    **{cls: lower_int_minmax for cls in _INT_MINMAX},
    arith.CmpiOp: lower_cmpi,
    arith.CmpfOp: lower_cmpf,
    arith.SelectOp: lower_select,
    **{cls: lower_cast for cls in _CASTS},
    arith.FPToSIOp: lower_fptosi,
    kt.BlockIdxOp: lower_block_idx,
    kt.WarpIdOp: lower_warp_id,
    kt.ExtentOp: lower_extent,
}
