"""Matmul's configuration space: routes for two layouts of b (the op picks the layout by b's
strides, then the first route of that layout's kernels by M = rows, N = cols and the target):

- NT: b is `W.t()` for a weight W [N, K] (nn.Linear): the kernels read W's rows.
- NN: b is [K, N] row-major: the kernels read b's K×BN tiles in column layout.

On sm_90a, M = 1 with b = W.t() and K a multiple of 16 takes the decode GEMV (`gemv_nt`: one
kernel, flat 16-byte tiles, no split-K) and M 2..64 with b = W.t() `skinny_wgmma_nt`. Otherwise
M ≤ 64 takes the skinny kernels, split-K over blocks plus `splitk_reduce` (the op's `also`
kernel); larger M the tile kernels (`wgmma_ws_nt` on sm_90a, `tiles_nt` on AMD targets and the
interpreter, `tiles_nn` everywhere). The skinny constants are per lane width: a 32-lane
warp holds a 16-bit R×C tile in R·C/64 registers per lane, a 64-lane wave in half that, so
32-lane targets (sm_90a, gfx1100, gfx1201) take shallower K tiles. On sm_90a, M 2..64 with
b = W.t() (and M = 1 where K is no multiple of 16) takes `skinny_wgmma_nt` (skinny_wgmma.py:
W by TMA into wgmma, split K as the resident slots allow, the same `splitk_reduce`); its
`skinny_nt` routes stop at M = 32 (the budgets pass's estimate puts every 64-row form under its
occupancy floor) and are pinnable there. At 64 rows gfx1100 takes BK 16: BK 32 spills there (clang-22: 30 VGPRs in the W.t() form, 62 row-major).
Every route builds with zero spills (tests/tier1/test_ops_build.py) and traces within the
budgets pass's estimate (tests/tier0/test_ops_routes.py)."""
from __future__ import annotations

from ...errors import InputError
from .._library import AMD_TARGETS, Route, RoutingTable

SM90 = ("sm_90a",)
LANES32_AMD = ("gfx1100", "gfx1201")
LANES64 = ("gfx942", "gfx950")


def skinny(kernel: str, rows: int, bk: int, unroll: int, targets, warps: int = 4) -> Route:
    return Route(kernel, {"ROWS": rows, "BN": 32, "BK": bk, "UNROLL": unroll, "WARPS": warps},
                 max_rows=rows, targets=targets, sample=(rows - 3, 70))


def skinny_routes(kernel: str) -> list[Route]:
    return [
        skinny(kernel, 16, 32, 2, SM90), skinny(kernel, 32, 32, 1, SM90),
        skinny(kernel, 16, 32, 2, LANES32_AMD), skinny(kernel, 32, 32, 1, LANES32_AMD),
        skinny(kernel, 64, 16, 1, ("gfx1100",)), skinny(kernel, 64, 32, 1, ("gfx1201",)),
        skinny(kernel, 16, 64, 2, LANES64), skinny(kernel, 32, 64, 1, LANES64),
        skinny(kernel, 64, 32, 1, LANES64),
    ]


def gemv(rows: int, unroll: int, max_rows: int, ahead: int = 0) -> Route:
    constants = {"MB": rows, "UNROLL": unroll, "WARPS": 4, **({"AHEAD": 1} if ahead else {})}
    return Route("gemv_nt", constants, max_rows=max_rows, max_cols=GEMV_MAX_N, targets=SM90,
                 sample=(max_rows - 1 or 1, 70))


def gemv_stream(rows: int, w_rows: int, unroll: int, depth: int) -> Route:
    return Route("gemv_stream_nt", {"MB": rows, "RW": w_rows, "UNROLL": unroll, "DEPTH": depth,
                                    "WARPS": 4}, max_rows=rows, targets=SM90, sample=(rows, 70))


