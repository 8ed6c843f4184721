"""04 GEMM: C = A·Bᵀ with shared-memory staging, MMAs and waits whose counts the compiler derives.

`gemm` is one warp per 32x32 block tile; `gemm_warps` is four warps per 64x64 block tile, each
reading its 32x32 quadrant's sub-tiles of the shared tiles (`s.load(desc, row=..., col=...)`);
`gemm_wgmma` is eight warps per 128x128 block tile, three shared buffers deep, each warp
multiplying its 16 rows of A by the whole shared B tile (`acc += ra @ sb.T`: on sm_90a a
warpgroup wgmma).
"""
import ktile as hk

from common import example_main, max_abs_error, runner, torch_rand


# the grid covers batches (z) of c, not depth
GEMM_DEPTH_ONE = [(lambda p: p.c.depth == 1,
                   "c.depth must be 1: the grid does not cover depth (reshape it into rows)")]


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, p.BN), hk.cdiv(p.c.rows, p.BM), p.c.batch),
           requires=GEMM_DEPTH_ONE)
def gemm(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32], *,
         BM: hk.Constexpr[int] = 32, BN: hk.Constexpr[int] = 32, BK: hk.Constexpr[int] = 32):
    z, m, n = hk.arch.block_idx.z, hk.arch.block_idx.y, hk.arch.block_idx.x
    sa = hk.shared(hk.ST(hk.bf16, BM, BK))
    sb = hk.shared(hk.ST(hk.bf16, BN, BK))
    acc = hk.zeros(hk.RT(hk.fp32, BM, BN))
    for k in range(hk.cdiv(a.cols, BK)):
        hk.group.load(sa, a[hk.tile_coord(z, 0, m, k)])   # asynchronous, the whole block
        hk.group.load(sb, b[hk.tile_coord(z, 0, n, k)])
        hk.wait_for(sa, sb)                                # count derived by the waits pass
        hk.barrier()
        ra = sa.load(hk.RT(hk.bf16, BM, BK))               # shared → registers, asynchronous
        rb = sb.load(hk.RT(hk.bf16, BN, BK))
        hk.wait_for(ra, rb)                                # then bound: no MMA hoisted above
        acc += ra @ rb.T
        hk.barrier()                                       # before the next copy overwrites sa, sb
    c[hk.tile_coord(z, 0, m, n)] = acc


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, p.BN), hk.cdiv(p.c.rows, p.BM), p.c.batch),
           requires=GEMM_DEPTH_ONE, warps=4)
