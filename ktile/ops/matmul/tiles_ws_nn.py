"""`wgmma_ws_nn`: the large-M GEMM for b held [K, N] row-major (N contiguous), as the
warp-specialised pipeline of tiles_ws.py's `wgmma_ws_nt` (issue #11: the AWQ prefill route
multiplies the weights its dequantiser wrote [K, N]).

Three warpgroups a block: warps 8..11 the producer (24 registers: TMA copies of A's BM×BK tile
and b's BK×BN tile, as b lies in memory, into STAGES stages), warps 0..7 two consumer
warpgroups (240 registers). A consumer warp loads its 16 rows of the A stage into registers
(`sa.load(..., row=warp)`: the K×N wgmma takes A from registers only, docs/language.md) and
issues `acc += ra @ sb`: wgmma m64nBNk16 with B by an N-major descriptor (sm_90a's
transposed-B form, `imm-trans-b` 1), no copy or transpose of b. Grid: grouped raster order
(tiles_ws.grouped_tile). The epilogue adds the bias in fp32 and rounds once.

Ragged edges: the TMA zero-fills loads past M, N or K, stores past M or N write nothing.
sm_90a only (the K×N MMA is refused elsewhere); other targets take `tiles_nn`.
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

from .dtypes import pair
from .tiles import NN_SHAPES, epilogue
from .tiles_ws import grouped_tile

NN_GROUPED = NN_SHAPES + [
    (lambda p: p.GROUP_M >= 1, "GROUP_M (row tiles per band of the grouped raster) must be "
                               "at least 1"),
    (lambda p: p.BN in (16, 32) or p.BN % 64 == 0,
     "BN must be 16, 32 or a multiple of 64 (rows of b's K×N stage the wgmma descriptor "
     "reads N-major)"),
]


@functools.lru_cache(maxsize=None)
def wgmma_ws_nn(dtype: str):
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, p.BN) * hk.cdiv(p.out.rows, p.BM), 1),
               requires=NN_GROUPED, warps=12)
    def matmul_wgmma_ws_nn(a: hk.Tensor[DT], b: hk.Tensor[DT], bias: hk.Tensor[DT],
                           out: hk.Tensor[OUT], *, BM: hk.Constexpr[int] = 128,
                           BN: hk.Constexpr[int] = 256, BK: hk.Constexpr[int] = 64,
                           STAGES: hk.Constexpr[int] = 4, GROUP_M: hk.Constexpr[int] = 8):
        m, n = grouped_tile(hk.arch.block_idx.x, hk.cdiv(out.rows, BM), hk.cdiv(out.cols, BN),
                            GROUP_M)
        pipe = hk.pipeline(STAGES, hk.ST(DT, BM, BK), hk.ST(DT, BK, BN),
                           steps=hk.cdiv(a.cols, BK))
        rows = BM // 8                        # a consumer warp's rows (2 warpgroups)

        @pipe.producer(warpgroups=1, registers=24)
        def load(k, sa, sb):
            hk.group.load(sa, a[hk.tile_coord(0, 0, m, k)])
            hk.group.load(sb, b[hk.tile_coord(0, 0, k, n)])

        @pipe.consumer(warpgroups=2, registers=240)
        def multiply(k, sa, sb, acc):
            ra = sa.load(hk.RT(DT, rows, BK), row=hk.arch.warp_id)   # this warp's 16 rows
            hk.wait_for(ra)
            acc += ra @ sb                    # B K×N by an N-major descriptor
            return acc

        @pipe.finish
        def store(acc):
            tile_rows = m * pipe.consumer_warps + hk.arch.warp_id
            out[hk.tile_coord(0, 0, tile_rows, n)] = epilogue(acc, bias, n, BN, (DT, OUT))

        pipe.run(hk.zeros(hk.RT(hk.fp32, rows, BN)))
    return matmul_wgmma_ws_nn
