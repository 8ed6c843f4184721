"""W4A16's routes (one table, by M = rows of x):

- M ≤ DECODE_MAX_M: the decode GEMV (`awq_gemv`, kernels.py), MB rows of x a block (MB 1, 2,
  then 4: M 3..32 takes cdiv(M, 4) row blocks, launched next to each other, so the weights'
  second read can come from L2), 16 words (128 columns) a block, its 4 warps splitting CHUNKs of
  32 rows of K, and K split over blocks until about BLOCKS_PER_SM blocks per multiprocessor;
  then matmul's `splitk_reduce` (the op's `also` kernel) adds the partials in a fixed order;
- larger M: `awq_dequant` writes w [K, N] in x's dtype, then ktile.ops.matmul multiplies (the
  first prefill form; a GEMM that dequantises in its producer is the next step).

sm_90a registers (ptxas, CUDA 13.0, bf16, 4 warps): awq_gemv MB 1 / UNROLL 2: 120 (4 blocks
per SM), MB 2 / 4: 128 (4), MB 4 / 2: 153 (3); MB 1 at UNROLL 4 is over the budgets pass's
estimate (138 registers: 12 warps resident), so not shipped. awq_dequant: 60. Not yet timed
on the H200 (benchmarks/awq.py)."""
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
PREFILL_ROUTES = [Route("awq_dequant", {"R": 16, "KB": 32, "WARPS": 4}, sample=(40, 136))]
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
