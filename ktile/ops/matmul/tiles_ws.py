"""`wgmma_ws_nt`: the large-M kernel as a warp-specialised pipeline (`hk.pipeline`, issue #11).

b is the weight W [N, K]. Three warpgroups a block: warps 8..11 the producer (24 registers,
issuing the TMA copies of A's BM×BK and W's BN×BK tiles into STAGES stages), warps 0..7 two
consumer warpgroups (240 registers: 384 threads launch with 168 each, and 128 × 24 + 256 ×
240 is that pool; the budgets pass estimates the consumers' peak at 178: the accumulator,
the bias vector of the epilogue, addresses) each multiplying its 64 rows of the 128×BN block
tile by W's tile from shared memory (`sa @ sb.T`: wgmma m64nBNk16 by descriptor, BN / 2 fp32
accumulators a thread; no proxy fence, the stages being written by TMA alone); the compiler
derives the stages' full / empty mbarriers and their phases. One block a multiprocessor (the
budgets pass accepts it for kernels with roles). The grid is 1-D in grouped raster order
(`grouped_tile`: GROUP_M row tiles of one column band, then the next band), so a wave of
blocks shares W's and A's tiles in L2; GROUP_M 1 is the row-major order. Routes
(config.NT_TILES): BN 256 / 4 stages for large M, 192 / 5 or 128 / 6 for M ≤ 1024 (more
blocks on the SMs). The epilogue adds the bias in fp32 and rounds once (tiles.epilogue). On
targets without warp specialisation (the interpreter traced for AMD, the AMD targets) the
same program runs with every warp playing both roles in turn (it is routed on sm_90a only; on
AMD a smaller tile, e.g. BN 128 / STAGES 3, fits the shared memory: it runs so on gfx950 in
tests/tier0/test_matmul_ws.py, the persistent variant in tests/tier0/test_pipeline.py).

`wgmma_ws_persistent_nt`: the same roles and tiles with a persistent grid: SMS blocks (one a
multiprocessor), block b taking output tiles b, b + SMS, ... in grouped raster order (GROUP_M
row tiles of one column band before the next band, so a band of W stays in L2 while those
rows pass); one pipeline runs over all of a block's tiles × K steps, so the producer loads the
next tile's first stages while the consumers store the last one's. Routes: BN 256 / 4
stages (cuBLAS's cooperative persistent shape), BN 128 / 5; both build with 0 spills and
their MMAs in flight (docs/pipelines.md: the drain after a consumer with no `finish`, the
store's plane check). Pinned or tuned only until the H200 has timed it.

Ragged edges: the TMA zero-fills loads past M, N or K (a zero K tail adds nothing), stores
past M or N write nothing.
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

from .dtypes import pair
from .tiles import NT_SHAPES, epilogue

GROUPED = NT_SHAPES + [(lambda p: p.GROUP_M >= 1, "GROUP_M (row tiles per band of the "
                                                   "grouped raster) must be at least 1")]


def grouped_tile(t, m_tiles, n_tiles, group: int):
    """Output tile t of the grouped raster order: (row tile, column tile). Row tiles go in
    groups of `group` (the last group smaller); inside a group, t walks the rows of one column
    tile, then the next column tile."""
    per_group = group * n_tiles
    first = (t // per_group) * group
    rows = hk.min(m_tiles - first, group)
    inside = t % per_group
    return first + inside % rows, inside // rows


@functools.lru_cache(maxsize=None)
def wgmma_ws_nt(dtype: str):
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, p.BN) * hk.cdiv(p.out.rows, p.BM), 1),
               requires=GROUPED, warps=12)
    def matmul_wgmma_ws_nt(a: hk.Tensor[DT], b: hk.Tensor[DT], bias: hk.Tensor[DT],
                           out: hk.Tensor[OUT], *, BM: hk.Constexpr[int] = 128,
                           BN: hk.Constexpr[int] = 256, BK: hk.Constexpr[int] = 64,
                           STAGES: hk.Constexpr[int] = 4, GROUP_M: hk.Constexpr[int] = 8):
        m, n = grouped_tile(hk.arch.block_idx.x, hk.cdiv(out.rows, BM), hk.cdiv(out.cols, BN),
                            GROUP_M)
        pipe = hk.pipeline(STAGES, hk.ST(DT, BM, BK), hk.ST(DT, BN, BK),
                           steps=hk.cdiv(a.cols, BK))

        @pipe.producer(warpgroups=1, registers=24)
        def load(k, sa, sb):
            hk.group.load(sa, a[hk.tile_coord(0, 0, m, k)])
            hk.group.load(sb, b[hk.tile_coord(0, 0, n, k)])

        @pipe.consumer(warpgroups=2, registers=240)
        def multiply(k, sa, sb, acc):
            acc += sa @ sb.T                  # this warp's 16 rows of its warpgroup's m64
            return acc

        @pipe.finish
        def store(acc):
            rows = m * pipe.consumer_warps + hk.arch.warp_id
            out[hk.tile_coord(0, 0, rows, n)] = epilogue(acc, bias, n, BN, (DT, OUT))

        pipe.run(hk.zeros(hk.RT(hk.fp32, BM // pipe.consumer_warps, BN)))
    return matmul_wgmma_ws_nt


@functools.lru_cache(maxsize=None)
def wgmma_ws_persistent_nt(dtype: str):
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (p.SMS, 1), requires=GROUPED, warps=12)
    def matmul_wgmma_ws_persistent_nt(a: hk.Tensor[DT], b: hk.Tensor[DT], bias: hk.Tensor[DT],
                                      out: hk.Tensor[OUT], *, BM: hk.Constexpr[int] = 128,
                                      BN: hk.Constexpr[int] = 256, BK: hk.Constexpr[int] = 64,
                                      STAGES: hk.Constexpr[int] = 4,
                                      GROUP_M: hk.Constexpr[int] = 8,
                                      SMS: hk.Constexpr[int] = 132):
        m_tiles, n_tiles = hk.cdiv(out.rows, BM), hk.cdiv(out.cols, BN)
        k_steps = hk.cdiv(a.cols, BK)
        block = hk.arch.block_idx.x
        mine = (m_tiles * n_tiles - block + SMS - 1) // SMS     # tiles block, block + SMS, ...
        pipe = hk.pipeline(STAGES, hk.ST(DT, BM, BK), hk.ST(DT, BN, BK),
                           steps=mine * k_steps)

        @pipe.producer(warpgroups=1, registers=24)
        def load(k, sa, sb):
            m, n = grouped_tile(block + (k // k_steps) * SMS, m_tiles, n_tiles, GROUP_M)
            hk.group.load(sa, a[hk.tile_coord(0, 0, m, k % k_steps)])
            hk.group.load(sb, b[hk.tile_coord(0, 0, n, k % k_steps)])

        @pipe.consumer(warpgroups=2, registers=240)
        def multiply(k, sa, sb, acc):
            acc += sa @ sb.T
            if k % k_steps == k_steps - 1:                      # the tile's last K step
                m, n = grouped_tile(block + (k // k_steps) * SMS, m_tiles, n_tiles, GROUP_M)
                rows = m * pipe.consumer_warps + hk.arch.warp_id
                out[hk.tile_coord(0, 0, rows, n)] = epilogue(acc, bias, n, BN, (DT, OUT))
                # -0.0, the additive identity: a fill of another value than the initial zeros,
                # which the budgets pass would otherwise take for one tile held all along
                acc = hk.full(hk.RT(hk.fp32, BM // pipe.consumer_warps, BN), -0.0)
            return acc

        pipe.run(hk.zeros(hk.RT(hk.fp32, BM // pipe.consumer_warps, BN)))
    return matmul_wgmma_ws_persistent_nt
