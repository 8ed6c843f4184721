"""LayerNorm's configuration space. Forward: one block per row, warps by width and lane width
(as RMSNorm's, ktile/ops/rmsnorm/config.py, which says why the vectors are narrow): rows up to
2048 columns on every target (16 warps × 2 vectors of 64 on 32-lane targets, 8 × 2 of 128 on
64-lane ones; 4096-column routes spill on sm_90a and gfx942/gfx950); there is no loop kernel
yet, so wider rows are refused with the widest width named (a tile-view kernel is future work,
docs/ops.md). Backward: 16-row tiles of 64 columns over 4 warps (32 over 8 on sm_90a), then the
column sums of the partials."""
from __future__ import annotations

from .._library import AMD_TARGETS, Route, RoutingTable
from ..rmsnorm.config import LANES32, LANES64
from .kernels import held_route

SM90 = ("sm_90a",)

FORWARD = RoutingTable([
    held_route(1024, 8, vec=64, targets=LANES32),
    held_route(2048, 16, vec=64, targets=LANES32),
    held_route(1024, 4, targets=LANES64),
    held_route(2048, 8, vec=128, targets=LANES64),
])

# backward on sm_90a: 32-column tiles over 8 warps (64-column ones take about 144 registers per
# lane there, 12 resident warps of 64); AMD keeps 64 over 4
BACKWARD = RoutingTable([
    Route("layer_norm_dx", {"COLS": 32, "WARPS": 8}, targets=SM90, sample=(21, 300)),
    Route("layer_norm_dx", {"COLS": 64, "WARPS": 4}, targets=AMD_TARGETS, sample=(21, 300)),
])
REDUCTION = Route("column_sum", {"COLS": 64}, sample=(2, 300))
