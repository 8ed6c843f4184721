"""`swap_gemv_nt` (sm_90a, M ≤ MN ≤ 32, b = W.t()): the decode product with W on the wgmma's
64-row M side ("swap AB") and the few rows of a as its N side, in one launch.

Block n owns W rows [64n, 64n + 64) (out's columns). Its warpgroup streams all of K through a
ring of STAGES stages, each W's 64 × BK tile and a's MN × BK tile by TMA (a's rows past M
zero-filled: no padding of a to 64 rows, MN = 16 or 32 is the wgmma's N), one wgmma
m64nMNk16 chain a stage with both operands from shared memory (`sw @ sx.T`), one in flight
while the next stage's loads land (skinny_wgmma.py's loop, its roles swapped). Warp w's
accumulator is W rows [64n + 16w, +16) × a's MN rows: out's transpose. The epilogue takes
each of the MN columns as a vector of 16 (a masked row sum: the language has no register
transpose), adds the bias and stores it as 16 consecutive values of out's row m (rows past
M store nothing). No split of K: cdiv(N, 64) blocks (64 at N 4096), one a multiprocessor
with (STAGES - 1) · 16 KiB of W in flight at BK 128, so a block streams its 512 KiB of W
at 4096 × 4096 alone; whether 64 such streams reach the copy rate is for the H200 to say.

Pinnable, untimed (benchmarks/gemv_sweep.py times it); no route.
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

from .dtypes import pair

W_ROWS = 64             # a warpgroup's wgmma M side: W rows a block
MAX_STAGES = 8          # sm_90a's 16 TMA arrival slots over 2 tiles a stage

SHAPES = [
    (lambda p: 3 <= p.STAGES <= MAX_STAGES, f"STAGES must be 3 to {MAX_STAGES} (a stage's "
     "loads are waited for one MMA ahead; two TMA tiles a stage, 16 mbarriers)"),
    (lambda p: p.MN in (16, 32), "MN (a's rows as the wgmma's N side) must be 16 or 32"),
    (lambda p: p.a.batch * p.a.depth == 1, "a must be 2-D [M, K]"),
    (lambda p: p.a.rows <= p.MN, "a must have at most MN rows (M): pin MN 32, or a larger "
     "M takes skinny_wgmma_nt"),
    (lambda p: p.b.batch * p.b.depth == 1 and p.b.cols == p.a.cols,
     "b must be the weight [N, K] with a's K columns"),
    (lambda p: p.out.batch * p.out.depth == 1 and p.out.rows == p.a.rows
     and p.out.cols == p.b.rows, "out must be [M, N]: a's M rows, N = b.rows"),
    (lambda p: p.bias.cols == p.b.rows and p.bias.rows * p.bias.depth * p.bias.batch == 1,
     "bias must hold one value per row of W (N values)"),
]


@functools.lru_cache(maxsize=None)
def swap_gemv_nt(dtype: str):
    """out = a · Wᵀ + bias for the pair's input and output dtype (module docstring)."""
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (hk.cdiv(p.b.rows, W_ROWS),), warps=4, requires=SHAPES)
    def matmul_swap_gemv_nt(a: hk.Tensor[DT], b: hk.Tensor[DT], bias: hk.Tensor[DT],
                            out: hk.Tensor[OUT], *, MN: hk.Constexpr[int] = 16,
                            BK: hk.Constexpr[int] = 128, STAGES: hk.Constexpr[int] = 6):
        n, w = hk.arch.block_idx.x, hk.arch.warp_id
        tiles = hk.cdiv(a.cols, BK)
        end = STAGES * hk.cdiv(tiles, STAGES)               # whole rounds; past K: zeros
        sw = [hk.shared(hk.ST(DT, W_ROWS, BK)) for _ in range(STAGES)]
        sx = [hk.shared(hk.ST(DT, MN, BK)) for _ in range(STAGES)]
        acc = hk.zeros(hk.RT(hk.fp32, W_ROWS // 4, MN))    # W rows 16w.. x a's rows
        for s in range(STAGES - 1):
            hk.group.load(sw[s], b[hk.tile_coord(0, 0, n, s)])
            hk.group.load(sx[s], a[hk.tile_coord(0, 0, 0, s)])
        hk.wait_for(sw[0], sx[0])
        hk.barrier()
        for k in range(0, end, STAGES):
            for s in range(STAGES):                         # unrolled: buffer s, tile k + s
                acc += sw[s] @ sx[s].T                      # in flight
                free, nxt = (s + STAGES - 1) % STAGES, (s + 1) % STAGES
                hk.wait_for(sw[free], sx[free], sw[nxt], sx[nxt])   # MMA k+s-1, loads k+s+1
                hk.barrier()                                # every warp is done with k+s-1
                t = k + s + STAGES - 1
                t = hk.where(t < end, t, tiles)             # past the run: past K, no read
                hk.group.load(sw[free], b[hk.tile_coord(0, 0, n, t)])
                hk.group.load(sx[free], a[hk.tile_coord(0, 0, 0, t)])
        hk.wait_for(acc, *sw, *sx)                          # the last MMA, the prefetches
        col0 = n * W_ROWS + w * (W_ROWS // 4)               # out's first column of this warp
        plus = bias[hk.elem_coord(0, 0, 0, col0)].load(hk.RV(DT, W_ROWS // 4, "row"))
        plus = plus.to(hk.fp32)
        index = hk.iota(hk.RT(hk.fp32, W_ROWS // 4, MN), "col")
        for m in range(MN):                                 # column m of acc: out's row m
            row = hk.where(index == float(m), acc, 0.0).row_sum()
            out[hk.elem_coord(0, 0, m, col0)] = (row + plus).to(OUT)
    return matmul_swap_gemv_nt
