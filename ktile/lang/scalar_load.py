"""`hk.load_scalar(g, row, col=0, *, batch=0, depth=0, pad=0)`: one element of a global as a
scalar (kt.load_scalar, ktile/ir/ops_scalar_load.py). The value is a runtime scalar every lane
holds (an i32 element widened to an index, an fp32 one a float), usable wherever a scalar is: index arithmetic, `hk.where` of scalars and tile
coordinates (an embedding's flat tile at the row of a token's id)."""
from __future__ import annotations

from .. import dtypes
from . import tracer
from .memory import Global
from .values import Scalar, as_index, describe

LOADABLE = (dtypes.i32, dtypes.fp32)


def load_scalar(g, row, col=0, *, batch=0, depth=0, pad=0) -> Scalar:
    """g[batch, depth, row, col] (element coordinates) as a scalar; outside g: `pad`."""
    from ..ir.ops_scalar_load import LoadScalarOp
    if not isinstance(g, Global):
        raise tracer.error(f"hk.load_scalar reads one element of a global tensor, got "
                           f"{describe(g)}", op="load_scalar",
                           hint="pass a kernel parameter hk.Tensor[...]: hk.load_scalar(ids, t)")
    if g.dtype not in LOADABLE:
        raise tracer.error(f"hk.load_scalar loads i32 or fp32 elements; global '{g.name}' holds "
                           f"{g.dtype!r}", op="load_scalar",
                           hint="view the tensor as int32 words (int64 ids: .view(torch.int32)) "
                                "or load a tile and reduce it")
    if isinstance(pad, bool) or not isinstance(pad, (int, float)):
        raise tracer.error(f"hk.load_scalar's pad must be a Python number, got {describe(pad)}",
                           op="load_scalar", hint="pass pad=0 (or -1 for an invalid id)")
    parts = [as_index(v, f"load_scalar {name}")
             for v, name in ((batch, "batch"), (depth, "depth"), (row, "row"), (col, "col"))]
    b = tracer.current().builder
    value = Scalar(b._value(LoadScalarOp, (g.v, *(p.v for p in parts)), g.v.type.element,
                            {"pad": _pad_attr(pad)}))
    # an integer is widened (sign-extended) to an index, the type of coordinates and of
    # Python ints in scalar arithmetic, so `hk.where(ok, id, -1)` and `id * 16` just work
    return value if value.is_float else as_index(value, "load_scalar result")


def _pad_attr(pad):
    from xdsl.dialects.builtin import FloatAttr, f64
    return FloatAttr(float(pad), f64)
