"""kt.load_scalar: one element of a global, every lane the same (ktile/ir/ops_scalar_load.py)."""
from __future__ import annotations

from xdsl.dialects.builtin import IntegerType

from ..ir.ops_scalar_load import LoadScalarOp
from .memory import read_window


def _load_scalar(op: LoadScalarOp, c):
    g, o = c.slot(op.src), c.slot(op.result)
    b, d, row, col = c.slots_of(op.coords)
    pad = op.prop_float("pad")
    convert = int if isinstance(op.result.type, IntegerType) else float

    def h(r, w):
        r[o] = convert(read_window(r[g], r[b], r[d], r[row], r[col], 1, 1, pad)[0, 0])
    return h


HANDLERS = {LoadScalarOp: _load_scalar}
