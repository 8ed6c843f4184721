"""W4A16's routes (one table, by M = rows of x):

- M ≤ DECODE_MAX_M: the decode GEMV (`awq_gemv`, kernels.py), MB rows of x a block (MB 1, 2,
  then 4: M 3..32 takes cdiv(M, 4) row blocks, launched next to each other, so the weights'
  second read can come from L2), 16 words (128 columns) a block, its 4 warps splitting CHUNKs of
  32 rows of K, and K split over blocks until about BLOCKS_PER_SM blocks per multiprocessor;
  then matmul's `splitk_reduce` (the op's `also` kernel) adds the partials in a fixed order;
- larger M: `awq_dequant` (at DEQUANT's constants) writes w [K, N] in x's dtype, then a GEMM
  reads it as it lies: on sm_90a from M > WGMMA_MIN_M `wgmma_ws_nn` (ktile/ops/matmul/
  tiles_ws_nn.py: TMA stages of A and of w's K×N tiles, `acc += a @ s` by wgmma's N-major
  descriptor), tiles as matmul's NT routes (128 × 128 / 6 stages up to 1024 rows, 128 × 256 /
  4 above); elsewhere (and M 33..64 on sm_90a, matmul's split-K skinny kernels) the
  `awq_dequant` route hands w to ktile.ops.matmul. Why dequantise first rather than in the
  GEMM's producer: the pass costs w's 2·K·N bytes written and read again (K 4096 × N 24576:
  201 MB each way, ~0.1 ms at the H200's ~4 TB/s), the GEMM 2·M·N·K flops (M 512: 103 GFLOP,
  ~0.16 ms at ~650 TFLOP/s; estimates, not measurements), and torch's dequantisation before
  cuBLAS (the baseline) makes several [K, N] passes of int32 and 16-bit values; a producer
  that dequantises needs a warpgroup's converted codes stored to shared (no TMA for them), a
  proxy fence before the wgmma reads them, and far more than the producer's 24 registers:
  the next step, for M about 512 and below where the pass is a large part of the time.
  Constants: one H200 run of benchmarks/awq.py --constants picks them (the routes are not
  yet timed). The dequantiser's constants come from DEQUANT.

sm_90a registers (ptxas, CUDA 13.0, bf16, 4 warps): awq_gemv MB 1 / UNROLL 2: 120 (4 blocks
per SM), MB 2 / 4: 128 (4), MB 4 / 2: 153 (3); MB 1 at UNROLL 4 is over the budgets pass's
estimate (138 registers: 12 warps resident), so not shipped. awq_dequant: 60. wgmma_ws_nn
(bf16 / fp16, BN 64..256): 168 at launch (the roles' 24 / 240 after setmaxnreg), 0 spills,
147-205 KB of shared stages. Not yet timed on the H200 (benchmarks/awq.py)."""
from __future__ import annotations

from .._library import AMD_TARGETS, Route, RoutingTable

DECODE_MAX_M = 32
BLOCKS_PER_SM = 4
CPU_MULTIPROCESSORS = 4          # the interpreter's stand-in, so CPU calls split K too


def gemv(rows: int, unroll: int, max_rows: int, targets) -> Route:
    return Route("awq_gemv", {"MB": rows, "R": 16, "CHUNK": 32, "UNROLL": unroll, "WARPS": 4},
                 max_rows=max_rows, targets=targets, sample=(max_rows, 136))


SM90 = ("sm_90a",)
# AMD (clang-22): each x[m, k] is a scalar load into SGPRs, and gfx950 spills SGPRs past
# about 2 of them a step (MB x UNROLL: MB 1 / UNROLL 2: 2 spills, MB 2 / 2: 12, MB 4 / 1: 2),
# so the AMD routes take UNROLL 1 at MB 1 and 2
DECODE_ROUTES = [gemv(1, 2, 1, SM90), gemv(2, 4, 2, SM90), gemv(4, 2, DECODE_MAX_M, SM90),
                 gemv(1, 1, 1, AMD_TARGETS), gemv(2, 1, DECODE_MAX_M, AMD_TARGETS)]
# prefill: the dequantiser's constants, then the GEMM the route names
DEQUANT = Route("awq_dequant", {"R": 16, "KB": 32, "WARPS": 4}, sample=(40, 136))
WGMMA_MIN_M = 64
WS_SMALL_M = 1024


def wgmma_nn(bn: int, stages: int, **fits) -> Route:
    return Route("wgmma_ws_nn", {"BN": bn, "STAGES": stages, "GROUP_M": 8}, targets=SM90,
                 min_rows=WGMMA_MIN_M + 1, sample=(200, 264), **fits)


# wgmma_nn's routes (128 x 128 / 6 stages up to WS_SMALL_M rows, 128 x 256 / 4 above) are not
# shipped: wgmma_ws_nn gave wrong results on the H200 (eighth session,
# docs/results/h200_2026-12-02_s8_r2a/tier3.log); prefill dequantises, then ktile.ops.matmul
PREFILL_ROUTES = [DEQUANT]
PREFILL_KERNELS = ("awq_dequant", "wgmma_ws_nn")        # the routes that dequantise first
TABLE = RoutingTable(DECODE_ROUTES + PREFILL_ROUTES)

# the partials' reduction: ktile.ops.matmul's kernel at its shipped constants
REDUCE = Route("splitk_reduce", {"BN": 32, "UNROLL": 4}, sample=(5, 70))


def split_count(m: int, n: int, k: int, route: Route, multiprocessors: int) -> int:
    """Splits of K's chunks for the decode GEMV: enough blocks for BLOCKS_PER_SM per
    multiprocessor, each warp at least one chunk."""
    c = route.constants
    blocks = -(-m // c["MB"]) * -(-(n // 8) // c["R"])
    wanted = -(-BLOCKS_PER_SM * multiprocessors // blocks)
    return max(1, min(wanted, k // (c["CHUNK"] * c["WARPS"])))
