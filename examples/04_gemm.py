"""04 GEMM: C = A·Bᵀ with shared-memory staging, MMAs and waits whose counts the compiler derives.

`gemm` is one warp per 32x32 block tile; `gemm_warps` is four warps per 64x64 block tile, each
reading its 32x32 quadrant's sub-tiles of the shared tiles (`s.load(desc, row=..., col=...)`).
"""
import ktile as hk

from common import example_main, max_abs_error, runner, torch_rand


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, p.BN), hk.cdiv(p.c.rows, p.BM), p.c.batch))
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


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, p.BN), hk.cdiv(p.c.rows, p.BM), p.c.batch), warps=4)
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


KERNELS = [(gemm, {}), (gemm_warps, {})]
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
