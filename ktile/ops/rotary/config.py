"""Rotary embedding's configuration space: per layout, COLS = 32 where the rotary dimension is a
multiple of 64, else 16 (a half head must be whole tiles). HEAD and ROT are the call's
(a head size is its own trace, like any shape constant)."""
from __future__ import annotations

from .._library import Route, RoutingTable

TABLE = RoutingTable([
    Route("rope_neox_qk", {"COLS": 16, "WARPS": 4, "HEAD": 128, "ROT": 128}),
    Route("rope_neox_qk", {"COLS": 16, "WARPS": 1, "HEAD": 64, "ROT": 32}),
    Route("rope_neox_qk_own_cache", {"COLS": 16, "WARPS": 4, "HEAD": 128, "ROT": 128}),
    Route("rope_neox_qk_own_cache", {"COLS": 16, "WARPS": 1, "HEAD": 64, "ROT": 32}),
    Route("rope_neox_q", {"COLS": 16, "WARPS": 4, "HEAD": 128, "ROT": 128}),
    Route("rope_gptj", {"COLS": 32, "HEAD": 128, "ROT": 128}),
    Route("rope_gptj", {"COLS": 16, "HEAD": 64, "ROT": 32}),
])


def columns(rot_dim: int) -> int:
    return 32 if rot_dim % 64 == 0 else 16


def neox_constants(rot_dim: int) -> dict:
    """NeoX: a warp per column tile of each half (COLS = 16: rot_dim / 32 warps)."""
    return {"COLS": NEOX_COLS, "WARPS": rot_dim // (2 * NEOX_COLS)}


NEOX_COLS = 16
