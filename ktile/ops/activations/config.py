"""Gated activations' configuration space. `ACT` is the op's identity (set by the op function);
the routes naming each activation make the build and emulation tests compile all three. The
table is asked at (tokens, d), in this order:

- `act_and_mul_flat` where d is a multiple of 16 · COLS (every model's intermediate size we
  know: 14336, 12288, 11008, 13824, 28672 are multiples of 256): each token one plane of rows of
  COLS, one flat 16 x COLS tile per warp, a contiguous 16 · COLS run of each half. COLS 16
  (each lane one 16-byte unit of gate and of up, eight outputs: Triton's shape of the
  kernel, many warps resident and, at one token, d / 256 warps across the row) is the default;
  COLS 32 and 64 (two and four units a lane, fewer warps) are variants for the tuner to time;
- `act_and_mul_tokens` where d is a multiple of TOKEN_MULTIPLE (each token's d / 16 columns
  whole 16-byte units in every dtype);
- `act_and_mul` at any d.
The last two hold flat 16 x 64 tiles, two per warp of a 16-bit type."""
from .._library import Route, RoutingTable

TOKEN_MULTIPLE = 128
FLAT = {"COLS": 64, "WARPS": 4, "HELD": 2}
ACTS = ("silu", "gelu", "gelu_tanh")
# (COLS, WARPS) of act_and_mul_flat: the default first, then the tuner's variants
FLAT_TOKEN_SHAPES = ((16, 4), (32, 4), (64, 2))


def flat_route(act: str, cols: int, warps: int) -> Route:
    return Route("act_and_mul_flat", {"ACT": act, "COLS": cols, "WARPS": warps},
                 sample=(3, 16 * cols * 3), cols_multiple=16 * cols)


ROUTES = [
    *(flat_route(act, *FLAT_TOKEN_SHAPES[0]) for act in ACTS),
    *(flat_route("silu", cols, warps) for cols, warps in FLAT_TOKEN_SHAPES[1:]),
    *(Route("act_and_mul_tokens", {"ACT": act, **FLAT}, sample=(21, 256),
            cols_multiple=TOKEN_MULTIPLE) for act in ACTS),
    *(Route("act_and_mul", {"ACT": act, **FLAT}, sample=(21, 400)) for act in ACTS),
]

TABLE = RoutingTable(ROUTES)
