"""Lowerings across warps through shared memory: the cross-warp reduction of a register tile.

`kt.block_reduce` of a tile becomes `kt::block_reduce_tile_<kind><WARPS>(dst, x, scratch)`
(include/ktile/common/tile_block_reduce.hpp), its scratch the shared tile of WARPS stacked
tiles that lds-alloc placed at the op's `offset`. Without an offset (the pass has not run) the
scratch is a static `__shared__` tile, so the C++ of an unchecked module still compiles.
"""
from __future__ import annotations

from ..ir import ops as kt
from ..ir import types as irt
from .cpp_types import cpp_type
from .emitter import Emitter


def scratch_type(op: kt.BlockReduceOp, warps: int) -> str:
    """One tile per warp, stacked by rows: kt::st<T, WARPS·R, C>."""
    ty = op.x.type
    rows, cols = ty.shape
    return cpp_type(irt.st(ty.dtype, warps * rows, cols))


def lower_tile_block_reduce(e: Emitter, op: kt.BlockReduceOp) -> None:
    shared = scratch_type(op, e.warps)
    offset = op.prop_int("offset")
    if offset is None:
        scratch = f"{e.name(op.result)}_scratch"
        e.statement(op, f"__shared__ {shared} {scratch};")
    else:
        scratch = f"kt::shared_at<{shared}, {offset}>()"
    function = f"kt::block_reduce_tile_{op.prop_str('kind')}<{e.warps}>"
    e.define_by_call(op, op.result, f"{function}({e.name(op.result)}, {e.name(op.x)}, {scratch})")
