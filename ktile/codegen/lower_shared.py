"""Lowerings across warps through shared memory: the cross-warp reduction of a register tile,
and a shared tile picked from a list by a device index.

`kt.block_reduce` of a tile becomes `kt::block_reduce_tile_<kind><WARPS>(dst, x, scratch)`
(include/ktile/common/tile_block_reduce.hpp), its scratch the shared tile of WARPS stacked
tiles that lds-alloc placed at the op's `offset`. Without an offset (the pass has not run) the
scratch is a static `__shared__` tile, so the C++ of an unchecked module still compiles.

`kt.lds_select` becomes a reference, `S& vN = kt::shared_index<S, OFFSET, STRIDE>(i);`
(include/ktile/common/shared_list.hpp): base + index × stride over the list lds-alloc laid out
as one block. Without its placement (the pass has not run) it picks among the tiles' own
variables, `*(i == 0 ? &v1 : &v2)`, which any layout allows.
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


def lower_lds_select(e: Emitter, op: kt.LdsSelectOp) -> None:
    shared = cpp_type(op.result.type)
    offset, stride = op.prop_int("offset"), op.prop_int("stride")
    index, name = e.name(op.index), e.name(op.result)
    if offset is None or stride is None:
        e.statement(op, f"{shared}& {name} = *({_pointer_choice(e, op)});")
        return
    e.statement(op, f"{shared}& {name} = kt::shared_index<{shared}, {offset}, {stride}>({index});")


def _pointer_choice(e: Emitter, op: kt.LdsSelectOp) -> str:
    """`i == 0 ? &v1 : i == 1 ? &v2 : &v3`: the last tile for any index past the others."""
    index, tiles = e.name(op.index), [e.name(t) for t in op.tiles]
    choices = [f"{index} == {k} ? &{t} : " for k, t in enumerate(tiles[:-1])]
    return "".join(choices) + f"&{tiles[-1]}"