# The decode GEMV on sm_90a for M ≤ 8, b = W.t() and K a multiple of 16 (the [., K/16, 16]
# views). `gemv_stream_nt` (gemv_stream.py): a grid of blocks_per_sm blocks per
# multiprocessor (the op passes BLOCKS = multiprocessors x blocks_per_sm), each warp looping
# over groups of RW W rows, MB rows of a per warp (M <= MB), a queue of DEPTH steps of
# RW x UNROLL W tiles carried through the K loop: a step's loads are issued DEPTH steps before
# its math. DEPTH 2 because ptxas sinks the next step's loads below the current step's math
# (fewer live registers): at DEPTH 1 they would land only at the next step's start.
# blocks_per_sm is the residency ptxas's registers allow (CUDA 13.0, bf16, 4 warps a block):
# MB / RW / UNROLL / DEPTH 1 / 2 / 1 / 2: 80 registers, 6 blocks (24 warps, 4 W tiles of
# 512 bytes carried each); 2 / 2 / 1 / 2: 110, 4; 4 / 1 / 1 / 3: 104, 4; 8 / 1 / 1 / 2: 168, 3
# (at M 5..8 the FMA form is bounded by issue: about 9 instructions per W element and row of
# a). Read again after flat_tile.hpp's element path went out of line (95a2376): 72 / 96 / 96
# / 160 registers and 7 / 5 / 5 / 3 blocks before it. benchmarks/matmul.py --decode-only
# times the routes against cuBLAS, --route gemv_stream_nt:MB=...,RW=...,UNROLL=...,DEPTH=...
# other constants, --route skinny_nt / gemv_nt the earlier kernels.
# `gemv_nt` (gemv.py, one W row per warp, blocks that end after one row; ptxas interleaves its
# loads with the math, about one W access in flight per warp) stays pinnable: on the H200
# (2026-12-02) 38.6 us at 1 x 12288 x 4096 (62% of copy), 56.8 at M = 2.
STREAM_BLOCKS_PER_SM = {(1, 2, 1, 2): 6, (2, 2, 1, 2): 4, (4, 1, 1, 3): 4,
                        (8, 1, 1, 2): 3}     # by (MB, RW, UNROLL, DEPTH), 4 warps
STREAM_BLOCKS_PER_SM_OTHER = 3   # other constants where no build says (the interpreter)
GEMV_K_MULTIPLE = 16
GEMV_MAX_N = 65535 * 4           # gemv_nt's grid y extent times its routes' 4 warps
# Measured on the H200 (2026-12-02 07:50 UTC, benchmarks/matmul.py --quick --decode-only with
# --route): gemv_nt MB 1 18.5 / 39.4 us at 1 x 4096 / 12288 x 4096 against gemv_stream_nt's
# 23.9 / 46.0 (DEPTH 1: 23.7 / 45.1; DEPTH 3: 23.9 / 54.2); at M 8 the split-K skinny_nt
# 43.9 / 84.6 against gemv_stream_nt MB 8's 67.5 / 159.4; at 4 x 24576 x 4096 148.9 against
# 177.7. The streaming routes are listed after the others: pinnable and tunable, never chosen
# first. gemv_nt serves M = 1 only: skinny_wgmma_nt's cost does not depend on M up to 16 (a's
# rows padded to 64 by TMA), and at M 16 it took 26.0-79.2 us on the five decode N x K where
# gemv_nt MB 2 took 26.9-98.1 and skinny_nt at M 4 / 8 41.7-150.7 (H200, 2026-12-02,
# docs/results/matmul_h200_2026-12-02c): M 2..8 take it too (benchmarks/gemv_sweep.py times
# every form at every M; gemv(2, 2, 2) and skinny_nt stay pinnable).
# M = 1 takes AHEAD 1 at UNROLL 2 (gemv.py: the next step's two W tiles loaded before this
# step's math; 64 registers, 32 warps, ~32 KB in flight a multiprocessor) over UNROLL 4 / AHEAD
# 0, the form the H200 timed (one W access in flight a warp; 80 registers, 24 warps, ~12 KB
# since 95a2376): a choice by construction, not yet timed (gemv_sweep.py times both).
GEMV_ROUTES = [gemv(1, 2, 1, ahead=1)]
GEMV_PINNABLE = [gemv(1, 4, 1), gemv(2, 2, 2)]
STREAM_ROUTES = [gemv_stream(1, 2, 1, 2), gemv_stream(2, 2, 1, 2), gemv_stream(4, 1, 1, 3),
                 gemv_stream(8, 1, 1, 2)]


