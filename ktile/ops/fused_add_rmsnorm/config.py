"""Fused add + RMSNorm's configuration space, as RMSNorm's (ktile/ops/rmsnorm/config.py, which
says why): rows whose width is a multiple of 16 take `fused_add_rms_norm_tiles` (tiles.py), one
block per row, flat tiles of the view, the same routes (one tile per warp up to 7168 columns,
two from 8192 above 256 rows: 4 warps at 8192, 7 at 14336, 8 at 16384), 94-108 registers on sm_90a at one tile
per warp and 126 at two (nvcc 13, zero spills: two tiles per warp load their weight per tile
after the reduction, and fp32 loads x and residual one share at a time: tiles.py); the
engine's in-place form runs it in place with no copy.

Other widths take `fused_add_rms_norm_held` (kernels.py: narrow vectors, out of place and
copied back in the in-place form) up to 4096 columns on sm_90a, gfx1100 and gfx1201 (16 warps ×
4 vectors of 64), 2048 on gfx942 and gfx950 (8 × 2 of 128; 8 × 4 spills on gfx942); wider
ones, and multiples of 16 past 16384, are refused naming the widest route (future work,
docs/ops.md)."""
from __future__ import annotations

from .._library import RoutingTable
from ..rmsnorm.config import (FEW_ROWS, LANES32, LANES64, LATENCY_TARGETS, LATENCY_WARPS,
                              TILE_WARPS)
from .kernels import held_route
from .tiles import tiles_route

ROUTES = [
    *(tiles_route(cols, warps, c, max_rows=FEW_ROWS, targets=LATENCY_TARGETS)
      for cols, warps, c in LATENCY_WARPS),
    *(tiles_route(cols, warps, c, held=held, max_rows=rows)
      for cols, warps, held, c, rows in TILE_WARPS),
    held_route(1024, 8, vec=64, targets=LANES32),
    held_route(2048, 16, vec=64, targets=LANES32),
    held_route(4096, 16, vec=64, targets=LANES32),
    held_route(1024, 4, targets=LANES64),
    held_route(2048, 8, vec=128, targets=LANES64),
]

TABLE = RoutingTable(ROUTES)
