"""Rotary embedding's configuration space: per layout, COLS = 32 where the rotary dimension is a
multiple of 64, else 16 (a half head must be whole tiles). HEAD and ROT are the call's
(a head size is its own trace, like any shape constant)."""
from __future__ import annotations

from .._library import Route, RoutingTable

TABLE = RoutingTable([
    Route("rope_neox_heads", {"COLS": 32, "HEAD": 128, "ROT": 128}),
    Route("rope_neox_heads", {"COLS": 16, "HEAD": 64, "ROT": 32}),
    Route("rope_neox_heads_own_cache", {"COLS": 32, "HEAD": 128, "ROT": 128}),
    Route("rope_neox_heads_own_cache", {"COLS": 16, "HEAD": 64, "ROT": 32}),
    Route("rope_gptj", {"COLS": 32, "HEAD": 128, "ROT": 128}),
    Route("rope_gptj", {"COLS": 16, "HEAD": 64, "ROT": 32}),
])


def columns(rot_dim: int) -> int:
    return 32 if rot_dim % 64 == 0 else 16
