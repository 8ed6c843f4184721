"""RMSNorm's configuration space: which kernel at which constants, by row width.

One block per row at every row count (1 row is one block: nothing is wasted on a 16-row tile);
the width decides how many warps share a row and how many 256-wide vectors each holds. Rows
wider than the largest held route take the loop kernel, which reads x twice. The tuner may
override the table per target (`TABLE.override(target, routes)`)."""
from __future__ import annotations

from .._library import Route, RoutingTable
from .kernels import held_route

ROUTES = [
    held_route(1024, 4),
    held_route(2048, 4),
    held_route(4096, 4),
    held_route(8192, 8),
    held_route(16384, 16),
    Route("rms_norm_loop", {"VEC": 256, "WARPS": 16}, sample=(2, 700)),
]

TABLE = RoutingTable(ROUTES)