def gemm_warps(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32], *,
               BM: hk.Constexpr[int] = 64, BN: hk.Constexpr[int] = 64,
               BK: hk.Constexpr[int] = 32):
    """The same product with four warps: each computes one quadrant of the block's tile."""
    z, m, n = hk.arch.block_idx.z, hk.arch.block_idx.y, hk.arch.block_idx.x
    wm, wn = hk.arch.warp_id // 2, hk.arch.warp_id % 2     # this warp's quadrant
    sa = hk.shared(hk.ST(hk.bf16, BM, BK))
    sb = hk.shared(hk.ST(hk.bf16, BN, BK))
    acc = hk.zeros(hk.RT(hk.fp32, BM // 2, BN // 2))
    for k in range(hk.cdiv(a.cols, BK)):
        hk.group.load(sa, a[hk.tile_coord(z, 0, m, k)])   # every warp copies a part
        hk.group.load(sb, b[hk.tile_coord(z, 0, n, k)])
        hk.wait_for(sa, sb)
        hk.barrier()
        ra = sa.load(hk.RT(hk.bf16, BM // 2, BK), row=wm)  # sub-tile: this warp's rows of A
        rb = sb.load(hk.RT(hk.bf16, BN // 2, BK), row=wn)  # and its rows of B (columns of C)
        hk.wait_for(ra, rb)
        acc += ra @ rb.T
        hk.barrier()
    c[hk.tile_coord(z, 0, 2 * m + wm, 2 * n + wn)] = acc   # in units of the 32x32 quadrant


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, p.BN), hk.cdiv(p.c.rows, p.BM), p.c.batch),
           requires=GEMM_DEPTH_ONE, warps=8)
def gemm_wgmma(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32], *,
               BM: hk.Constexpr[int] = 128, BN: hk.Constexpr[int] = 128,
               BK: hk.Constexpr[int] = 0, STAGES: hk.Constexpr[int] = 3):
    """Each warp owns BM / warps rows of the BMxBN block tile and multiplies them by all of B,
    both operands straight from shared memory (`sa @ sb.T`: warp w takes sa's rows
    [w·rows, (w+1)·rows); on sm_90a a warpgroup wgmma reads both by descriptor, elsewhere
    each warp loads its rows first). The K loop runs through STAGES shared buffers: while tile
    t is multiplied, the group loads of t+1 .. t+STAGES-2 are in flight. The warp then waits for its MMA
    (the wait naming acc: `wgmma.wait_group 0` on sm_90a) and a barrier frees the previous
    tile's buffer for tile t+STAGES-1. (Waiting only for the MMA of t-1, a wait naming t-1's
    buffers: `wgmma.wait_group 1`, gave wrong rows 16 and up at STAGES 2 and 4 on the H200 on
    2026-12-02, right ones at 3. The cause, found in 96f6c15, was the accumulator read before
    the final wgmma drain, fixed in the waits pass; the example still drains.
    `ktile.ops.matmul`'s wgmma_nt keeps one MMA in flight with one barrier a tile, checked on
    the H200.) Two barriers a tile, so that no target reads shared memory while a
    copy into it may land from another warp (gfx950's DMA copies: the code-object check
    refuses an LDS read with any DMA copy in flight that no wait and barrier covered;
    `ktile.ops.matmul`'s sm_90a kernel, TMA only, needs one). The loop runs whole rounds of
    STAGES tiles: a tile past the edge is zero-filled by its group load and adds nothing,
    which costs less than a branch around the multiply. The store of acc waits for the last
    MMA. BK 0 picks 64 where the stages fit in 90% of the target's shared memory (sm_90a,
    gfx950) and 32 on the 64 KiB AMD targets."""
    if BK == 0:
        BK = 64 if STAGES * (BM + BN) * 64 * 2 <= hk.arch.shared_bytes * 9 // 10 else 32
    z, m, n = hk.arch.block_idx.z, hk.arch.block_idx.y, hk.arch.block_idx.x
    warps = hk.arch.num_warps
    w, rows = hk.arch.warp_id, BM // warps                 # this warp's rows of the block tile
    sa = [hk.shared(hk.ST(hk.bf16, BM, BK)) for _ in range(STAGES)]
    sb = [hk.shared(hk.ST(hk.bf16, BN, BK)) for _ in range(STAGES)]
    acc = hk.zeros(hk.RT(hk.fp32, rows, BN))
    tiles = hk.cdiv(a.cols, BK)
    for s in range(STAGES - 1):                            # tiles 0 .. STAGES-2 in flight
        hk.group.load(sa[s], a[hk.tile_coord(z, 0, m, s)])
        hk.group.load(sb[s], b[hk.tile_coord(z, 0, n, s)])
    for k in range(0, tiles, STAGES):
        for s in range(STAGES):                            # unrolled: buffer s holds tile k + s
            hk.wait_for(sa[s], sb[s])                      # the later tiles stay in flight
            hk.barrier()                                   # tile k+s landed for every warp
            acc += sa[s] @ sb[s].T                         # both operands from shared memory
            free = (s + STAGES - 1) % STAGES               # tile k+s-1's buffer
            hk.wait_for(acc)                               # this tile's MMA (wait_group 0)
            hk.barrier()                                   # every warp is done with tile k+s-1
            hk.group.load(sa[free], a[hk.tile_coord(z, 0, m, k + s + STAGES - 1)])
            hk.group.load(sb[free], b[hk.tile_coord(z, 0, n, k + s + STAGES - 1)])
    hk.wait_for(*sa, *sb)                                  # the last prefetches (past the edge)
    c[hk.tile_coord(z, 0, m * warps + w, n)] = acc         # in units of this warp's rows x BN


KERNELS = [(gemm, {}), (gemm_warps, {}), (gemm_wgmma, {})]
CASES = [(1, 32, 32, 32), (1, 64, 96, 128), (2, 45, 70, 50), (1, 17, 33, 100)]


def run_case(shape, backend="interpret", target=None, device="cpu"):
    import torch
    from ktile.ops.gemm.reference import gemm_abt, tolerance
    batch, m, n, k = shape
    a = torch_rand((batch, 1, m, k), torch.bfloat16, 6)
    b = torch_rand((batch, 1, n, k), torch.bfloat16, 7)
    an, bn = a.float().numpy(), b.float().numpy()
    want, errors = gemm_abt(an, bn), []
    for kernel, _ in KERNELS:
        c = torch.full((batch, 1, m, n), float("nan"))
        runner(kernel, backend, device)(a, b, c, target=target)
        errors.append(max_abs_error(c.numpy(), want))
    return max(errors), tolerance(an, bn)


if __name__ == "__main__":
    example_main(globals())