def stream_blocks_per_sm(route: Route) -> int | None:
    """The blocks per multiprocessor gemv_stream_nt's grid takes at a shipped route's
    constants; None at others (a benchmark's pinned --route: the op reads its build's)."""
    c = route.constants
    if c.get("WARPS", 4) != 4:                   # the table's residencies are of 4-warp blocks
        return None
    return STREAM_BLOCKS_PER_SM.get((c.get("MB", 1), c.get("RW", 2), c.get("UNROLL", 1),
                                     c.get("DEPTH", 2)))


def stream_blocks(route: Route, multiprocessors: int, resident: int | None = None) -> int:
    """gemv_stream_nt's grid: the route's blocks per multiprocessor (else `resident`, else
    STREAM_BLOCKS_PER_SM_OTHER) on every one."""
    per_sm = stream_blocks_per_sm(route) or resident or STREAM_BLOCKS_PER_SM_OTHER
    return multiprocessors * per_sm

# sm_90a M 2..64 (and M = 1 where K % 16: no GEMV view), b = W.t(): skinny_wgmma_nt
# (skinny_wgmma.py), W streamed once by TMA into wgmma (a's rows padded to 64 as the MMA's M
# side), split K over blocks only as far as the N/BN blocks leave the multiprocessors'
# resident slots empty (wgmma_splits), then splitk_reduce. 4 warps, BN 128, BK 64, 3 stages:
# 72 KiB of shared memory, 3 blocks per SM. (The wrong rows of STAGES 4 / A_REGS 1 on the H200,
# 2026-12-02, were the accumulator read above the final drain, in every stage count's PTX:
# fixed in the waits pass, skinny_wgmma.py's docstring; STAGES 4 stays pinnable until timed.)
SKINNY_WGMMA_ROUTES = [Route("skinny_wgmma_nt", {"BN": 128, "BK": 64, "STAGES": 3},
                             max_rows=64, targets=SM90, sample=(20, 70))]
# The same pipeline with no split of K and no second kernel (skinny_wgmma.wgmma_gemv_nt):
# cdiv(N, BN) blocks in one wave, the bias added and rounded in its epilogue, so the
# reduction's launch and partials are gone where narrow W bands alone fill the machine
# (BN 32: 128 blocks at N 4096). 4 stages of a's 64 x 128 and W's 32 x 128 tiles: 96 KiB,
# 2 blocks per SM. Untimed: pinnable, listed after skinny_wgmma_nt, and in
# benchmarks/gemv_sweep.py's grid (BN 32 / 64, BK 64 / 128 / 256, a in shared or registers).
WGMMA_GEMV_ROUTES = [Route("wgmma_gemv_nt", {"BN": 32, "BK": 128, "STAGES": 4},
                           max_rows=64, targets=SM90, sample=(5, 70))]
# "Swap AB" (swap_gemv.py): W's rows on the wgmma's 64-row M side, a's rows as its N side
# (MN 16 or 32: no padding of a to 64 rows), W streamed by TMA through a ring of 6 stages of
# 64 x 128 (16 KiB), one launch, no split of K (cdiv(N, 64) blocks, one a multiprocessor by
# shared memory). ptxas 13: 122 / 52 registers at MN 16 / 32, 0 spills, no serialized wgmma.
# Untimed: pinnable only, after the routes above (benchmarks/gemv_sweep.py times it).
SWAP_GEMV_ROUTES = [Route("swap_gemv_nt", {"MN": mn, "BK": 128, "STAGES": 6}, max_rows=mn,
                          targets=SM90, sample=(mn - 3, 70)) for mn in (16, 32)]

