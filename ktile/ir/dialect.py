"""The kt dialect object and the context that knows it (with builtin, func, arith, scf)."""
from __future__ import annotations

from functools import lru_cache

from xdsl.context import Context
from xdsl.ir import Dialect

from .ops import OPS
from .ops_named_barrier import NAMED_BARRIER_OPS
from .ops_pipeline import PIPELINE_OPS
from .ops_scalar_load import SCALAR_LOAD_OPS
from .types import GlobalType, RegTileType, RegVecType, SharedTileType, SharedVecType

KT = Dialect("kt", OPS + PIPELINE_OPS + SCALAR_LOAD_OPS + NAMED_BARRIER_OPS, [GlobalType, RegTileType, SharedTileType, RegVecType, SharedVecType])


def make_context() -> Context:
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.dialects.math import Math
    from xdsl.dialects.scf import Scf

    ctx = Context()
    for dialect in (Builtin, Func, Arith, Scf, Math, KT):
        ctx.load_dialect(dialect)
    return ctx


@lru_cache(maxsize=1)
def shared_context() -> Context:
    return make_context()
