"""Rotary embedding's configuration space. NeoX: COLS = 16 and a warp per column tile of each
half (WARPS = rot_dim / 32: 4 at rot_dim 128, 64 registers on sm_90a; COLS = 32 with 2 warps
held 128). GPT-J: COLS = 32 where the rotary dimension is a multiple of 64, else 16 (a half head
must be whole tiles). HEAD and ROT are the call's (a head size is its own trace, like any shape
constant)."""
from __future__ import annotations

from .._library import Route, RoutingTable

TABLE = RoutingTable([
    Route("rope_neox_flat", {"COLS": 16, "WARPS": 4, "HEAD": 128, "ROT": 128}, max_rows=32),
    Route("rope_neox_flat", {"COLS": 16, "WARPS": 1, "HEAD": 64, "ROT": 32}, max_rows=32),
    Route("rope_neox_flat_own_cache", {"COLS": 16, "WARPS": 4, "HEAD": 128, "ROT": 128},
          max_rows=32),
    Route("rope_neox_qk", {"COLS": 16, "WARPS": 4, "HEADS": 1, "HEAD": 128, "ROT": 128}),
    Route("rope_neox_qk", {"COLS": 16, "WARPS": 1, "HEADS": 1, "HEAD": 64, "ROT": 32}),
    Route("rope_neox_qk", {"COLS": 16, "WARPS": 4, "HEADS": 2, "HEAD": 128, "ROT": 128}),
    Route("rope_neox_qk_own_cache", {"COLS": 16, "WARPS": 4, "HEADS": 1, "HEAD": 128,
                                     "ROT": 128}),
    Route("rope_neox_qk_own_cache", {"COLS": 16, "WARPS": 1, "HEADS": 1, "HEAD": 64, "ROT": 32}),
    Route("rope_neox_qk_own_cache", {"COLS": 16, "WARPS": 4, "HEADS": 2, "HEAD": 128,
                                     "ROT": 128}),
    Route("rope_neox_q", {"COLS": 16, "WARPS": 4, "HEAD": 128, "ROT": 128}),
    Route("rope_gptj", {"COLS": 32, "HEAD": 128, "ROT": 128}),
    Route("rope_gptj", {"COLS": 16, "HEAD": 64, "ROT": 32}),
])


def columns(rot_dim: int) -> int:
    return 32 if rot_dim % 64 == 0 else 16


def neox_constants(rot_dim: int, tokens: int, heads: tuple[int, ...]) -> dict:
    """NeoX: a warp per column tile of each half (COLS = 16: rot_dim / 32 warps); HEADS heads
    a block share one gather of cos and sin: 1 up to GROUP_FROM_TOKENS tokens (every block it
    can have, for latency), else the largest of GROUP_SIZES dividing every head count.
    GROUP_FROM_TOKENS and GROUP_SIZES are a static guess (fewer gathers per head), not
    measured yet."""
    group = 1
    if tokens >= GROUP_FROM_TOKENS:
        group = next((g for g in GROUP_SIZES if all(h % g == 0 for h in heads)), 1)
    return {"COLS": NEOX_COLS, "WARPS": rot_dim // (2 * NEOX_COLS), "HEADS": group}


NEOX_COLS = 16
# NeoX with key up to this many tokens: kernels.neox_flat (a block per 16 heads of a token, the
# position read with hk.load_scalar, cos and sin as flat tiles of a 0-stride cache view); the
# H200 measured rope_neox_qk at 1 / 32 tokens at 0.57 / 0.74x Triton. A guess, not measured.
FLAT_TOKENS = 32
GROUP_FROM_TOKENS = 256
GROUP_SIZES = (2,)
