"""Gated activations' configuration space. `ACT` is the op's identity (set by the op function);
the routes naming each activation make the build and emulation tests compile all three."""
from .._library import Route, RoutingTable

ROUTES = [
    Route("act_and_mul", {"ACT": act, "COLS": 64, "WARPS": 4}, sample=(21, 400))
    for act in ("silu", "gelu", "gelu_tanh")
]

TABLE = RoutingTable(ROUTES)
