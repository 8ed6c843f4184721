"""Gated activations' configuration space. `ACT` is the op's identity (set by the op function);
the routes naming each activation make the build and emulation tests compile all three. The
table is asked at (tokens, d): `act_and_mul_tokens` where d is a multiple of TOKEN_MULTIPLE
(each token's d / 16 columns whole 16-byte units in every dtype), else `act_and_mul`; both hold
flat 16 x 64 tiles, two per warp of a 16-bit type."""
from .._library import Route, RoutingTable

TOKEN_MULTIPLE = 128
FLAT = {"COLS": 64, "WARPS": 4, "HELD": 2}
ACTS = ("silu", "gelu", "gelu_tanh")

ROUTES = [
    *(Route("act_and_mul_tokens", {"ACT": act, **FLAT}, sample=(21, 256),
            cols_multiple=TOKEN_MULTIPLE) for act in ACTS),
    *(Route("act_and_mul", {"ACT": act, **FLAT}, sample=(21, 400)) for act in ACTS),
]

TABLE = RoutingTable(ROUTES)
