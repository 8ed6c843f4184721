"""04 GEMM: C = A·Bᵀ with shared-memory staging, MMAs and waits whose counts the compiler derives."""
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


KERNELS = [(gemm, {})]
CASES = [(1, 32, 32, 32), (1, 64, 96, 128), (2, 45, 70, 50), (1, 17, 33, 100)]


def run_case(shape, backend="interpret", target=None, device="cpu"):
    import torch
    from ktile.ops.gemm.reference import gemm_abt, tolerance
    batch, m, n, k = shape
    a = torch_rand((batch, 1, m, k), torch.bfloat16, 6)
    b = torch_rand((batch, 1, n, k), torch.bfloat16, 7)
    c = torch.full((batch, 1, m, n), float("nan"))
    runner(gemm, backend, device)(a, b, c, target=target)
    an, bn = a.float().numpy(), b.float().numpy()
    return max_abs_error(c.numpy(), gemm_abt(an, bn)), tolerance(an, bn)


if __name__ == "__main__":
    example_main(globals())
