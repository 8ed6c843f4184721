"""RMSNorm's configuration space: which kernel at which constants, by row width and target.

Rows whose width is a multiple of 16 (every model width: 2048, 2880, 3584, 4096, 5120, 8192,
14336, 16384) take `rms_norm_tiles` (tiles.py): the row viewed as a 16-row tile, one block per
row at every row count (1 row is one block), each warp holding one flat 16 x 64 tile of the
view (1024 values of the row), x read once: WARPS = the width / 1024, rounded up (1 to 6 and 8
warps, 16 up to 16384). A width between two routes takes the wider one (its last tiles read
zeros and write nothing: 2880 takes 3 warps, 3584 4, 7168 8, 14336 16). Two tiles per warp
(16-bit 8192 on 4 warps, as measured in docs/language.md's flat-layout note) are not routes:
the budgets pass puts them, and 7- and 12-warp blocks of one tile, under a quarter of a sm_90a
multiprocessor's warps in fp32 or in the fused form, and routes serve every dtype. Registers
as built (zero spills): sm_90a 70-97 in 16-bit dtypes, 92-94 in fp32 (two 16 x 32 tiles per
warp); gfx1100 / gfx1201 and gfx942 / gfx950: docs/ops.md.

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

# (widest row, warps): one flat 16 x 64 view tile per warp; the fused form routes the same widths
TILE_WARPS = ((1024, 1), (2048, 2), (3072, 3), (4096, 4), (5120, 5), (6144, 6), (8192, 8),
              (16384, 16))

ROUTES = [
    *(tiles_route(cols, warps) for cols, warps in TILE_WARPS),
    Route("rms_norm_loop", {"VEC": 64, "WARPS": 16}, targets=LANES32, sample=(2, 4500)),
    Route("rms_norm_loop", {"VEC": 128, "WARPS": 16}, targets=LANES64, sample=(2, 4500)),
]

TABLE = RoutingTable(ROUTES)
