"""RMSNorm's configuration space: which kernel at which constants, by row width and target.

One block per row at every row count (1 row is one block: nothing is wasted on a 16-row tile);
the width decides how many warps share a row and how many vectors each holds. Rows wider than
the largest held route take the loop kernel, which reads x twice. The tuner may override the
table per target (`TABLE.override(target, routes)`).

The vector width is per target family: a VEC-wide register vector costs VEC / 8 registers per
lane in bf16 on sm_90a (its vectors are laid out as an MMA fragment's column, replicated over
the fragment's rows) but VEC / wave size on AMD. So sm_90a holds 64-wide vectors, at most 4096
columns in registers (about 104 registers per lane in fp32 at 16 warps: 16 of the 64 warps of
a multiprocessor resident), and loops beyond; AMD holds 256-wide vectors up to 16384 columns.
tests/tier0/test_ops_routes.py traces every route for its targets with no budget error or
occupancy warning."""
from __future__ import annotations

from .._library import AMD_TARGETS, Route, RoutingTable
from .kernels import held_route

SM90 = ("sm_90a",)

ROUTES = [
    held_route(1024, 8, vec=64, targets=SM90),
    held_route(2048, 16, vec=64, targets=SM90),
    held_route(4096, 16, vec=64, targets=SM90),
    Route("rms_norm_loop", {"VEC": 64, "WARPS": 16}, targets=SM90, sample=(2, 4500)),
    held_route(1024, 4, targets=AMD_TARGETS),
    held_route(2048, 4, targets=AMD_TARGETS),
    held_route(4096, 4, targets=AMD_TARGETS),
    held_route(8192, 8, targets=AMD_TARGETS),
    held_route(16384, 16, targets=AMD_TARGETS),
    Route("rms_norm_loop", {"VEC": 256, "WARPS": 16}, targets=AMD_TARGETS, sample=(2, 700)),
]

TABLE = RoutingTable(ROUTES)