# sm_90a: wgmma_ws_nt (tiles_ws.py: a producer warpgroup and two consumer warpgroups over a
# pipeline of stages, one block per SM, 168 registers at launch, 0 spills, ptxas 13.0), its
# 1-D grid in grouped raster order (GROUP_M row tiles of one column band before the next
# band: a wave of 132 blocks covers about 8 x 16 tiles, so W's and A's tiles are read from
# DRAM about once instead of once per 128-row band when W is over the L2: N 12288 / 24576
# measured 0.64-0.88x cuBLAS in row-major order). Tile widths by M and N:
# - M > WS_SMALL_M: 128 x 256, 4 stages of 48 KiB (5 do not fit), the fewest shared reads
#   per product;
# - M 385..512 (4 row tiles) with N a multiple of 6144: 128 x 192, 5 stages of 40 KiB (one
#   m64n192k16 a K slice): 4 x N / 192 = 128 tiles per 6144 columns, whole waves of the
#   H200's 132 SMs where 128 columns take 1.45 (M 512 x N 6144: one wave of 1.5 128-column
#   tiles' time against two; equal at N 12288 / 24576 by that count);
# - other M <= WS_SMALL_M: 128 x 128, 6 stages of 32 KiB: twice the blocks of 128 x 256
#   (M 512 x N 4096: 128 blocks on 132 SMs instead of 64) and never more waves x columns
#   (2t tiles take ceil(2t / 132) <= 2 ceil(t / 132) waves).
# Not yet timed as routed (docs/pipelines.md has the command). wgmma_nt (8 warps, 128 x 128,
# two blocks per SM) kept as the pinned / tuned alternative; wgmma_ws_persistent_nt (one block
# a multiprocessor looping over grouped output tiles, 128 x 256 / 4 stages, as cuBLAS's
# cooperative persistent kernels, or 128 x 128 / 5; MMAs in flight, 0 spills; untimed) and
# wgmma_sync_nt (the MMA waited for at once): never chosen first, timed when pinned
# (benchmarks/matmul.py --route wgmma_sync_nt) or by the tuner
WS_SMALL_M = 1024
NT_TILES = [Route("tiles_nt", {}, targets=AMD_TARGETS, sample=(70, 100)),
            Route("wgmma_ws_nt", {"BN": 192, "STAGES": 5, "GROUP_M": 8}, min_rows=385,
                  max_rows=512, cols_multiple=6144, targets=SM90, sample=(400, 6144)),
            Route("wgmma_ws_nt", {"BN": 128, "STAGES": 6, "GROUP_M": 8}, max_rows=WS_SMALL_M,
                  targets=SM90, sample=(300, 300)),
            Route("wgmma_ws_nt", {"BN": 256, "STAGES": 4, "GROUP_M": 8}, targets=SM90,
                  sample=(70, 300)),
            Route("wgmma_ws_persistent_nt", {"BN": 256, "STAGES": 4, "SMS": 132},
                  targets=SM90, sample=(300, 300)),
            Route("wgmma_ws_persistent_nt", {"BN": 128, "STAGES": 5, "SMS": 132},
                  targets=SM90, sample=(300, 300)),
            Route("wgmma_nt", {}, targets=SM90, sample=(70, 100)),
            Route("wgmma_sync_nt", {}, targets=SM90, sample=(70, 100))]
# tiles_ws_nn.py's wgmma_ws_nn (b read K×N by the transposed-B wgmma) is not routed: on the
# H200 (eighth session, docs/results/h200_2026-12-02_s8_r2a/tier3.log) it gave wrong results at
# every shape tier 3 tried (tests/tier3/test_matmul_ws_nn_gpu.py, strict xfail until fixed)
NN_TILES = [Route("tiles_nn", {}, sample=(70, 100))]

# One table, the op's (what `all_kernels()` lists and the build tests build). CI builds the
# first and the last route of each target (tests/tier1/test_ops_build.py), so the order puts
# the W.t() layout's decode kernel first and its tile kernel last; the row-major layout's
# kernels (the same designs) sit between, built in the full sweep and emulated in tier 2.
TABLE = RoutingTable(GEMV_ROUTES + SKINNY_WGMMA_ROUTES + WGMMA_GEMV_ROUTES + SWAP_GEMV_ROUTES
                     + GEMV_PINNABLE
                     + skinny_routes("skinny_nt") + STREAM_ROUTES + skinny_routes("skinny_nn")
                     + NN_TILES + NT_TILES)


