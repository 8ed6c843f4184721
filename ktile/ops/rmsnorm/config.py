"""RMSNorm's configuration space: which kernel at which constants, by row width and target.

One block per row at every row count (1 row is one block: nothing is wasted on a 16-row tile);
the width decides how many warps share a row and how many vectors each holds. Rows wider than
the largest held route take the loop kernel, which reads x twice. The tuner may override the
table per target (`TABLE.override(target, routes)`).

The routes are per lane width, each built with zero spills (tests/tier1/test_ops_build.py) and
traced within the budgets pass's estimate (tests/tier0/test_ops_routes.py). A VEC-wide vector
is laid out as an MMA fragment's column, replicated over the fragment's rows, so it costs many
registers per lane: a 32-lane warp (sm_90a, gfx1100, gfx1201) holds 64-wide vectors, 16 warps
× 4 of them (4096 columns) at most; a 64-lane wave (gfx942, gfx950) 128-wide ones, 8 × 4.
Wider rows take the loop kernel. 256-wide vectors held 2+ deep, or the loop at 16 warps of
256, spill on every target (measured with clang-22 and nvcc: docs/ops.md)."""
from __future__ import annotations

from .._library import Route, RoutingTable
from .kernels import held_route

LANES32 = ("sm_90a", "gfx1100", "gfx1201")
LANES64 = ("gfx942", "gfx950")

ROUTES = [
    held_route(1024, 8, vec=64, targets=LANES32),
    held_route(2048, 16, vec=64, targets=LANES32),
    held_route(4096, 16, vec=64, targets=LANES32),
    Route("rms_norm_loop", {"VEC": 64, "WARPS": 16}, targets=LANES32, sample=(2, 4500)),
    held_route(1024, 4, targets=LANES64),
    held_route(2048, 8, vec=128, targets=LANES64),
    held_route(4096, 8, vec=128, targets=LANES64),
    Route("rms_norm_loop", {"VEC": 128, "WARPS": 16}, targets=LANES64, sample=(2, 4500)),
]

TABLE = RoutingTable(ROUTES)
