"""A small pipelined GEMM written with `hk.pipeline` (issue #11), shared by the tiers' tests:
C = A·Bᵀ (+ nothing), one producer warpgroup and one consumer warpgroup over STAGES stages of
a 64×32 tile of A and a 32×32 tile of B, each consumer warp 16 rows of the 64 (`sa @ sb.T`).

Traced for sm_90a it is warp-specialised (8 warps: consumers 0..3, producer 4..7, setmaxnreg,
mbarriers); for the AMD targets every warp plays both roles in turn (`warps="WARPS"`: 8, or
the consumers' 4 alone)."""
from __future__ import annotations

import numpy as np

import ktile as hk

BM, BN, BK = 64, 32, 32


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, BN), hk.cdiv(p.c.rows, BM), 1), warps="WARPS")
def pipelined(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32], *,
              STAGES: hk.Constexpr[int] = 3, WARPS: hk.Constexpr[int] = 8):
    m, n = hk.arch.block_idx.y, hk.arch.block_idx.x
    pipe = hk.pipeline(STAGES, hk.ST(hk.bf16, BM, BK), hk.ST(hk.bf16, BN, BK),
                       steps=hk.cdiv(a.cols, BK))

    @pipe.producer(warpgroups=1, registers=56)
    def load(k, sa, sb):
        hk.group.load(sa, a[hk.tile_coord(0, 0, m, k)])
        hk.group.load(sb, b[hk.tile_coord(0, 0, n, k)])

    @pipe.consumer(warpgroups=1, registers=200)
    def multiply(k, sa, sb, acc):
        acc += sa @ sb.T
        return acc

    @pipe.finish
    def store(acc):
        c[hk.tile_coord(0, 0, m * pipe.consumer_warps + hk.arch.warp_id, n)] = acc

    pipe.run(hk.zeros(hk.RT(hk.fp32, BM // 4, BN)))


def operands(m: int, n: int, k: int, seed: int = 0):
    """bf16 A [m, k], B [n, k] and a zero fp32 C [m, n] as torch tensors."""
    import torch
    g = torch.Generator().manual_seed(seed)
    a = torch.randn((m, k), generator=g).to(torch.bfloat16)
    b = torch.randn((n, k), generator=g).to(torch.bfloat16)
    return a, b, torch.zeros((m, n))


def reference(a, b) -> np.ndarray:
    return a.float().numpy() @ b.float().numpy().T
