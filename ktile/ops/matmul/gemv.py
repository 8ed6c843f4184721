"""The decode GEMV path (M ≤ 8, b = W.t() of a row-major weight W [N, K], K a multiple of
16): out = a · Wᵀ (+ bias) in one kernel, W streamed once in 512-byte warp accesses, no
split-K.

The views: the op passes W as [N, K/16, 16] (weight row n one plane of K/16 rows of 16
elements) and a as [M, K/16, 16], so a flat 16 × 16 tile at tile row r of a plane is the 256
consecutive elements [256·r, 256·r + 256) of one row of W or a: one 16-byte unit per lane,
the warp's 32 units one contiguous 512-byte run, and the tile of W's row n and the tile of
a's row m at the same r hold the same K indices in the same lanes. Their elementwise product,
summed over every tile, is out[m, n].

Block (x, y) holds a's rows [x · MB, x · MB + MB) and W rows [y · WARPS, y · WARPS + WARPS),
one per warp (the blocks of one W band are launched next to each other: where M > MB, the
band's second read comes from L2). A warp walks its row UNROLL tiles at a time (the step's W
and a loads written before its math, so they are in flight together), accumulates each W
tile times the MB a tiles in fp32 (a lane's own products: no shuffles in the loop), then
reduces each accumulator once (`hk.tile_sum`: the lane's elements, then a fixed butterfly over
the warp: the same bits every run, no atomics), adds the bias in fp32 and rounds once. Each
warp writes its own MB values: out is passed as [M, N, 1] and the bias as [N, 1], so a
16-element column vector at (m, n, 0) has one element inside the global (the edge masks the
rest): a single-value store without a new language op.

Edges: tile rows past K/16 (K not a multiple of 256), planes past N or M read 0 and add
nothing; outputs past N or M lie outside out and are not written. Every full or ragged tile
stays on the 16-byte path (the rows are 32 bytes apart) when the tensors are 16-byte aligned.

Why it streams below the copy rate (SASS of MB 1 / UNROLL 4, CUDA 13.0, read 2026-12-02): the
source writes a step's four W loads before its math, but ptxas issues each W / a pair of
LDG.128 right before its FFMAs and waits for it before the next pair (the same schedule with
`__ldg`: not the load flavour), so a warp has one 512-byte W access in flight. At 64
registers 32 warps fit a multiprocessor: about 16 KB in flight, where the copy rate needs
~25-30 KB (latency x bandwidth / 132 SMs); since flat_tile.hpp's element path went out of
line (95a2376) the route takes 80 registers: 24 warps, ~12 KB. At MB 2 the second row's a loads and FMAs sit in
the same serial chain (56.8 against 38.6 us at 12288 x 4096 on the H200). W is read once
(MB >= M: one block column). At M 1 it already matches cuBLAS under benchmarks' timing, whose
L2 flush leaves up to ~50 MiB of dirty lines that the call's reads write back (gemv_sweep.py).

AHEAD 1 carries the next step's UNROLL W tiles through the loop by name, loaded before this
step's math: ptxas cannot pair them with FFMAs it has not reached, so UNROLL tiles a warp are
in flight through the math. ptxas 13: MB 1 / UNROLL 2 takes 64 registers (32 warps, ~32 KB
in flight a multiprocessor, against the route's ~12 KB); UNROLL 4 118 (16 warps); MB 2 /
UNROLL 2 80 (24); 0 spills. Pinnable and swept (benchmarks/gemv_sweep.py), not routed: untimed. AHEAD 0
generates the same code as before the constant existed.
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

from .dtypes import pair

MAX_MB = 8              # rows of a one block holds (its accumulators are named)
MAX_UNROLL = 8          # W tiles a step (AHEAD 1 carries them by name)
MAX_BANDS = 65535       # the grid's y extent: N ≤ MAX_BANDS · WARPS

GEMV_SHAPES = [
    (lambda p: 1 <= p.MB <= MAX_MB, f"MB (rows of a per block) must be 1 to {MAX_MB}"),
    (lambda p: p.AHEAD in (0, 1) and (p.AHEAD == 0 or 1 <= p.UNROLL <= MAX_UNROLL),
     f"AHEAD must be 0 or 1, and with AHEAD 1 UNROLL 1 to {MAX_UNROLL}"),
    (lambda p: p.a.batch == 1 and p.a.cols == 16, "a must be passed as [M, K/16, 16]"),
    (lambda p: p.w.batch == 1 and p.w.cols == 16 and p.w.rows == p.a.rows,
     "w must be the weight passed as [N, K/16, 16], a's K/16 rows"),
    (lambda p: p.out.batch == 1 and p.out.depth == p.a.depth and p.out.rows == p.w.depth
     and p.out.cols == 1, "out must be passed as [M, N, 1]"),
    (lambda p: p.bias.batch * p.bias.depth == 1 and p.bias.rows == p.w.depth
     and p.bias.cols == 1, "bias must be passed as [N, 1]"),
    (lambda p: p.w.depth <= MAX_BANDS * p.WARPS,
     f"N must be at most {MAX_BANDS} x WARPS (the grid's y extent)"),
]


@functools.lru_cache(maxsize=None)
def gemv_nt(dtype: str):
    """out = a · Wᵀ + bias for the pair's input and output dtype (docstring above)."""
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (hk.cdiv(p.a.depth, p.MB), hk.cdiv(p.w.depth, p.WARPS)),
               warps="WARPS", requires=GEMV_SHAPES)
    def matmul_gemv_nt(a: hk.Tensor[DT], w: hk.Tensor[DT], bias: hk.Tensor[DT],
                       out: hk.Tensor[OUT], *, MB: hk.Constexpr[int] = 1,
                       UNROLL: hk.Constexpr[int] = 4, WARPS: hk.Constexpr[int] = 4,
                       AHEAD: hk.Constexpr[int] = 0):
        m0 = hk.arch.block_idx.x * MB
        n = hk.arch.block_idx.y * WARPS + hk.arch.warp_id
        t = hk.RT(DT, 16, 16, "flat")
        # MAX_MB named accumulators (a runtime loop carries names, not list items); the ones
        # past MB are a scalar 0 the loop leaves alone (no tile's registers)
        a0, a1, a2, a3, a4, a5, a6, a7 = [hk.zeros(hk.RT(hk.fp32, 16, 16, "flat")) if m < MB
                                          else 0.0 for m in range(MAX_MB)]
        # AHEAD 1: the next step's UNROLL W tiles, carried by name (past UNROLL a scalar 0)
        q0, q1, q2, q3, q4, q5, q6, q7 = [w[hk.tile_coord(0, n, u, 0)].load(t)
                                          if AHEAD and u < UNROLL else 0.0
                                          for u in range(MAX_UNROLL)]
        for r in range(0, hk.cdiv(w.rows, 16), UNROLL):
            if AHEAD:       # this step's tiles came last step; the next step's issued now
                ws = [q0, q1, q2, q3, q4, q5, q6, q7][:UNROLL]
                q0, q1, q2, q3, q4, q5, q6, q7 = [
                    w[hk.tile_coord(0, n, r + UNROLL + u, 0)].load(t) if u < UNROLL else 0.0
                    for u in range(MAX_UNROLL)]
            else:
                ws = [w[hk.tile_coord(0, n, r + u, 0)].load(t) for u in range(UNROLL)]
            accs = [a0, a1, a2, a3, a4, a5, a6, a7]
            for m in range(MB):
                xs = [a[hk.tile_coord(0, m0 + m, r + u, 0)].load(t) for u in range(UNROLL)]
                for u in range(UNROLL):
                    accs[m] = accs[m] + ws[u].to(hk.fp32) * xs[u].to(hk.fp32)
            a0, a1, a2, a3, a4, a5, a6, a7 = accs
        accs = [a0, a1, a2, a3, a4, a5, a6, a7]
        b = bias[hk.elem_coord(0, 0, n, 0)].load(hk.RV(DT, 16, "col")).to(hk.fp32)
        for m in range(MB):
            out[hk.elem_coord(0, m0 + m, n, 0)] = (b + hk.tile_sum(accs[m])).to(OUT)
    return matmul_gemv_nt
