"""Fused add + RMSNorm's configuration space: one block per row, warps by width (as RMSNorm's),
the widest route holding 32768 columns (16 warps × 8 vectors of 256)."""
from __future__ import annotations

from .._library import RoutingTable
from .kernels import held_route

ROUTES = [
    held_route(1024, 4),
    held_route(2048, 4),
    held_route(4096, 4),
    held_route(8192, 8),
    held_route(16384, 16),
    held_route(32768, 16),
]

TABLE = RoutingTable(ROUTES)
