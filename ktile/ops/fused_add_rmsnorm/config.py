"""Fused add + RMSNorm's configuration space: one block per row, warps by width and lane width
(as RMSNorm's, ktile/ops/rmsnorm/config.py, which says why the vectors are narrow). Rows up to
4096 columns on sm_90a, gfx1100 and gfx1201 (16 warps × 4 vectors of 64), 2048 on gfx942 and
gfx950 (8 × 2 of 128; 8 × 4 spills on gfx942): every route builds with zero spills. There is no
loop kernel yet: wider rows are refused with the widest width named (a tile-view kernel is
future work, docs/ops.md)."""
from __future__ import annotations

from .._library import RoutingTable
from ..rmsnorm.config import LANES32, LANES64
from .kernels import held_route

ROUTES = [
    held_route(1024, 8, vec=64, targets=LANES32),
    held_route(2048, 16, vec=64, targets=LANES32),
    held_route(4096, 16, vec=64, targets=LANES32),
    held_route(1024, 4, targets=LANES64),
    held_route(2048, 8, vec=128, targets=LANES64),
]

TABLE = RoutingTable(ROUTES)
