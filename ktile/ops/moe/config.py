"""The grouped GEMM's configuration space, asked at (slots = tokens · top_k, N) and the slot
block BM the layout was aligned to (`moe_align_block_size`'s block_m; `fused_moe` aligns to
FUSED_BLOCK_M). Each route is `moe_gemm_nt` at (BM, BN, BK, WARPS); TOP_K and ROUTED are the
call's (the top-k division and the routed-weight scale, the same registers at every value:
the routes build at Qwen3-30B-A3B's top-8, both forms).

- BM 16 (one MMA row tile: at decode a block holds the one or few slots of one expert, the
  rest padding), BN 32 up to DECODE_SLOTS slots (more blocks in flight while few experts are
  active), BN 64 above (each gathered x tile feeds twice the weight columns);
- BM 32 and 64 for layouts aligned to those blocks (vLLM's larger-batch configs): BN 32.
Not tuned on a GPU yet (docs/ops.md, "MoE")."""
from ...errors import InputError
from .._library import Route, RoutingTable

BLOCK_MS = (16, 32, 64)
FUSED_BLOCK_M = 16
DECODE_SLOTS = 256
BK = 64


def gemm_route(bm: int, bn: int, max_rows: int | None = None, routed: int = 0) -> Route:
    return Route("moe_gemm_nt", {"BM": bm, "BN": bn, "BK": BK, "WARPS": 4, "TOP_K": 8,
                                 "ROUTED": routed},
                 max_rows=max_rows, sample=(3, 96))


ROUTES = [
    gemm_route(16, 32, max_rows=DECODE_SLOTS),
    gemm_route(16, 32, max_rows=DECODE_SLOTS, routed=1),
    gemm_route(16, 64),
    gemm_route(16, 64, routed=1),
    gemm_route(32, 32),
    gemm_route(64, 32),
]

TABLE = RoutingTable(ROUTES)


def choose(slots: int, n: int, block_m: int, target: str | None) -> Route:
    """The first route for `block_m`-slot blocks that fits (slots, n); a pinned route wins."""
    pinned = TABLE.pinned
    if pinned is not None:
        return pinned
    for route in TABLE.measured.get(target, []) + TABLE.routes:
        if route.constants["BM"] == block_m and route.fits(slots, n, target):
            return route
    raise InputError(f"moe_grouped_gemm: no kernel takes blocks of {block_m} slots",
                     hint=f"align with moe_align_block_size(..., block_m) for block_m in "
                          f"{BLOCK_MS}")
