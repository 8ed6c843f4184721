"""The lowering table: op class → the function that writes its C++.

One table for every target: what differs between targets is the header the generated file
includes (`ktile/<vendor>/<family>/kernel.hpp`), not the C++ written here. An op missing from
the table is an InternalError naming the op and the target (`emitter.missing_lowering`).
"""
from __future__ import annotations

from .lower_compute import COMPUTE_LOWERINGS
from .lower_control import CONTROL_LOWERINGS
from .lower_memory import MEMORY_LOWERINGS
from .lower_named_barrier import NAMED_BARRIER_LOWERINGS
from .lower_pipeline import PIPELINE_LOWERINGS
from .lower_scalar_load import SCALAR_LOAD_LOWERINGS
from .lower_scalars import SCALAR_LOWERINGS

LOWERINGS = {
    **SCALAR_LOWERINGS,
    **MEMORY_LOWERINGS,
    **COMPUTE_LOWERINGS,
    **CONTROL_LOWERINGS,
    **PIPELINE_LOWERINGS,
    **SCALAR_LOAD_LOWERINGS,
    **NAMED_BARRIER_LOWERINGS,
}
