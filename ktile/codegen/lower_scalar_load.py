"""kt.load_scalar's C++: `kt::load_scalar(g, kt::elem_coord{b, d, r, c}, pad)`
(ktile/common/scalar_load.hpp)."""
from __future__ import annotations

from ..ir.ops_scalar_load import LoadScalarOp
from .cpp_types import float_literal
from .emitter import Emitter


def lower_load_scalar(e: Emitter, op: LoadScalarOp) -> None:
    pad = float_literal(op.prop_float("pad"))
    e.define_by_value(op, op.result, f"kt::load_scalar({e.name(op.src)}, "
                                     f"kt::elem_coord{{{e.names(op.coords)}}}, {pad})")


SCALAR_LOAD_LOWERINGS = {LoadScalarOp: lower_load_scalar}