def choose(layout: str, rows: int, cols: int, target: str | None,
           depth: int | None = None) -> Route:
    """The first route of `layout`'s kernels ("nt": b is W.t(); "nn": b row-major) that fits
    M = rows, N = cols on `target` (None: the interpreter) and K = depth (None: unknown, no
    GEMV route); a pinned route of the layout (a test's) wins, as in `RoutingTable.choose`."""
    pinned = TABLE.pinned
    if pinned is not None and pinned.kernel.endswith(layout):
        return pinned
    for route in TABLE.measured.get(target, []) + TABLE.routes:
        if route.kernel.startswith("gemv") and (depth is None or depth % GEMV_K_MULTIPLE):
            continue
        if route.kernel.endswith(layout) and route.fits(rows, cols, target):
            return route
    raise InputError(f"matmul: no kernel handles M = {rows}, N = {cols} on "
                     f"{target or 'the CPU'}", hint="file an issue with the shape")


# the reduction: 16 x 32 fp32 tiles, 4 splits' loads in flight (sm_90a: 126 registers, ptxas
# 13; 16 x 64 at 4 took 220, over the budgets pass's warning line)
REDUCE = Route("splitk_reduce", {"BN": 32, "UNROLL": 4}, sample=(5, 70))

# Split-K over blocks for the skinny kernels: enough blocks for BLOCKS_PER_SM per
# multiprocessor, each warp left at least MIN_TILES_PER_WARP of its K tiles, at most MAX_SPLITS
BLOCKS_PER_SM = 4
MIN_TILES_PER_WARP = 2
MAX_SPLITS = 16
CPU_MULTIPROCESSORS = 4          # the interpreter's stand-in, so CPU calls split K too


def splits(n_blocks: int, k_tiles: int, warps: int, multiprocessors: int) -> int:
    """How many blocks share one BN-slice's K tiles: 1 when the slices alone fill the GPU."""
    wanted = -(-BLOCKS_PER_SM * multiprocessors // n_blocks)
    most = max(1, k_tiles // (warps * MIN_TILES_PER_WARP))
    return max(1, min(wanted, most, MAX_SPLITS))


def sm90a_multiprocessor():
    """The sm_90a facts table's multiprocessor (shared memory per SM and per block)."""
    from ...targets import get
    return get("sm_90a").multiprocessor


def wgmma_splits(constants: dict, n_blocks: int, k_tiles: int, multiprocessors: int) -> int:
    """skinny_wgmma_nt's split count: as many splits as the resident block slots (shared
    memory bound: its stages) hold beside the N/BN blocks, one wave, each split at least two
    rounds of STAGES tiles, at most MAX_SPLITS; 1 when the N blocks alone fill the slots."""
    from . import skinny_wgmma
    sm = sm90a_multiprocessor()
    a_rows = 0 if constants.get("A_REGS") else skinny_wgmma.MAX_ROWS   # a in shared memory
    stage_bytes = (a_rows + constants["BN"]) * constants["BK"] * 2
    block_bytes = constants["STAGES"] * stage_bytes + sm.shared_reserved_per_block
    slots = max(1, sm.shared_bytes // block_bytes) * multiprocessors
    most = max(1, k_tiles // (2 * constants["STAGES"]))
    wanted = max(1, min(slots // n_blocks, most, MAX_SPLITS))
    per = skinny_wgmma.run_length(k_tiles, wanted, constants["STAGES"])
    return -(-k_tiles // per)          # no split left with nothing but tiles past K


def split_count(route: Route, n: int, k: int, multiprocessors: int) -> int:
    """Blocks sharing one BN-slice's K tiles for a skinny route at N = n, K = k."""
    c = route.constants
    n_blocks, k_tiles = -(-n // c["BN"]), -(-k // c["BK"])
    if route.kernel == "skinny_wgmma_nt":
        return wgmma_splits(c, n_blocks, k_tiles, multiprocessors)
    return splits(n_blocks, k_tiles, c["WARPS"], multiprocessors)
