"""The one table from op class to handler factory, gathered from the op-family modules."""
from __future__ import annotations

from . import (ops_control, ops_elementwise, ops_memory, ops_pipeline, ops_scalar, ops_shared,
               ops_tile)
from .ops_named_barrier import HANDLERS as NAMED_BARRIER_HANDLERS
from .ops_scalar_load import HANDLERS as SCALAR_LOAD_HANDLERS

HANDLERS = {
    **ops_scalar.HANDLERS,
    **ops_control.HANDLERS,
    **ops_memory.HANDLERS,
    **ops_elementwise.HANDLERS,
    **ops_tile.HANDLERS,
    **ops_pipeline.HANDLERS,
    **SCALAR_LOAD_HANDLERS,
    **NAMED_BARRIER_HANDLERS,
    **ops_shared.HANDLERS,   # last: sub-tile stores and tile reductions, delegating the rest
}
