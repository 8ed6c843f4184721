"""The large-M path: out = a · b (+ bias) by output tiles, fp32 accumulators, the epilogue
(bias in fp32, one rounding to the output dtype) applied to the registers before the store.

- `wgmma_nt` (sm_90a): b the weight W [N, K]. Eight warps (two warpgroups of 64 rows) per
  128×128 block tile, three 32 KiB stages of A and B (two blocks a multiprocessor, each
  hiding the other's barrier); both operands from shared memory (`sa @ sb.T`: wgmma
  m64n128k16 by descriptor, no shared→register loads of A). BN 256 / STAGES 4 builds with
  210 registers and no spills (ptxas 13) but leaves one block of 8 warps a multiprocessor,
  under the budgets pass's occupancy floor: the warp-specialised step's shape. The MMA of
  tile t stays in flight while each warp waits for the MMA of t-1 (`wgmma.wait_group 1`, the
  waits pass's count) and for t+1's loads; one barrier per tile then frees t-1's buffer for
  tile t+STAGES-1 (examples/04_gemm.py's `gemm_wgmma`). The loop runs whole rounds of STAGES
  tiles: a tile past K is zero-filled by its group load and adds nothing.
- `wgmma_sync_nt` (sm_90a, pinned or tuned only): the previous design, for comparison: each
  warp loads its rows of A into registers and waits for every MMA (`hk.wait_for(acc)`).
- `tiles_nt` (AMD, the interpreter): b the weight W [N, K]. Four warps per 64×64 block tile
  through shared memory, each warp one 32×32 quadrant (examples/04_gemm.py's `gemm_warps`).
- `tiles_nn` (every target): b [K, N] row-major. Four warps per 64×64 block tile, each warp
  loading its quadrant's A rows and B columns straight from global memory (B in column
  layout, `a @ b`): a column-layout read of shared memory is the slow path the compiler
  refuses, so B [K, N] does not go through shared memory.

Ragged edges: loads past M, N or K read 0 (a zero K tail adds nothing), stores past M or N
write nothing.
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

from .dtypes import pair

OUT_2D = [
    (lambda p: p.a.batch * p.a.depth == 1, "a must be 2-D [M, K]"),
    (lambda p: p.out.batch * p.out.depth == 1 and p.out.rows == p.a.rows,
     "out must be [M, N] with a's M rows"),
    (lambda p: p.bias.cols == p.out.cols and p.bias.rows * p.bias.depth * p.bias.batch == 1,
     "bias must hold one value per column of out (N values)"),
]
NT_SHAPES = OUT_2D + [
    (lambda p: p.b.batch * p.b.depth == 1 and p.b.cols == p.a.cols and p.b.rows == p.out.cols,
     "b must be the weight [N, K]: a's K columns, out's N columns as its rows"),
]
NN_SHAPES = OUT_2D + [
    (lambda p: p.b.batch * p.b.depth == 1 and p.b.rows == p.a.cols and p.b.cols == p.out.cols,
     "b must be [K, N]: a's K columns as its rows, out's N columns"),
]


def epilogue(acc, bias, n, width: int, dtypes):
    """acc + bias columns [n·width, n·width + width), rounded once to the output dtype;
    `dtypes` is (bias dtype, output dtype)."""
    bias_dtype, out_dtype = dtypes
    acc = acc + bias[hk.tile_coord(0, 0, 0, n)].load(hk.RV(bias_dtype, width, "col")).to(hk.fp32)
    return acc.to(out_dtype)


@functools.lru_cache(maxsize=None)
def wgmma_nt(dtype: str):
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, p.BN), hk.cdiv(p.out.rows, p.BM)),
               requires=NT_SHAPES, warps=8)
    def matmul_wgmma_nt(a: hk.Tensor[DT], b: hk.Tensor[DT], bias: hk.Tensor[DT],
                        out: hk.Tensor[OUT], *, BM: hk.Constexpr[int] = 128,
                        BN: hk.Constexpr[int] = 128, BK: hk.Constexpr[int] = 64,
                        STAGES: hk.Constexpr[int] = 3):
        m, n = hk.arch.block_idx.y, hk.arch.block_idx.x
        warps, w = hk.arch.num_warps, hk.arch.warp_id
        sa = [hk.shared(hk.ST(DT, BM, BK)) for _ in range(STAGES)]
        sb = [hk.shared(hk.ST(DT, BN, BK)) for _ in range(STAGES)]
        acc = hk.zeros(hk.RT(hk.fp32, BM // warps, BN))     # this warp's rows of the tile
        for s in range(STAGES - 1):                          # tiles 0 .. STAGES-2 in flight
            hk.group.load(sa[s], a[hk.tile_coord(0, 0, m, s)])
            hk.group.load(sb[s], b[hk.tile_coord(0, 0, n, s)])
        hk.wait_for(sa[0], sb[0])
        hk.barrier()
        for k in range(0, hk.cdiv(a.cols, BK), STAGES):
            for s in range(STAGES):                          # unrolled: buffer s, tile k + s
                acc += sa[s] @ sb[s].T                       # in flight on sm_90a
                free, nxt = (s + STAGES - 1) % STAGES, (s + 1) % STAGES
                hk.wait_for(sa[free], sb[free], sa[nxt], sb[nxt])  # MMA k+s-1, loads k+s+1
                hk.barrier()                                 # every warp is done with k+s-1
                hk.group.load(sa[free], a[hk.tile_coord(0, 0, m, k + s + STAGES - 1)])
                hk.group.load(sb[free], b[hk.tile_coord(0, 0, n, k + s + STAGES - 1)])
        hk.wait_for(*sa, *sb)                                # the last prefetches (past K)
        out[hk.tile_coord(0, 0, m * warps + w, n)] = epilogue(acc, bias, n, BN,
                                                                  (DT, OUT))
    return matmul_wgmma_nt


@functools.lru_cache(maxsize=None)
def wgmma_sync_nt(dtype: str):
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, p.BN), hk.cdiv(p.out.rows, p.BM)),
               requires=NT_SHAPES, warps=8)
    def matmul_wgmma_sync_nt(a: hk.Tensor[DT], b: hk.Tensor[DT], bias: hk.Tensor[DT],
                        out: hk.Tensor[OUT], *, BM: hk.Constexpr[int] = 128,
                        BN: hk.Constexpr[int] = 128, BK: hk.Constexpr[int] = 64,
                        STAGES: hk.Constexpr[int] = 3):
        m, n = hk.arch.block_idx.y, hk.arch.block_idx.x
        warps, w = hk.arch.num_warps, hk.arch.warp_id
        rows = BM // warps                                   # this warp's rows of the tile
        sa = [hk.shared(hk.ST(DT, BM, BK)) for _ in range(STAGES)]
        sb = [hk.shared(hk.ST(DT, BN, BK)) for _ in range(STAGES)]
        acc = hk.zeros(hk.RT(hk.fp32, rows, BN))
        for s in range(STAGES - 1):                          # tiles 0 .. STAGES-2 in flight
            hk.group.load(sa[s], a[hk.tile_coord(0, 0, m, s)])
            hk.group.load(sb[s], b[hk.tile_coord(0, 0, n, s)])
        for k in range(0, hk.cdiv(a.cols, BK), STAGES):
            for s in range(STAGES):                          # unrolled: buffer s, tile k + s
                hk.wait_for(sa[s], sb[s])
                hk.barrier()                                 # every warp is done with k+s-1
                ra = sa[s].load(hk.RT(DT, rows, BK), row=w)
                hk.wait_for(ra)
                acc += ra @ sb[s].T
                hk.wait_for(acc)                             # the MMA completes here
                free = (s + STAGES - 1) % STAGES             # k+s-1's buffer: a new tile
                hk.group.load(sa[free], a[hk.tile_coord(0, 0, m, k + s + STAGES - 1)])
                hk.group.load(sb[free], b[hk.tile_coord(0, 0, n, k + s + STAGES - 1)])
        hk.wait_for(*sa[:STAGES - 1], *sb[:STAGES - 1])      # the last prefetches (past K)
        out[hk.tile_coord(0, 0, m * warps + w, n)] = epilogue(acc, bias, n, BN,
                                                                  (DT, OUT))
    return matmul_wgmma_sync_nt


@functools.lru_cache(maxsize=None)
def tiles_nt(dtype: str):
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, p.BN), hk.cdiv(p.out.rows, p.BM)),
               requires=NT_SHAPES, warps=4)
    def matmul_tiles_nt(a: hk.Tensor[DT], b: hk.Tensor[DT], bias: hk.Tensor[DT],
                        out: hk.Tensor[OUT], *, BM: hk.Constexpr[int] = 64,
                        BN: hk.Constexpr[int] = 64, BK: hk.Constexpr[int] = 32):
        m, n = hk.arch.block_idx.y, hk.arch.block_idx.x
        wm, wn = hk.arch.warp_id // 2, hk.arch.warp_id % 2   # this warp's quadrant
        sa = hk.shared(hk.ST(DT, BM, BK))
        sb = hk.shared(hk.ST(DT, BN, BK))
        acc = hk.zeros(hk.RT(hk.fp32, BM // 2, BN // 2))
        for k in range(hk.cdiv(a.cols, BK)):
            hk.group.load(sa, a[hk.tile_coord(0, 0, m, k)])
            hk.group.load(sb, b[hk.tile_coord(0, 0, n, k)])
            hk.wait_for(sa, sb)
            hk.barrier()
            ra = sa.load(hk.RT(DT, BM // 2, BK), row=wm)
            rb = sb.load(hk.RT(DT, BN // 2, BK), row=wn)
            hk.wait_for(ra, rb)
            acc += ra @ rb.T
            hk.barrier()                                     # before the next copy lands
        qn = 2 * n + wn                                      # in units of the quadrant
        out[hk.tile_coord(0, 0, 2 * m + wm, qn)] = epilogue(acc, bias, qn, BN // 2,
                                                            (DT, OUT))
    return matmul_tiles_nt


@functools.lru_cache(maxsize=None)
def tiles_nn(dtype: str):
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, p.BN), hk.cdiv(p.out.rows, p.BM)),
               requires=NN_SHAPES, warps=4)
    def matmul_tiles_nn(a: hk.Tensor[DT], b: hk.Tensor[DT], bias: hk.Tensor[DT],
                        out: hk.Tensor[OUT], *, BM: hk.Constexpr[int] = 64,
                        BN: hk.Constexpr[int] = 64, BK: hk.Constexpr[int] = 32):
        m, n = hk.arch.block_idx.y, hk.arch.block_idx.x
        qm = 2 * m + hk.arch.warp_id // 2                    # this warp's quadrant
        qn = 2 * n + hk.arch.warp_id % 2
        acc = hk.zeros(hk.RT(hk.fp32, BM // 2, BN // 2))
        for k in range(hk.cdiv(a.cols, BK)):
            ra = a[hk.tile_coord(0, 0, qm, k)].load(hk.RT(DT, BM // 2, BK))
            rb = b[hk.tile_coord(0, 0, k, qn)].load(hk.RT(DT, BK, BN // 2, "col"))
            acc += ra @ rb
        out[hk.tile_coord(0, 0, qm, qn)] = epilogue(acc, bias, qn, BN // 2,
                                                            (DT, OUT))
    return matmul_tiles_nn
