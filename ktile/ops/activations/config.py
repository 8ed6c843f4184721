"""Gated activations' configuration space. `ACT` is the op's identity (set by the op function);
the routes naming each activation make the build and emulation tests compile all three. The
table is asked at (tokens, d), in this order:

- `act_and_mul_flat` where d is a multiple of 16 · COLS (every model's intermediate size we
  know: 14336, 12288, 11008, 13824, 28672 are multiples of 256): each token one plane of rows of
  COLS, one flat 16 x COLS tile per warp, a contiguous 16 · COLS run of each half. Up to
  DECODE_TOKENS tokens COLS 16 (each lane one 16-byte unit of gate and of up, eight outputs:
  Triton's shape of the kernel; at one token d / 256 warps across the row); above, COLS 32
  where d allows (two units a lane: sm_90a static SASS 145 instructions per eight outputs a
  lane where COLS 16 takes 183 and Triton's kernel executes about 164; 54 registers), else 16.
  COLS 64 (WARPS 2, 126 per eight, 76 registers) is a variant for the tuner to time;
- `act_and_mul_tokens` where d is a multiple of TOKEN_MULTIPLE (each token's d / 16 columns
  whole 16-byte units in every dtype);
- `act_and_mul` at any d.
The last two hold flat 16 x 64 tiles, two per warp of a 16-bit type."""
from .._library import Route, RoutingTable

TOKEN_MULTIPLE = 128
FLAT = {"COLS": 64, "WARPS": 4, "HELD": 2}
ACTS = ("silu", "gelu", "gelu_tanh")
DECODE_TOKENS = 256
# (COLS, WARPS) of act_and_mul_flat's routes, in the table's order
FLAT_TOKEN_SHAPES = ((16, 4), (32, 4), (64, 2))


def flat_route(act: str, cols: int, warps: int, max_rows: int | None = None) -> Route:
    return Route("act_and_mul_flat", {"ACT": act, "COLS": cols, "WARPS": warps},
                 sample=(3, 16 * cols * 3), cols_multiple=16 * cols, max_rows=max_rows)


ROUTES = [
    *(flat_route(act, 16, 4, max_rows=DECODE_TOKENS) for act in ACTS),
    *(flat_route(act, 32, 4) for act in ACTS),
    *(flat_route(act, 16, 4) for act in ACTS),
    flat_route("silu", 64, 2),
    *(Route("act_and_mul_tokens", {"ACT": act, **FLAT}, sample=(21, 256),
            cols_multiple=TOKEN_MULTIPLE) for act in ACTS),
    *(Route("act_and_mul", {"ACT": act, **FLAT}, sample=(21, 400)) for act in ACTS),
]

TABLE = RoutingTable(ROUTES)
