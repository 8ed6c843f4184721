"""LayerNorm's configuration space. Forward: one block per row, warps by width and target (as
RMSNorm's, ktile/ops/rmsnorm/config.py, which says why sm_90a holds narrow vectors): sm_90a
holds rows up to 4096 columns (about 108 registers per lane at 16 warps; the 4096 route holds
32-wide vectors, 8 per warp), AMD up to 32768; there is no loop kernel yet, so wider rows are
refused with the widest width named (a tile-view kernel is future work, docs/ops.md).
Backward: 16-row tiles of 64 columns over 4 warps (32 over 8 on sm_90a), then the column sums of the partials."""
from __future__ import annotations

from .._library import AMD_TARGETS, Route, RoutingTable
from .kernels import held_route

SM90 = ("sm_90a",)

FORWARD = RoutingTable([
    held_route(1024, 8, vec=64, targets=SM90),
    held_route(2048, 16, vec=64, targets=SM90),
    held_route(4096, 16, vec=32, targets=SM90),
    held_route(1024, 4, targets=AMD_TARGETS),
    held_route(2048, 4, targets=AMD_TARGETS),
    held_route(4096, 4, targets=AMD_TARGETS),
    held_route(8192, 8, targets=AMD_TARGETS),
    held_route(16384, 16, targets=AMD_TARGETS),
    held_route(32768, 16, targets=AMD_TARGETS),
])

# backward on sm_90a: 32-column tiles over 8 warps (64-column ones take about 144 registers per
# lane there, 12 resident warps of 64); AMD keeps 64 over 4
BACKWARD = RoutingTable([
    Route("layer_norm_dx", {"COLS": 32, "WARPS": 8}, targets=SM90, sample=(21, 300)),
    Route("layer_norm_dx", {"COLS": 64, "WARPS": 4}, targets=AMD_TARGETS, sample=(21, 300)),
])
REDUCTION = Route("column_sum", {"COLS": 64}, sample=(2, 300))
