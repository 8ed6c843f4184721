"""The streaming decode GEMV (M ≤ 8, b = W.t() of a row-major weight W [N, K], K a multiple
of 16): out = a · Wᵀ (+ bias), one kernel, W read exactly once, on a grid sized to the machine.

Views as in gemv.py: W as [N, K/16, 16] and a as [M, K/16, 16], so a flat 16 × 16 tile at tile
row r of a plane is 256 consecutive elements of one row (a 512-byte warp access, one 16-byte
unit per lane) and W's and a's tiles at the same r hold the same K indices in the same lanes.

Work: W's rows in groups of RW. The grid is BLOCKS blocks of WARPS warps (BLOCKS from the
device's multiprocessor count: the op passes it), and warp w of block x takes groups
w·BLOCKS + x, then every BLOCKS·WARPS-th (a persistent loop: no block ends after one row, and
a last round of fewer groups than warps is spread over every block). For its group a warp walks
K UNROLL tiles at a time (a step) and carries a queue of the next DEPTH steps' RW·UNROLL W
tiles through the loop: a step's W loads are issued DEPTH steps before its math, so they are
in flight during the math between (DEPTH 2 where ptxas sinks a step's loads below the
current math to save registers: at DEPTH 1 they would land only when needed). Each W tile is
multiplied by all MB a tiles while it is in registers (a's tiles, L1 hits after the first
warp, are loaded where they are used: each serves RW rows of W). The RW·MB fp32
accumulators are reduced once per group (`hk.tile_sum`: the lane's elements, then a fixed
butterfly: the same bits every run, no atomics), the bias added in fp32, rounded once.

Out is [M, N, 1] and the bias [N, 1]: a 16-element column vector at (m, n, 0) has one element
inside the global, a single-value store. Edges: tile rows past K/16, rows past N or M read 0;
outputs past N or M are not written.

Why it measured slower than gemv_nt (H200, 2026-12-02; SASS of MB 1 / RW 2 / DEPTH 2, CUDA
13.0): the queue works (the next step's two W LDG.128 are issued mid-body and consumed two
iterations later; 72 registers, 28 warps, up to ~56 KB in flight a multiprocessor by
construction), but each iteration first waits for its a load (an L1 hit at best) before its
math, and the grid leaves warps idle or in a ragged last round: at N 4096 2048 groups of 2
rows meet 3696 resident warps (half idle, each running a 16-step serial chain), at N 12288
6144 groups take 1.66 rounds. At MB 8 (160 registers, 12 warps) the FMA form is issue-bound:
about 136 instructions a lane per 16-byte W unit (W's unpack, then 8 rows x (a's unpack and
8 FFMAs)), against ~124 a copy-rate stream leaves.
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

from .dtypes import pair

MAX_ACCUMULATORS = 8    # RW · MB fp32 tiles a warp carries through its K loop (named below)
MAX_W_TILES = 8         # RW · UNROLL · DEPTH W tiles carried ahead (named below)

STREAM_SHAPES = [
    (lambda p: p.RW * p.MB <= MAX_ACCUMULATORS,
     f"RW x MB (W rows x a rows per warp) must be at most {MAX_ACCUMULATORS}"),
    (lambda p: p.DEPTH >= 1 and p.RW * p.UNROLL * p.DEPTH <= MAX_W_TILES,
     f"RW x UNROLL x DEPTH (W tiles carried per warp) must be 1 to {MAX_W_TILES}"),
    (lambda p: p.a.depth <= p.MB, "MB (the rows of a each warp holds) must be at least M"),
    (lambda p: p.a.batch == 1 and p.a.cols == 16, "a must be passed as [M, K/16, 16]"),
    (lambda p: p.w.batch == 1 and p.w.cols == 16 and p.w.rows == p.a.rows,
     "w must be the weight passed as [N, K/16, 16], a's K/16 rows"),
    (lambda p: p.out.batch == 1 and p.out.depth == p.a.depth and p.out.rows == p.w.depth
     and p.out.cols == 1, "out must be passed as [M, N, 1]"),
    (lambda p: p.bias.batch * p.bias.depth == 1 and p.bias.rows == p.w.depth
     and p.bias.cols == 1, "bias must be passed as [N, 1]"),
]


@functools.lru_cache(maxsize=None)
def gemv_stream_nt(dtype: str):
    """out = a · Wᵀ + bias for the pair's input and output dtype (docstring above)."""
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (p.BLOCKS,), warps="WARPS", requires=STREAM_SHAPES)
    def matmul_gemv_stream_nt(a: hk.Tensor[DT], w: hk.Tensor[DT], bias: hk.Tensor[DT],
                              out: hk.Tensor[OUT], *, MB: hk.Constexpr[int] = 1,
                              RW: hk.Constexpr[int] = 2, UNROLL: hk.Constexpr[int] = 1,
                              DEPTH: hk.Constexpr[int] = 2, WARPS: hk.Constexpr[int] = 4,
                              BLOCKS: hk.Constexpr[int] = 528):
        t = hk.RT(DT, 16, 16, "flat")
        first = hk.arch.warp_id * BLOCKS + hk.arch.block_idx.x
        for g in range(first, hk.cdiv(w.depth, RW), BLOCKS * WARPS):
            n0 = g * RW
            # named carried values (a runtime loop carries names, not list items): the RW·MB
            # accumulators (W row i and a row m at i·MB + m) and the RW·UNROLL W tiles of the
            # next step (row i, tile u at i·UNROLL + u); past their counts a scalar 0 the
            # loop leaves alone
            c0, c1, c2, c3, c4, c5, c6, c7 = [
                hk.zeros(hk.RT(hk.fp32, 16, 16, "flat")) if j < RW * MB else 0.0
                for j in range(MAX_ACCUMULATORS)]
            # the queue of W tiles: DEPTH steps of RW·UNROLL (row i, tile u of step s at
            # (s·RW + i)·UNROLL + u), past its length a scalar 0 the loop leaves alone
            w0, w1, w2, w3, w4, w5, w6, w7 = [
                w[hk.tile_coord(0, n0 + j // UNROLL % RW, j // (RW * UNROLL) * UNROLL
                                + j % UNROLL, 0)].load(t)
                if j < DEPTH * RW * UNROLL else 0.0 for j in range(MAX_W_TILES)]
            for r in range(0, hk.cdiv(w.rows, 16), UNROLL):
                queue = [w0, w1, w2, w3, w4, w5, w6, w7]
                ws = queue[:RW * UNROLL]
                # the step DEPTH ahead, in flight during this step's math and the DEPTH - 1
                # steps between (past K: 0, no memory read)
                ahead = [w[hk.tile_coord(0, n0 + j // UNROLL, r + DEPTH * UNROLL + j % UNROLL,
                                         0)].load(t) for j in range(RW * UNROLL)]
                queue = queue[RW * UNROLL:DEPTH * RW * UNROLL] + ahead
                w0, w1, w2, w3, w4, w5, w6, w7 = queue + [0.0] * (MAX_W_TILES - len(queue))
                accs = [c0, c1, c2, c3, c4, c5, c6, c7]
                for u in range(UNROLL):
                    # a's tiles (L1 hits after the first warp) loaded where they are used:
                    # MB · UNROLL of them held at once would cost the registers of occupancy
                    xs = [a[hk.tile_coord(0, m, r + u, 0)].load(t) for m in range(MB)]
                    for i in range(RW):
                        wf = ws[i * UNROLL + u].to(hk.fp32)
                        for m in range(MB):
                            accs[i * MB + m] = accs[i * MB + m] + wf * xs[m].to(hk.fp32)
                c0, c1, c2, c3, c4, c5, c6, c7 = accs
            accs = [c0, c1, c2, c3, c4, c5, c6, c7]
            for i in range(RW):
                b = bias[hk.elem_coord(0, 0, n0 + i, 0)].load(hk.RV(DT, 16, "col")).to(hk.fp32)
                for m in range(MB):
                    out[hk.elem_coord(0, m, n0 + i, 0)] = (b + hk.tile_sum(accs[i * MB + m])).to(OUT)
    return matmul_gemv_stream_nt
