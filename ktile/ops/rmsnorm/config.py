"""RMSNorm's configuration space: which kernel at which constants, by row width and target.

Rows whose width is a multiple of 16 (every model width: 2048, 2880, 3584, 4096, 5120, 8192,
14336, 16384) take `rms_norm_tiles` (tiles.py): the row viewed as a 16-row tile, one block per
row at every row count (1 row is one block), WARPS warps of HELD tiles 16 x 32 of the view each,
x read once. The routes go up to 16384 columns; a width between two routes takes the wider one
(its last tiles read zeros and write nothing: 3584 and 14336 take the 4096 and 16384 routes;
a 7-warp block spilled on sm_90a). 16 x 32 tiles, held up to 2 deep, cost 52-64 registers on
sm_90a in 16-bit dtypes, up to 105 in fp32, with zero spills; 16 x 64 cost 80 and 16 x 128
242 (nvcc: docs/ops.md), so the block grows by warps and held tiles rather than wider tiles.

Other widths (not a multiple of 16), and multiples of 16 past 16384, take `rms_norm_loop`
(kernels.py): correct, slower (narrow vector accesses, x read twice), per lane width: VEC-wide
vectors laid out as an MMA fragment's column replicated over its rows, 64 wide on 32-lane
targets (sm_90a, gfx1100, gfx1201), 128 on 64-lane ones (gfx942, gfx950).

The tuner may override the table per target (`TABLE.override(target, routes)`)."""
from __future__ import annotations

from .._library import Route, RoutingTable
from .tiles import tiles_route

LANES32 = ("sm_90a", "gfx1100", "gfx1201")
LANES64 = ("gfx942", "gfx950")

ROUTES = [
    tiles_route(1024, 2, 32),
    tiles_route(2048, 4, 32),
    tiles_route(4096, 8, 32),
    tiles_route(5120, 10, 32),
    tiles_route(8192, 8, 32, held=2),
    tiles_route(16384, 16, 32, held=2),
    Route("rms_norm_loop", {"VEC": 64, "WARPS": 16}, targets=LANES32, sample=(2, 4500)),
    Route("rms_norm_loop", {"VEC": 128, "WARPS": 16}, targets=LANES64, sample=(2, 4500)),
]

TABLE = RoutingTable(ROUTES)
