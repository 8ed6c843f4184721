"""LayerNorm's configuration space. Forward: one block per row, warps by width (as RMSNorm's);
backward: 16-row tiles of 64 columns over 4 warps, then the column sums of the partials."""
from __future__ import annotations

from .._library import Route, RoutingTable
from .kernels import held_route

FORWARD = RoutingTable([
    held_route(1024, 4),
    held_route(2048, 4),
    held_route(4096, 4),
    held_route(8192, 8),
    held_route(16384, 16),
    held_route(32768, 16),
])

BACKWARD = RoutingTable([Route("layer_norm_dx", {"COLS": 64, "WARPS": 4}, sample=(21, 300))])
REDUCTION = Route("column_sum", {"COLS": 64}, sample=(2, 300))
