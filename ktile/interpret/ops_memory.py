"""Memory ops: global loads and stores (by tile or by row index), shared memory, group
copies, shared loads, waits and barriers.

Coordinates are in tile units: an R×C tile at (b, d, r, c) is rows [r·R, r·R+R) and columns
[c·C, c·C+C) of g[b, d]; a vector of length L at (b, d, r, c) is row r (in elements),
columns [c·L, c·L+L). With `unit = "element"` (kt.coord_scale) they are rows [r, r+R) and
columns [c, c+C). A shared load's (row, col) counts sub-tiles of its result the same way.
"""
from __future__ import annotations

from ..ir import ops as kt
from ..ir.types import RegVecType, SharedVecType
from .memory import (SharedBuffer, arrival_slots, copy_in_flight, gather_rows, read_window,
                     scatter_rows, subtile_outside, tensor_copy_slot, wait_count, warp_rows,
                     write_window)
from .values import constant_array, np_dtype


def _extent(ty) -> tuple[int, int, int, int]:
    """(rows, cols, row scale, col scale) of a tile or vector at tile coordinates."""
    if isinstance(ty, (RegVecType, SharedVecType)):
        return 1, ty.length.data, 1, ty.length.data
    rows, cols = ty.shape
    return rows, cols, rows, cols


def _load(op: kt.LoadOp, c):
    g, o = c.slot(op.src), c.slot(op.result)
    b, d, row, col = c.slots_of(op.coords)
    rows, cols, _, _ = _extent(op.result.type)
    rs, cs = kt.coord_scale(op, op.result.type)
    pad = constant_array((), op.prop_float("pad"), op.result.type.dtype)[()]
    vector = isinstance(op.result.type, RegVecType)

    def h(r, w):
        window = read_window(r[g], r[b], r[d], r[row] * rs, r[col] * cs, rows, cols, pad)
        r[o] = window[0] if vector else window
    return h


def _store(op: kt.StoreOp, c):
    g, v = c.slot(op.dst), c.slot(op.value)
    b, d, row, col = c.slots_of(op.coords)
    rs, cs = kt.coord_scale(op, op.value.type)
    vector = isinstance(op.value.type, RegVecType)
    global_dt = op.dst.type.dtype
    rnd = None if op.value.type.dtype == global_dt else global_dt.round

    def h(r, w):
        value = r[v][None, :] if vector else r[v]
        if rnd is not None:
            value = rnd(value)
        write_window(r[g], r[b], r[d], r[row] * rs, r[col] * cs, value)
    return h


def _gather(op: kt.GatherOp, c):
    g, b, d, rows, col = c.slots_of(op.operands)
    o, cols = c.slot(op.result), op.result.type.cols.data

    def h(r, w):
        r[o] = gather_rows(r[g], r[b], r[d], r[rows], r[col] * cols, cols)
    return h


def _scatter(op: kt.ScatterOp, c):
    g, b, d, rows, col, v = c.slots_of(op.operands)
    cols = op.value.type.cols.data

    def h(r, w):
        scatter_rows(r[g], r[b], r[d], r[rows], r[col] * cols, r[v])
    return h


# ---- shared memory -------------------------------------------------------------------------

def _alloc(op: kt.AllocOp, c):
    o = c.slot(op.result)
    rows, cols, _, _ = _extent(op.result.type)
    carrier = np_dtype(op.result.type.dtype)

    def h(r, w):
        shared = w.block.shared
        buf = shared.get(o)
        if buf is None:  # the first warp to reach it makes the block's buffer
            buf = shared[o] = SharedBuffer(rows, cols, carrier)
        r[o] = buf
    return h


def _copy_async(op: kt.CopyAsyncOp, c):
    g, dst = c.slot(op.src), c.slot(op.dst)
    b, d, row, col = c.slots_of(op.coords)
    rows, cols, _, _ = _extent(op.dst.type)
    rs, cs = kt.coord_scale(op, op.dst.type)
    slices = [warp_rows(i, c.warps, rows) for i in range(c.warps)]
    slot = tensor_copy_slot(op)

    def h(r, w):
        lo, hi = slices[w.id]
        data = read_window(r[g], r[b], r[d], r[row] * rs + lo, r[col] * cs, hi - lo, cols, 0)
        w.asyn.issue_copy(op, r[dst], lo, hi, data, slot)
    return h


def _lds_load(op: kt.LdsLoadOp, c):
    """Sub-tile (row, col) of the shared buffer; in flight until a wait completes it."""
    s, row, col, o = c.slots_of((op.src, op.row, op.col, op.result))
    rows, cols, rs, cs = _extent(op.result.type)
    down, across = kt.subtile_grid(op.src.type, op.result.type)
    vector = isinstance(op.src.type, SharedVecType)

    def h(r, w):
        buf, i, j = r[s], r[row], r[col]
        if buf.inflight:
            raise copy_in_flight(op, "read")
        if not (0 <= i < down and 0 <= j < across):
            raise subtile_outside(op, i, j, (down, across))
        window = buf.data[i * rs:i * rs + rows, j * cs:j * cs + cols]
        r[o] = window[0].copy() if vector else window.copy()
        w.asyn.issue_load(op, o)
    return h


def _lds_store(op: kt.LdsStoreOp, c):
    dst, v = c.slot(op.dst), c.slot(op.value)
    vector = isinstance(op.dst.type, SharedVecType)

    def h(r, w):
        buf = r[dst]
        if buf.inflight:
            raise copy_in_flight(op, "written")
        if vector:
            buf.data[0] = r[v]
        else:
            buf.data[...] = r[v]
    return h


def _wait_for(op: kt.WaitForOp, c):
    vm, lds = wait_count(op, "vm", c.target), wait_count(op, "lds", c.target)
    slots = arrival_slots(op)

    def h(r, w):
        w.asyn.wait(vm, lds, slots)
    return h


def _barrier(op: kt.BarrierOp, c):
    def h(r, w):
        yield op, None, None  # a meeting with nothing to combine
    return h


HANDLERS = {
    kt.LoadOp: _load, kt.StoreOp: _store, kt.GatherOp: _gather, kt.ScatterOp: _scatter,
    kt.AllocOp: _alloc, kt.CopyAsyncOp: _copy_async, kt.LdsLoadOp: _lds_load,
    kt.LdsStoreOp: _lds_store, kt.WaitForOp: _wait_for, kt.BarrierOp: _barrier,
}
