"""The decode GEMV path (M ≤ 8, b = W.t() of a row-major weight W [N, K], K a multiple of
16): out = a · Wᵀ (+ bias) in one kernel, W streamed once with 16-byte accesses, no split-K.

The flat layout's row-as-tile view: the op passes W as [N, 16, K/16] (each weight row one
16 × K/16 plane), a as [M, 16, K/16] the same way, so tile c of W's row n and tile c of a's row
m hold the same K indices in the same lanes: their elementwise product, summed over every
tile, is out[m, n]. Warp w of block (x, y) owns W row n = x · WARPS + w and a's rows
[y · MB, y · MB + MB): it walks the row's 16 × C flat tiles UNROLL at a time (all the step's
W and a loads written before its math, so they are in flight together), multiplies each W
tile by the MB a tiles in fp32 into MB fp32 accumulator tiles (a lane's own products: no
shuffles in the loop), then reduces each accumulator once (`hk.tile_sum`: the lane's
elements, then a fixed butterfly over the warp: the same bits every run, no atomics), adds
the bias in fp32 and rounds once. Each warp writes its own MB values: out is passed as
[M, N, 1] and the bias as [N, 1], so a 16-element column vector at (m, n, 0) has one element
inside the global (the edge masks the rest): a single-value store without a new language op.

Rows of W past N and rows of a past M read 0; their outputs lie outside out and are not
written. A ragged last tile (K/16 not a multiple of C) or a misaligned row (K/16 not a
multiple of 8: 16-byte units need it) takes the element-by-element access path: the same
result, slower (the routing table sends such K to the skinny kernels).
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

from .dtypes import pair

MAX_MB = 8              # rows of a one block holds (its accumulators are named)

GEMV_SHAPES = [
    (lambda p: p.a.batch == 1 and p.a.rows == 16, "a must be passed as [M, 16, K/16]"),
    (lambda p: p.w.batch == 1 and p.w.rows == 16 and p.w.cols == p.a.cols,
     "w must be the weight [N, 16, K/16] with a's K/16 columns"),
    (lambda p: p.out.batch == 1 and p.out.depth == p.a.depth and p.out.rows == p.w.depth
     and p.out.cols == 1, "out must be passed as [M, N, 1]"),
    (lambda p: 1 <= p.MB <= MAX_MB, f"MB (rows of a per block) must be 1 to {MAX_MB}"),
    (lambda p: p.bias.batch * p.bias.depth == 1 and p.bias.rows == p.w.depth
     and p.bias.cols == 1, "bias must be passed as [N, 1]"),
]


@functools.lru_cache(maxsize=None)
def gemv_nt(dtype: str):
    """out = a · Wᵀ + bias for the pair's input and output dtype (docstring above)."""
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (hk.cdiv(p.w.depth, p.WARPS), hk.cdiv(p.a.depth, p.MB)),
               warps="WARPS", requires=GEMV_SHAPES)
    def matmul_gemv_nt(a: hk.Tensor[DT], w: hk.Tensor[DT], bias: hk.Tensor[DT],
                       out: hk.Tensor[OUT], *, MB: hk.Constexpr[int] = 1,
                       C: hk.Constexpr[int] = 16, UNROLL: hk.Constexpr[int] = 4,
                       WARPS: hk.Constexpr[int] = 4):
        n = hk.arch.block_idx.x * WARPS + hk.arch.warp_id
        m0 = hk.arch.block_idx.y * MB
        t = hk.RT(DT, 16, C, "flat")
        # MAX_MB named accumulators (a runtime loop carries names, not list items); the ones
        # past MB are a scalar 0 the loop leaves alone (no tile's registers)
        a0, a1, a2, a3, a4, a5, a6, a7 = [hk.zeros(hk.RT(hk.fp32, 16, C, "flat")) if m < MB
                                          else 0.0 for m in range(MAX_MB)]
        for c in range(0, hk.cdiv(w.cols, C), UNROLL):
            ws = [w[hk.tile_coord(0, n, 0, c + u)].load(t) for u in range(UNROLL)]
            accs = [a0, a1, a2, a3, a4, a5, a6, a7]
            for m in range(MB):
                xs = [a[hk.tile_coord(0, m0 + m, 0, c + u)].load(t) for u in range(UNROLL)]
                for u in range(UNROLL):
                    accs[m] = accs[m] + ws[u].to(hk.fp32) * xs[u].to(hk.fp32)
            a0, a1, a2, a3, a4, a5, a6, a7 = accs
        accs = [a0, a1, a2, a3, a4, a5, a6, a7]
        b = bias[hk.elem_coord(0, 0, n, 0)].load(hk.RV(DT, 16, "col")).to(hk.fp32)
        for m in range(MB):
            out[hk.elem_coord(0, m0 + m, n, 0)] = (b + hk.tile_sum(accs[m])).to(OUT)
    return matmul_gemv_nt
