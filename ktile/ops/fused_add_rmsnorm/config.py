"""Fused add + RMSNorm's configuration space: one block per row, warps by width and target (as
RMSNorm's, ktile/ops/rmsnorm/config.py, which says why sm_90a holds 64-wide vectors). sm_90a
holds rows up to 4096 columns (about 107 registers per lane in fp32 at 16 warps); AMD up to
32768 (16 warps × 8 vectors of 256). There is no loop kernel yet: wider rows are refused with
the widest width named (a tile-view kernel is future work, docs/ops.md)."""
from __future__ import annotations

from .._library import AMD_TARGETS, RoutingTable
from .kernels import held_route

SM90 = ("sm_90a",)

ROUTES = [
    held_route(1024, 8, vec=64, targets=SM90),
    held_route(2048, 16, vec=64, targets=SM90),
    held_route(4096, 16, vec=64, targets=SM90),
    held_route(1024, 4, targets=AMD_TARGETS),
    held_route(2048, 4, targets=AMD_TARGETS),
    held_route(4096, 4, targets=AMD_TARGETS),
    held_route(8192, 8, targets=AMD_TARGETS),
    held_route(16384, 16, targets=AMD_TARGETS),
    held_route(32768, 16, targets=AMD_TARGETS),
]

TABLE = RoutingTable(ROUTES)
