"""The skinny path on sm_90a (M ≤ 64, b the weight W [N, K]): phase 1 of a split-K product,
W streamed once through a TMA pipeline into wgmma (and `wgmma_gemv_nt`, the same product in
one kernel: below).

Block (n, split) owns BN rows of W (BN columns of out) and a contiguous run of `per` K tiles
(`per` = STAGES · ⌈tiles / (STAGES · splits)⌉, from the split count, `part`'s depth: one
build serves every split count). Its four warps (one warpgroup) keep STAGES - 1 stages of
a's 64 × BK tile and W's BN × BK tile in flight (TMA group loads into shared memory); each
stage is one wgmma m64nBNk16 chain with both operands from shared memory (`sa @ sb.T`), kept in
flight while the warps wait for the previous one and for the next stage's loads (tiles.py's
`wgmma_nt`, one warpgroup). Warp w accumulates rows [16·w, 16·w + 16) of a (rows past M
read 0: TMA fills them without reading memory, and their results are never stored) and
writes its fp32 partial into `part[split]` ([splits, M, N]); `splitk_reduce` (skinny.py) sums
the partials in split order, adds the bias and rounds once.

Why a's rows are the MMA's M side (64 rows whatever M is), not W's ("swap AB"): the output
tile then has out's orientation, so the partial is one tile store; the transposed form needs
a per-column extraction (the language has no register transpose). The MMA work padded to 64
rows (4× at M = 16) is far under the tensor cores' rate at these shapes, and overlaps the
loads (the wgmma is asynchronous): the kernel's cost is W's bytes.

IN_FLIGHT 0 waits for each stage's MMA before the next load is issued (`wgmma.wait_group 0`):
the loads stay STAGES - 1 tiles ahead either way, and a memory-bound loop has the MMA's
latency to spare. The route keeps 1 at 3 stages.

The wrong rows 16 and up (H200, 2026-12-02: STAGES 4 at M 32, A_REGS 1 at M 4 and 32; the
same in examples/04_gemm.py's one-in-flight form at 2 and 4 stages) were not the pipeline's:
the final `hk.wait_for(*sa, *sb)` completed the last MMA through its shared operands without
naming `acc`, so no `kt::bind` followed the `wgmma.wait_group 0` and nvcc bit-cast the
accumulator for the partial's store at the K loop's exit, above the drain, while the wgmma
still wrote it (every stage count's PTX had the 64 early reads; warps 1-3, which issue no
TMA, got there first). The waits pass now binds such an accumulator at its read
(passes/waits_mma.py `unbound`; tests/tier1/test_wgmma_accumulator_bound.py reads the PTX,
tests/tier3/test_ops_matmul_wgmma_race_gpu.py runs every set 10 times).

A_REGS 1 gives a no shared memory: each warp loads its 16 rows of a's K tile from global
memory (L2: a is small) into registers right before its MMA (wgmma with A from registers),
so a stage is W's tile alone (more stages or wider K tiles in the same shared memory), at
the cost of that load's latency in each step (W's loads stay in flight through it).
Pinned or tuned only, unmeasured: 152 registers at BN 128, BK 64, 4 stages (ptxas 13).

Edges: a tile past K (the last split's run, or K not a multiple of BK) is zero-filled by TMA
(by cp.async where no tensor map can describe a or W: K · 2 bytes no multiple of 16, the
runtime's fallback build) and adds nothing; a prefetch past the split's run is pointed past K (zero-filled, no memory
read) rather than at the next split's tiles; rows past M and columns past N are not stored.

`wgmma_gemv_nt`: the same loop (`stream_products`) over all of K in one block per BN rows of
W, the bias added in fp32 and rounded in its epilogue: no partials, no second launch. Its grid
is cdiv(N, BN) blocks, so narrow bands (BN 32: 128 blocks at N 4096) fill the machine; a's
64-row stage tile (TMA-padded) then takes 2/3 of the shared memory (A_REGS 1 frees it).
ptxas 13: 52 registers, 96 KiB, 0 spills at BN 32 / BK 128 / 4 stages. Pinnable, untimed.

Why `skinny_wgmma_nt` streams below the copy rate (0.69-0.82x cuBLAS at M 16 / 32, H200
2026-12-02): not for want of loads in flight: 136 registers and 72 KiB give 3 blocks a
multiprocessor, each with 2 stages of W (32 KiB) in flight, ~96 KiB by construction. What a
decode shape leaves is fixed costs: each block runs a short split (9 K tiles at 4096 x 4096:
the first TMA round trip and the last MMA's drain are a third of its life), every stage waits
for an MMA and a block barrier, and `splitk_reduce` is a second launch. `wgmma_gemv_nt`
removes the second launch and the splits (benchmarks/gemv_sweep.py times both).
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

from .dtypes import pair

MAX_ROWS = 64           # a's rows: one warpgroup's wgmma M side

SHAPES = [
    (lambda p: p.STAGES >= 3, "STAGES must be at least 3 (a stage's loads are waited for "
     "one MMA ahead)"),
    (lambda p: p.a.batch * p.a.depth == 1, "a must be 2-D [M, K]"),
    (lambda p: p.a.rows <= MAX_ROWS, f"a must have at most {MAX_ROWS} rows (M): larger M "
     "takes the tile kernels (wgmma_nt)"),
    (lambda p: p.b.batch * p.b.depth == 1 and p.b.cols == p.a.cols,
     "b must be the weight [N, K] with a's K columns"),
    (lambda p: p.part.batch == 1 and p.part.rows == p.a.rows and p.part.cols == p.b.rows,
     "part must be [splits, M, N]: a's M rows, N = b.rows columns"),
]


DIRECT_SHAPES = SHAPES[:4] + [
                 (lambda p: p.out.batch * p.out.depth == 1 and p.out.rows == p.a.rows
                  and p.out.cols == p.b.rows, "out must be [M, N]: a's M rows, N = b.rows"),
                 (lambda p: p.bias.cols == p.b.rows
                  and p.bias.rows * p.bias.depth * p.bias.batch == 1,
                  "bias must hold one value per row of W (N values)")]


def run_length(tiles, splits, stages: int):
    """K tiles per split: a whole number of STAGES-tile rounds (the loop's unit); device
    values in the kernel, Python ints on the host (config.wgmma_splits)."""
    return stages * hk.cdiv(tiles, stages * splits)


@hk.func
def stream_products(a, b, n, first, end, DT, BN, BK, STAGES, IN_FLIGHT, A_REGS):
    """This warp's fp32 16 x BN tile of a · W[n·BN .. n·BN + BN)ᵀ over the K tiles [first, end)
    (a whole number of STAGES-tile rounds, at least one): the TMA pipeline the module
    docstring describes, with the warps of the block (one warpgroup)."""
    w = hk.arch.warp_id
    tiles = hk.cdiv(a.cols, BK)
    sa = [] if A_REGS else [hk.shared(hk.ST(DT, MAX_ROWS, BK)) for _ in range(STAGES)]
    sb = [hk.shared(hk.ST(DT, BN, BK)) for _ in range(STAGES)]
    bufs = [[sb[i]] if A_REGS else [sa[i], sb[i]] for i in range(STAGES)]
    acc = hk.zeros(hk.RT(hk.fp32, MAX_ROWS // 4, BN))   # this warp's 16 rows of a
    for s in range(STAGES - 1):                          # end - first ≥ STAGES: all in the run
        if not A_REGS:
            hk.group.load(sa[s], a[hk.tile_coord(0, 0, 0, first + s)])
        hk.group.load(sb[s], b[hk.tile_coord(0, 0, n, first + s)])
    hk.wait_for(*bufs[0])
    hk.barrier()
    for k in range(first, end, STAGES):
        for s in range(STAGES):                          # unrolled: buffer s, tile k + s
            if A_REGS:                                   # this warp's rows, from L2
                ra = a[hk.tile_coord(0, 0, w, k + s)].load(hk.RT(DT, MAX_ROWS // 4, BK))
                acc += ra @ sb[s].T                      # in flight
            else:
                acc += sa[s] @ sb[s].T                   # in flight
            free, nxt = (s + STAGES - 1) % STAGES, (s + 1) % STAGES
            if IN_FLIGHT:                                # MMA k+s-1, loads k+s+1
                hk.wait_for(*bufs[free], *bufs[nxt])
            else:                                        # MMA k+s too (drained)
                hk.wait_for(acc, *bufs[nxt])
            hk.barrier()                                 # every warp is done with k+s-1
            t = k + s + STAGES - 1
            t = hk.where(t < end, t, tiles)              # past the run: past K, no read
            if not A_REGS:
                hk.group.load(sa[free], a[hk.tile_coord(0, 0, 0, t)])
            hk.group.load(sb[free], b[hk.tile_coord(0, 0, n, t)])
    hk.wait_for(*sa, *sb)                                # the last prefetches (past K)
    return acc


@functools.lru_cache(maxsize=None)
def skinny_wgmma_nt(dtype: str):
    """Phase 1 with b the weight W [N, K] (row-major: `W.t()` is the op's b), sm_90a."""
    DT = getattr(hk, pair(dtype)[0])

    @hk.kernel(grid=lambda p: (hk.cdiv(p.b.rows, p.BN), p.part.depth), warps=4,
               requires=SHAPES)
    def matmul_skinny_wgmma_nt(a: hk.Tensor[DT], b: hk.Tensor[DT], part: hk.Tensor[hk.fp32],
                               *, BN: hk.Constexpr[int] = 128, BK: hk.Constexpr[int] = 64,
                               STAGES: hk.Constexpr[int] = 3,
                               IN_FLIGHT: hk.Constexpr[int] = 1,
                               A_REGS: hk.Constexpr[int] = 0):
        n, split = hk.arch.block_idx.x, hk.arch.block_idx.y
        per = run_length(hk.cdiv(a.cols, BK), part.depth, STAGES)
        first = split * per
        acc = stream_products(a, b, n, first, first + per, DT, BN, BK, STAGES, IN_FLIGHT,
                              A_REGS)
        part[hk.tile_coord(0, split, hk.arch.warp_id, n)] = acc
    return matmul_skinny_wgmma_nt


@functools.lru_cache(maxsize=None)
def wgmma_gemv_nt(dtype: str):
    """The same product with no split of K and no second kernel: block n streams all of K for
    its BN rows of W, adds the bias in fp32 and rounds once into out [M, N] (rows past M and
    columns past N are not stored). One wave of cdiv(N, BN) blocks: the N blocks must fill the
    multiprocessors by themselves (narrow BN: 32 gives 128 blocks at N = 4096), each keeping
    STAGES - 1 W tiles of BN x BK in flight."""
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (hk.cdiv(p.b.rows, p.BN),), warps=4, requires=DIRECT_SHAPES)
    def matmul_wgmma_gemv_nt(a: hk.Tensor[DT], b: hk.Tensor[DT], bias: hk.Tensor[DT],
                             out: hk.Tensor[OUT], *, BN: hk.Constexpr[int] = 32,
                             BK: hk.Constexpr[int] = 128, STAGES: hk.Constexpr[int] = 4,
                             IN_FLIGHT: hk.Constexpr[int] = 1,
                             A_REGS: hk.Constexpr[int] = 0):
        n = hk.arch.block_idx.x
        end = STAGES * hk.cdiv(hk.cdiv(a.cols, BK), STAGES)      # whole rounds; past K: 0
        acc = stream_products(a, b, n, 0, end, DT, BN, BK, STAGES, IN_FLIGHT, A_REGS)
        acc = acc + bias[hk.tile_coord(0, 0, 0, n)].load(hk.RV(DT, BN, "col")).to(hk.fp32)
        out[hk.tile_coord(0, 0, hk.arch.warp_id, n)] = acc.to(OUT)
    return matmul_wgmma_gemv_nt
