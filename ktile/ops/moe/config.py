"""The grouped GEMM's configuration space, asked at (slots = tokens · top_k, N) and the slot
block BM the layout was aligned to (`moe_align_block_size`'s block_m; `fused_moe` aligns to
FUSED_BLOCK_M). Each route is `moe_gemm_nt` at (BM, BN, BK, WARPS, UNROLL); TOP_K and ROUTED are the
call's (the top-k division and the routed-weight scale, the same registers at every value:
the routes build at Qwen3-30B-A3B's top-8, both forms).

The gather of BM token rows holds its loads' registers while in flight, so the tiles are
small (sm_90a, ptxas, bf16, routed form): BM 16 up to DECODE_SLOTS slots BN 16 BK 32 UNROLL 4
(128 registers, 16 warps a multiprocessor, 4 KiB of weight loads in flight a warp; at decode
a block's x rows are mostly padding, which the gather does not read), above BN 32 BK 32
UNROLL 2 (139, 12 warps; each gathered x tile feeds twice the weight columns); BM 32 BN 16
BK 32 UNROLL 2 (168, 12 warps; gfx1100 and gfx1201 BK 16: at 32 gfx1100 used scratch). BM 64
(vLLM's larger-batch block) took 179 to 255 registers at every tile tried, BN 64 at BM 16
255: not shipped, align to 16 or 32. Not timed on a GPU yet: `benchmarks/moe.py --constants`
times other constants in the same run (docs/ops.md, "MoE")."""
from ...errors import InputError
from .._library import Route, RoutingTable

BLOCK_MS = (16, 32)
FUSED_BLOCK_M = 16
DECODE_SLOTS = 256
RDNA = ("gfx1100", "gfx1201")
NOT_RDNA = ("sm_90a", "gfx942", "gfx950")


def gemm_route(bm: int, bn: int, bk: int, unroll: int, routed: int, targets=None,
               max_rows: int | None = None) -> Route:
    return Route("moe_gemm_nt", {"BM": bm, "BN": bn, "BK": bk, "WARPS": 4, "UNROLL": unroll,
                                 "TOP_K": 8, "ROUTED": routed},
                 sample=(3, 40), targets=targets, max_rows=max_rows)


ROUTES = [
    *(gemm_route(16, 16, 32, 4, routed, max_rows=DECODE_SLOTS) for routed in (0, 1)),
    *(gemm_route(16, 32, 32, 2, routed) for routed in (0, 1)),
    *(gemm_route(32, 16, 32, 2, routed, NOT_RDNA) for routed in (0, 1)),
    *(gemm_route(32, 16, 16, 2, routed, RDNA) for routed in (0, 1)),
]

TABLE = RoutingTable(ROUTES)

# fused_moe's layout: one slot per block (align.direct_layout: no sort, ~20 fewer kernels)
# where the slots' experts rarely repeat (a repeat reads its weights again): one token (its
# top-k experts are distinct), or slots at most experts / DIRECT_SHARE (about slots / (2 ·
# experts) of them repeat: 1/8 at Qwen3-30B-A3B's 4 tokens, 32 of 128 experts).
DIRECT_SHARE = 4


def direct(tokens: int, slots: int, experts: int) -> bool:
    return tokens == 1 or slots * DIRECT_SHARE <= experts


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
