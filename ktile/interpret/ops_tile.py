"""Whole-tile ops: kt.mma, kt.mma_shared, kt.reduce, kt.block_reduce, kt.fill, kt.iota,
kt.causal_mask, kt.rand.
"""
from __future__ import annotations

import numpy as np

from ..ir import ops as kt
from .memory import copy_in_flight
from .values import (constant_array, element_dtype, f32, is_array_type, np_dtype, result_rounder,
                     shape_of)


def _mma(op: kt.MmaOp, c):
    """acc + op(a) @ op(b): float32 matmul, or exact integer arithmetic for i8 operands."""
    a, b, acc, o = c.slot(op.a), c.slot(op.b), c.slot(op.acc), c.slot(op.result)
    variant = op.variant.data
    ta, tb = variant.startswith("At"), variant.endswith("Bt")
    exact = op.a.type.dtype.kind == "int"
    rnd = result_rounder(op.result.type.dtype)

    def h(r, w):
        x, y = r[a], r[b]
        x, y = (x.T if ta else x), (y.T if tb else y)
        if exact:
            r[o] = rnd(r[acc].astype(np.int64) + x.astype(np.int64) @ y.astype(np.int64))
        else:
            r[o] = rnd(r[acc] + np.matmul(x, y, dtype=np.float32))
    return h


def _mma_shared(op: kt.MmaSharedOp, c):
    """acc + a @ bᵀ (variant AB: a @ b) with b the shared tile as it is when this warp reaches
    the op (each warp multiplies its own a by the block's b; a shared a gives this warp's
    rows); reading a shared operand while a copy lands is an error. The MMA completes here on
    every target."""
    a, b, acc, o = c.slot(op.a), c.slot(op.b), c.slot(op.acc), c.slot(op.result)
    exact = op.a.type.dtype.kind == "int"
    rnd = result_rounder(op.result.type.dtype)

    rows = op.acc.type.shape[0]
    a_shared = op.a_shared   # this warp's rows of a shared a: [w·rows, (w+1)·rows)
    b_kn = op.b_kn

    def h(r, w):
        buf = r[b]
        if buf.inflight or (a_shared and r[a].inflight):
            raise copy_in_flight(op, "read")
        x = r[a].data[w.id * rows:(w.id + 1) * rows] if a_shared else r[a]
        y = buf.data if b_kn else buf.data.T   # `a @ s` holds B as K×N, `a @ s.T` as N×K
        if exact:
            r[o] = rnd(r[acc].astype(np.int64) + x.astype(np.int64) @ y.astype(np.int64))
        else:
            r[o] = rnd(r[acc] + np.matmul(x, y, dtype=np.float32))
    return h


_REDUCE = {"sum": np.sum, "max": np.max, "min": np.min}
_AXIS = {"row": 1, "col": 0, "all": None}


def _reduce(op: kt.ReduceOp, c):
    """Axis "row": over the columns, one value per row; "col": over the rows; "all": a vector
    to an f32 scalar. Accumulates in float32 (int32 for integer tiles)."""
    x, o = c.slot(op.x), c.slot(op.result)
    fn, axis = _REDUCE[op.kind.data], _AXIS[op.axis.data]
    acc = np_dtype(element_dtype(op.result.type))
    if axis is None:
        def h_all(r, w):
            r[o] = f32(fn(r[x].astype(acc, copy=False)))
        return h_all
    rnd = result_rounder(element_dtype(op.result.type))

    def h(r, w):
        r[o] = rnd(fn(r[x].astype(acc, copy=False), axis=axis))
    return h


def _block_reduce(op: kt.BlockReduceOp, c):
    """A meeting of all warps: each gets the reduction over warps 0..W-1, in that order."""
    x, o = c.slot(op.x), c.slot(op.result)
    combine = _warp_order_combiner(op)

    def h(r, w):
        r[o] = yield op, r[x], combine
    return h


def _warp_order_combiner(op: kt.BlockReduceOp):
    step = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op.kind.data]
    if not is_array_type(op.result.type):  # an f32 scalar: combine as float32
        def combine_scalars(values: list) -> float:
            total = np.float32(values[0])
            for value in values[1:]:
                total = step(total, np.float32(value))
            return float(total)
        return combine_scalars
    rnd = result_rounder(element_dtype(op.result.type))

    def combine(values: list) -> np.ndarray:
        total = values[0]
        for value in values[1:]:
            total = rnd(step(total, value))
        return total
    return combine


def _fill(op: kt.FillOp, c):
    ty = op.result.type
    c.constant(op.result, constant_array(shape_of(ty), op.prop_float("value"), ty.dtype))
    return None


def _iota(op: kt.IotaOp, c):
    ty = op.result.type
    shape = shape_of(ty)
    if len(shape) == 1:
        index = np.arange(shape[0])
    elif op.axis.data == "row":
        index = np.broadcast_to(np.arange(shape[0])[:, None], shape)
    else:
        index = np.broadcast_to(np.arange(shape[1])[None, :], shape)
    array = np.ascontiguousarray(result_rounder(ty.dtype)(index))
    array.flags.writeable = False
    c.constant(op.result, array)
    return None


def _causal_mask(op: kt.CausalMaskOp, c):
    """x with `fill` where the element's column (col0 + j) is past its row (row0 + i)."""
    x, row0, col0, o = c.slot(op.x), c.slot(op.row0), c.slot(op.col0), c.slot(op.result)
    rows, cols = op.x.type.shape
    i, j = np.arange(rows)[:, None], np.arange(cols)[None, :]
    fill = constant_array((), op.prop_float("fill"), op.x.type.dtype)[()]

    def h(r, w):
        r[o] = np.where(r[col0] + j > r[row0] + i, fill, r[x])
    return h


def _rand(op: kt.RandOp, c):
    from ..ops.rand.reference import rand, rand4  # loaded only by kernels that draw
    if kt.rand_counter(op) == "quad":
        rand = rand4
    seed, offsets, o = c.slot(op.seed), c.slot(op.offsets), c.slot(op.result)
    rnd = result_rounder(op.result.type.dtype)

    def h(r, w):
        r[o] = rnd(rand(r[seed], r[offsets]))
    return h


HANDLERS = {
    kt.MmaOp: _mma, kt.MmaSharedOp: _mma_shared, kt.ReduceOp: _reduce,
    kt.BlockReduceOp: _block_reduce, kt.FillOp: _fill,
    kt.IotaOp: _iota, kt.CausalMaskOp: _causal_mask, kt.RandOp: _rand,
}
