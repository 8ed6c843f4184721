"""`fp8_ws_nt`: out = (a · Wᵀ) · scale_a · scale_b (+ bias) for e4m3 a [M, K] and W [N, K],
matmul's warp-specialised pipeline (matmul/tiles_ws.py, `wgmma_ws_nt`) at 8-bit operands.

A producer warpgroup (warps 8..11) issues the TMA copies of A's BM×BK and W's BN×BK tiles;
two consumer warpgroups multiply their 64 rows each by W's tile, both operands by descriptor
(`sa @ sb.T`: wgmma m64nBNk32 e4m3, BK / 32 instructions a stage, fp32 accumulators). BK 128:
a stage row is 128 bytes, the 128-byte swizzle, as BK 64 is for matmul's 16-bit tiles, so the
stage sizes (and the routes' stage counts) are matmul's. The epilogue multiplies the fp32
accumulators by the scales (a row vector of scale_a per token, or its one value; a column
vector of scale_b per channel, or its one value), adds the bias in fp32 and rounds once.

PROMOTE (two-level accumulation): Hopper's fp8 wgmma adds into its accumulator with fewer
mantissa bits than fp32 (DeepSeek-V3's report: about 14 kept), so the error grows with K (3.9
at K 4096 on results near 1000, the H200 of 2026-12-02; the fp32 bound 0.1). Each K block
(BK 128: four k32 instructions) multiplies into fresh accumulators, added to the fp32 ones
once they complete, as torch._scaled_mm's default (use_fast_accum False) and CUTLASS's fp8
mainloop do: a second BN / 2 registers a lane (no 128 x 256 tile), and each step waits for
its MMAs (the other consumer warpgroup's keep the tensor cores busy meanwhile). PROMOTE False
accumulates all of K in the wgmma, one step's group in flight (use_fast_accum True: faster,
less precise; a variant the benchmark times, never routed on sm_90a).

Promotion variants, pinnable (`--constants` in benchmarks/matmul_fp8.py), not routed: the
promoted step above drains every group (wait_group 0) before its add, and both consumer
warpgroups wait on the same stage, so the tensor cores idle for the drain and the adds.
- LAG: the previous K block is carried to the next step and promoted after that step's MMAs
  are issued (wgmma.wait_group 1; the waits pass derives it since 2026-12-02): three tiles
  a lane (the budgets pass counts four at the add: BN 96 only; 128 estimates 264).
- PAIR: two K blocks a stage (half the stages), both issued, the first promoted while the
  second runs (wait_group 1), then the second (0): one drain per 256 of K; BN 128 at 200
  estimated registers.
- PROMOTE_K 256: two K blocks a stage accumulated in one wgmma accumulator, promoted once:
  one drain and half the adds, BN 192's registers, each 256 of K added at the wgmma's
  precision (torch promotes every 128: the tier-3 tolerance decides whether it is within).
ptxas 13.0 builds PROMOTE_K 256 (BN 192 / 128) and PAIR (BN 128) with 0 spills and no
injected wait; PAIR binds its two zero fills before the first issue (`hk.wait_for` on them),
else nvcc sinks the second's below the first group's issue and ptxas injects a wgmma wait
(C7517). LAG (BN 96) builds with 0 spills but C7517: its in-flight block is moved into the
loop-carried variable each step (a loop unrolled by two would keep it in place).

The scales arrive as [1, M] / [1, N] views (per token and per channel: ROWWISE) or [1, 1]
each (per tensor). BIAS False leaves the bias unread (a call without one); each epilogue
form has its routes (config.py: the column vectors' registers decide the widest tile).
Ragged edges as matmul's: the TMA zero-fills loads past M, N or K, stores past M or N write
nothing, a vector load past M or N reads zeros.
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

from ..matmul.dtypes import pair
from ..matmul.tiles_ws import GROUPED, grouped_tile
from ..quant.kernels import scalar_at_origin

SCALES = [
    (lambda p: p.scale_a.rows * p.scale_a.depth * p.scale_a.batch == 1
     and p.scale_a.cols == (p.out.rows if p.ROWWISE else 1),
     "scale_a must be [1, M] with ROWWISE, else [1, 1]"),
    (lambda p: p.scale_b.rows * p.scale_b.depth * p.scale_b.batch == 1
     and p.scale_b.cols == (p.out.cols if p.ROWWISE else 1),
     "scale_b must be [1, N] with ROWWISE, else [1, 1]"),
]


def scaled(acc, scale_a, scale_b, rows, n, BN, ROWWISE):
    """acc (this warp's 16 rows, row tile `rows`, of column tile n) times its scales: per
    token and per channel (ROWWISE), else the product of the two per-tensor values."""
    if not ROWWISE:
        return acc * (scalar_at_origin(scale_a) * scalar_at_origin(scale_b))
    acc = acc * scale_a[hk.elem_coord(0, 0, 0, rows * 16)].load(hk.RV(hk.fp32, 16, "row"))
    return acc * scale_b[hk.tile_coord(0, 0, 0, n)].load(hk.RV(hk.fp32, BN, "col"))


@functools.lru_cache(maxsize=None)
def fp8_ws_nt(dtype: str):
    """The kernel for an op dtype name "fp8-<out>" (out bf16, fp16 or fp32; the bias is out's)."""
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, p.BN) * hk.cdiv(p.out.rows, p.BM), 1),
               requires=GROUPED + SCALES, warps=12)
    def scaled_mm_fp8_ws_nt(a: hk.Tensor[DT], b: hk.Tensor[DT], scale_a: hk.Tensor[hk.fp32],
                            scale_b: hk.Tensor[hk.fp32], bias: hk.Tensor[OUT],
                            out: hk.Tensor[OUT], *, BM: hk.Constexpr[int] = 128,
                            BN: hk.Constexpr[int] = 256, BK: hk.Constexpr[int] = 128,
                            STAGES: hk.Constexpr[int] = 4, GROUP_M: hk.Constexpr[int] = 8,
                            ROWWISE: hk.Constexpr[bool] = False,
                            BIAS: hk.Constexpr[bool] = True,
                            PROMOTE: hk.Constexpr[bool] = True,
                            LAG: hk.Constexpr[bool] = False,
                            PAIR: hk.Constexpr[bool] = False,
                            PROMOTE_K: hk.Constexpr[int] = 128):
        m, n = grouped_tile(hk.arch.block_idx.x, hk.cdiv(out.rows, BM), hk.cdiv(out.cols, BN),
                            GROUP_M)
        blocks = 2 if PROMOTE and (PAIR or PROMOTE_K == 2 * BK) else 1   # K blocks a stage
        pipe = hk.pipeline(STAGES, *[hk.ST(DT, rows, BK) for _ in range(blocks)
                                     for rows in (BM, BN)],
                           steps=hk.cdiv(a.cols, BK * blocks))

        @pipe.producer(warpgroups=1, registers=24)
        def load(k, *tiles):                           # past K: zero-filled, adds nothing
            for j in range(blocks):
                hk.group.load(tiles[2 * j], a[hk.tile_coord(0, 0, m, k * blocks + j)])
                hk.group.load(tiles[2 * j + 1], b[hk.tile_coord(0, 0, n, k * blocks + j)])

        def multiply(k, sa, sb, acc):
            if not PROMOTE:
                acc += sa @ sb.T              # this warp's 16 rows of its warpgroup's m64
                return acc
            block = hk.zeros(tile)
            block += sa @ sb.T                # the K block in the wgmma's accumulator...
            return acc + block                # ...promoted into fp32 registers

        def lagged(k, sa, sb, acc, prev):
            block = hk.zeros(tile)
            block += sa @ sb.T                # this K block issued, then the previous one
            return acc + prev, block          # promoted while it runs (wgmma.wait_group 1)

        def paired(k, sa0, sb0, sa1, sb1, acc):
            first, second = hk.zeros(tile), hk.zeros(tile)
            hk.wait_for(first, second)        # binds both zero fills before the first issue
            first += sa0 @ sb0.T              # (nvcc sank the second's under it: C7517)
            second += sa1 @ sb1.T             # both K blocks issued; the first promoted while
            acc = acc + first                 # the second runs (wgmma.wait_group 1), then
            return acc + second               # the second (0): one drain a 256 of K

        def spanning(k, sa0, sb0, sa1, sb1, acc):
            block = hk.zeros(tile)
            block += sa0 @ sb0.T              # 256 of K in the wgmma's accumulator, then
            block += sa1 @ sb1.T              # promoted: one drain, half the adds
            return acc + block

        pipe.consumer(warpgroups=2, registers=240)(
            multiply if not PROMOTE else paired if PAIR else spanning if blocks == 2
            else lagged if LAG else multiply)
        tile = hk.RT(hk.fp32, BM // pipe.consumer_warps, BN)    # this warp's rows of the tile

        def store(acc):
            rows = m * pipe.consumer_warps + hk.arch.warp_id
            acc = scaled(acc, scale_a, scale_b, rows, n, BN, ROWWISE)
            if BIAS:
                acc = acc + bias[hk.tile_coord(0, 0, 0, n)].load(hk.RV(OUT, BN, "col")).to(
                    hk.fp32)
            out[hk.tile_coord(0, 0, rows, n)] = acc.to(OUT)

        def store_lagged(acc, prev):
            store(acc + prev)                 # the last K block

        pipe.finish(store_lagged if PROMOTE and LAG else store)
        pipe.run(hk.zeros(tile), *((hk.zeros(tile),) if PROMOTE and LAG else ()))
    return scaled_mm_fp8_ws_nt
