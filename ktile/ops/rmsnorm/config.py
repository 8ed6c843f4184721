"""RMSNorm's configuration space: which kernel at which constants, by row width and target.

Rows up to 256 wide (head dimensions: 64, 128, 256) take `rms_norm_rows` (rows.py) at every
row count: 16 whole rows a warp (NARROW below).

Wider rows whose width is a multiple of 16 (every model width: 2048, 2880, 3584, 4096, 5120, 8192,
14336, 16384) take `rms_norm_tiles` (tiles.py): the row viewed as a 16-row tile, one block per
row at every row count (1 row is one block), each warp holding HELD flat 16 x 64 tiles of the
view (1024 values of the row each, 512 for C = 32), x read once. Up to 6144 columns: one tile
per warp, WARPS = the width / 1024 rounded up (1 to 6 warps), 3584 and 7168 exactly 7 warps;
from 8192 above 256 rows: two tiles per warp, 4 warps at 8192, 7 at 14336 and 8 at 16384 (the
flat-layout experiment measured 4 warps x 2 tiles at 4096 x 8192 at 41.5-42.3 us against 8 x
1's 0.82-0.86x of Triton; docs/performance.md); up to 256 rows one tile per warp (8, 14, 16
warps). A width between two routes takes the wider one (its last tiles read zeros and write
nothing: 2880 takes 3 warps, 6400 the 7168 route). The one-tile routes at 8192 (8 warps) and 16384 (16) are the
tuner's candidates (`ktile tune`: WARPS halved and doubled, HELD to cover), as are 4 warps of
16 x 128 (`EXPLORE` in sweep.py times both). Registers as built by ptxas (zero spills, nvcc
13): 70-76 at one tile per warp, 113 at two (16 resident warps, a quarter of an sm_90a
multiprocessor: the budgets' floor) in 16-bit dtypes and fp32 (two 16 x 32 tiles per share;
the weight loaded per tile after the reduction); gfx1100 / gfx1201 and gfx942 / gfx950:
docs/ops.md.

Other widths (not a multiple of 16), and multiples of 16 past 16384, take `rms_norm_loop`
(kernels.py): correct, slower (narrow vector accesses, x read twice), per lane width: VEC-wide
vectors laid out as an MMA fragment's column replicated over its rows, 64 wide on 32-lane
targets (sm_90a, gfx1100, gfx1201), 128 on 64-lane ones (gfx942, gfx950).

On sm_90a, up to 256 rows, the latency routes come first (LATENCY_WARPS below): one short flat
tile per warp over more warps (16 x 16 up to 4096 columns, 16 x 32 to 8192), the serial chain a
warp executes being a few-row launch's time.

The tuner may override the table per target (`TABLE.override(target, routes)`)."""
from __future__ import annotations

from .._library import Route, RoutingTable
from .rows import rows_route
from .tiles import tiles_route

LANES32 = ("sm_90a", "gfx1100", "gfx1201")
LANES64 = ("gfx942", "gfx950")

# (widest row, warps, held, tile columns C, most rows): HELD flat 16 x C view tiles per warp;
# the fused form routes the same widths. Exact fits first where a model width is not a power of
# two (3584 = 7 warps of 16 x 32, 7168 = 7 of 16 x 64, 14336 = 7 x 2 of 16 x 64: the H200 sweep
# of 2026-12-02 measured 4096 x 3584 at 23.7 us exact against 43.0 padded to 4096, and 4096 x
# 14336 at 68.3 against 93.4 padded to 16384). Up to 256 rows, one tile per warp from 8192:
# a second tile per warp loads its weight after the reduction (registers), a second trip to
# memory that only many resident rows hide (the fused form at 1-32 x 8192 measured 8.0 us on 4
# x 2 against Triton's 5.4).
FEW_ROWS = 256
TILE_WARPS = ((1024, 1, 1, 64, None), (2048, 2, 1, 64, None), (3072, 3, 1, 64, None),
              (3584, 7, 1, 32, None), (4096, 4, 1, 64, None), (5120, 5, 1, 64, None),
              (6144, 6, 1, 64, None), (7168, 7, 1, 64, None), (8192, 8, 1, 64, FEW_ROWS),
              (8192, 4, 2, 64, None), (14336, 14, 1, 64, FEW_ROWS), (14336, 7, 2, 64, None),
              (16384, 16, 1, 64, FEW_ROWS), (16384, 8, 2, 64, None))

# Up to FEW_ROWS rows on sm_90a, latency routes: a block's time is the serial chain one warp
# executes, so more warps with one short flat tile each (all loads issued before the reduction)
# and as many values per lane as the plain Triton kernel holds (ktile/ops/alternatives_triton.py:
# 8 per lane to 4096, 16 to 8192): 16 x 16 tiles up to 4096 (16 warps at 4096), 16 x 32 up to
# 8192 (16 warps at 8192); from 14336 TILE_WARPS's FEW_ROWS routes (16 x 64, 14 and 16 warps).
# Static hot-path SASS per warp, rms_norm bf16 1 x 4096 (benchmarks/sass_count.py, nvcc 13):
# 422 on 4 warps of 16 x 64, 282 on 8 of 16 x 32, 220 on 16 of 16 x 16. AMD keeps TILE_WARPS
# (its flat tiles are row-layout tiles; its speed is not measured).
LATENCY_TARGETS = ("sm_90a",)
LATENCY_WARPS = ((1024, 4, 16), (2048, 8, 16), (3072, 12, 16), (3584, 14, 16), (4096, 16, 16),
                 (5120, 10, 32), (6144, 12, 32), (7168, 14, 32), (8192, 16, 32))  # (cols, W, C)

# Up to 256 columns, every row count and target: `rms_norm_rows` (rows.py), 16 whole rows a warp
# in a 16 x C row-layout tile (the head-dim norms: Qwen3's q_norm and k_norm over 128 columns,
# 65536 and 16384 rows in a 2048-token prefill, took one 1-warp block a row of 16 x 64 flat
# tiles holding 8 of the view's columns: 95 us a call on the H200 at 65536 x 128, 87% of the
# lanes idle). C = 64 everywhere: 68-72 registers on sm_90a in bf16 and fp32 (C = 128 is 118 /
# 148, over the budgets' occupancy estimate in fp32); 128 and 256 columns spread a row tile
# over 2 and 4 warps (SPLIT, a `hk.group.sum` of the rows' sums). Not measured yet:
# `python -m ktile.ops.rmsnorm.sweep_rows` times these against C = 128 and others.
# (widest row, C, WARPS, SPLIT)
NARROW = ((64, 64, 4, 1), (128, 64, 2, 2), (256, 64, 4, 4))

ROUTES = [
    *(rows_route(cols, c, warps, split) for cols, c, warps, split in NARROW),
    *(tiles_route(cols, warps, c, max_rows=FEW_ROWS, targets=LATENCY_TARGETS)
      for cols, warps, c in LATENCY_WARPS),
    *(tiles_route(cols, warps, c, held=held, max_rows=rows)
      for cols, warps, held, c, rows in TILE_WARPS),
    Route("rms_norm_loop", {"VEC": 64, "WARPS": 16}, targets=LANES32, sample=(2, 4500)),
    Route("rms_norm_loop", {"VEC": 128, "WARPS": 16}, targets=LANES64, sample=(2, 4500)),
]

TABLE = RoutingTable(ROUTES)
