"""Shared memory across warps: sub-tile stores (`kt.lds_store` with coordinates), cross-warp
reductions of register tiles (`kt.block_reduce` of a tile), and a shared tile picked from a
list by a device index (`kt.lds_select`: the chosen buffer itself, so every access through it
is an access to that tile).

A tile reduction combines the warps' tiles as the pairwise tree `tile_reduce_rounds` gives,
rounding to the element type after every combine: the order the C++ headers follow
(`kt::block_reduce_tile_*`), so the interpreter and the GPU agree bit for bit. Whole stores,
and reductions of vectors and scalars, are the handlers of ops_memory and ops_tile.
"""
from __future__ import annotations

import numpy as np

from ..ir import ops as kt
from ..ir.query import error_at, user_op_name
from ..ir.types import RegTileType, SharedVecType
from . import ops_memory, ops_tile
from .memory import copy_in_flight
from .values import element_dtype, result_rounder

COMBINE_STEPS = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def tile_reduce_rounds(warps: int) -> list[list[tuple[int, int]]]:
    """The tree of a tile reduction over `warps` warps: in round k (stride 2^k) warp w, for
    each w a multiple of 2^(k+1) with w + 2^k < warps, combines warp w + 2^k's partial into
    its own (own ⊕ other). After the last round warp 0 holds the result: for 4 warps
    (w0 ⊕ w1) ⊕ (w2 ⊕ w3); for 3, (w0 ⊕ w1) ⊕ w2."""
    rounds, stride = [], 1
    while stride < warps:
        rounds.append([(w, w + stride) for w in range(0, warps, 2 * stride) if w + stride < warps])
        stride *= 2
    return rounds


def tree_combiner(kind: str, dtype):
    """The meeting's combine of the warps' tiles, in the order of `tile_reduce_rounds`."""
    step, rnd = COMBINE_STEPS[kind], result_rounder(dtype)

    def combine(values: list) -> np.ndarray:
        partial = list(values)
        for pairs in tile_reduce_rounds(len(partial)):
            for own, other in pairs:
                partial[own] = rnd(step(partial[own], partial[other]))
        return partial[0]
    return combine


def _block_reduce(op: kt.BlockReduceOp, c):
    """A meeting of all warps; a tile combines as a tree, anything else in warp order."""
    if not isinstance(op.x.type, RegTileType):
        return ops_tile.HANDLERS[kt.BlockReduceOp](op, c)
    x, o = c.slot(op.x), c.slot(op.result)
    combine = tree_combiner(op.kind.data, element_dtype(op.result.type))

    def h(r, w):
        r[o] = yield op, r[x], combine
    return h


def _lds_store(op: kt.LdsStoreOp, c):
    """Sub-tile (row, col) of the shared buffer, in units of the value's shape."""
    if not op.coords:
        return ops_memory.HANDLERS[kt.LdsStoreOp](op, c)
    dst, v, row, col = c.slots_of((op.dst, op.value, *op.coords))
    vector = isinstance(op.dst.type, SharedVecType)
    rows, cols = (1, op.value.type.length.data) if vector else op.value.type.shape
    down, across = kt.subtile_grid(op.dst.type, op.value.type)

    def h(r, w):
        buf, i, j = r[dst], r[row], r[col]
        if buf.inflight:
            raise copy_in_flight(op, "written")
        if not (0 <= i < down and 0 <= j < across):
            raise store_outside(op, i, j, (down, across))
        buf.data[i * rows:i * rows + rows, j * cols:j * cols + cols] = r[v]
    return h


def store_outside(op: kt.LdsStoreOp, row: int, col: int, grid: tuple[int, int]):
    """A sub-tile store's coordinates, computed on the device, fall outside its tile."""
    return error_at(op, f"sub-tile store at (row {row}, col {col}) is outside the shared "
                        f"{'vector' if grid[0] == 1 else 'tile'}, which holds {grid[0]}x"
                        f"{grid[1]} parts of the stored value's shape",
                    what=user_op_name(op),
                    hint=f"keep row in [0, {grid[0]}) and col in [0, {grid[1]}): on the GPU "
                         f"a store outside overwrites other shared memory")


def _lds_select(op: kt.LdsSelectOp, c):
    """The block's buffer of tile `index`; an index outside the list is the author's error."""
    index, o = c.slot(op.index), c.slot(op.result)
    tiles = c.slots_of(op.tiles)

    def h(r, w):
        i = r[index]
        if not 0 <= i < len(tiles):
            raise select_outside(op, i, len(tiles))
        r[o] = r[tiles[i]]
    return h


def select_outside(op: kt.LdsSelectOp, index: int, count: int):
    """A list index computed on the device falls outside the list."""
    return error_at(op, f"index {index} is outside the list of {count} shared tiles it picks "
                        f"from", what="shared tile list index",
                    hint=f"keep the index in [0, {count}) (k % {count} for a loop counter k): "
                         f"on the GPU an index outside reads and writes other shared memory")


HANDLERS = {kt.LdsStoreOp: _lds_store, kt.BlockReduceOp: _block_reduce,
            kt.LdsSelectOp: _lds_select}
