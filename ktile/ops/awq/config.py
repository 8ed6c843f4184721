"""W4A16's routes (one table, by M = rows of x):

- M ≤ DECODE_MAX_M: the decode GEMV (`awq_gemv`, kernels.py), MB rows of x a block (MB 1, 2,
  then 4: M 3..32 takes cdiv(M, 4) row blocks, each reading the weights again, from L2 where
  they fit), split K over groups until about BLOCKS_PER_SM blocks per multiprocessor, then
  matmul's `splitk_reduce` (the op's `also` kernel) adds the partials in a fixed order;
- larger M: `awq_dequant` writes w [K, N] in x's dtype, then ktile.ops.matmul multiplies (the
  first prefill form; a GEMM that dequantises in its producer is the next step).

R 16 words (128 columns) a warp, 4 warps. sm_90a (ptxas, CUDA 13): awq_gemv 54 registers at
MB 1, 72 at MB 4 (MB 8: 158, over the budgets pass's occupancy line: not shipped);
awq_dequant 54. Not yet timed on the H200 (benchmarks/awq.py)."""
from __future__ import annotations

from .._library import Route, RoutingTable

DECODE_MAX_M = 32
BLOCKS_PER_SM = 4
CPU_MULTIPROCESSORS = 4          # the interpreter's stand-in, so CPU calls split K too


def gemv(rows: int, max_rows: int) -> Route:
    return Route("awq_gemv", {"MB": rows, "R": 16, "WARPS": 4}, max_rows=max_rows,
                 sample=(max_rows, 136))


DECODE_ROUTES = [gemv(1, 1), gemv(2, 2), gemv(4, DECODE_MAX_M)]
PREFILL_ROUTES = [Route("awq_dequant", {"R": 16, "KB": 32, "WARPS": 4}, sample=(40, 136))]
TABLE = RoutingTable(DECODE_ROUTES + PREFILL_ROUTES)

# the partials' reduction: ktile.ops.matmul's kernel at its shipped constants
REDUCE = Route("splitk_reduce", {"BN": 32, "UNROLL": 4}, sample=(5, 70))


def split_count(m: int, n: int, k: int, route: Route, multiprocessors: int) -> int:
    """Splits of K's groups for the decode GEMV: enough blocks for BLOCKS_PER_SM per
    multiprocessor, at most one group a split."""
    c = route.constants
    blocks = -(-m // c["MB"]) * -(-(n // 8) // (c["R"] * c["WARPS"]))
    wanted = -(-BLOCKS_PER_SM * multiprocessors // blocks)
    return max(1, min(wanted, k // 128))
