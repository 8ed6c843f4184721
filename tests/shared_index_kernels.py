"""Kernels of issue #10's lists of shared tiles indexed by a device value, shared by the tiers'
tests: a GEMM whose K loop is double-buffered through `bufs[k % 2]` (the copy of step k+1
flies while step k multiplies), once with both operands loaded into registers and once with B
multiplied straight from shared memory (`acc += a @ bufs[k % 2].T`).

The lists are indexed with `pick(bufs, i)`, the call the kernel rewrite makes of `bufs[i]`
(ktile.lang.subscripts); `test_shared_index.py` checks the subscript spelling itself."""
from __future__ import annotations

import numpy as np

import ktile as hk
from ktile.lang.shared_ops import select_shared as pick

BM, BN, BK = 32, 32, 32


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, BN), hk.cdiv(p.c.rows, BM), 1))
def pipelined_gemm(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    """C = A·Bᵀ, K in steps of BK through two buffers per operand: step k reads buffer k % 2
    while the copy of step k+1 fills buffer (k+1) % 2 (the last step copies itself again, so
    every copy has a wait)."""
    m, n = hk.arch.block_idx.y, hk.arch.block_idx.x
    sa = [hk.shared(hk.ST(hk.bf16, BM, BK)) for _ in range(2)]
    sb = [hk.shared(hk.ST(hk.bf16, BN, BK)) for _ in range(2)]
    steps = hk.cdiv(a.cols, BK)
    hk.group.load(sa[0], a[hk.tile_coord(0, 0, m, 0)])
    hk.group.load(sb[0], b[hk.tile_coord(0, 0, n, 0)])
    acc = hk.zeros(hk.RT(hk.fp32, BM, BN))
    for k in range(steps):
        hk.wait_for(pick(sa, k % 2), pick(sb, k % 2))
        hk.barrier()
        ra = pick(sa, k % 2).load(hk.RT(hk.bf16, BM, BK))
        rb = pick(sb, k % 2).load(hk.RT(hk.bf16, BN, BK))
        hk.wait_for(ra, rb)
        hk.barrier()                       # every warp has read before the buffer refills
        after = hk.min(k + 1, steps - 1)
        hk.group.load(pick(sa, (k + 1) % 2), a[hk.tile_coord(0, 0, m, after)])
        hk.group.load(pick(sb, (k + 1) % 2), b[hk.tile_coord(0, 0, n, after)])
        acc += ra @ rb.T                   # overlaps the copies in flight
    hk.wait_for(sa[0], sb[0])              # the last copy: a wait naming a tile of the list
    c[hk.tile_coord(0, 0, m, n)] = acc


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, BN), hk.cdiv(p.c.rows, 64), 1), warps=4)
def pipelined_gemm_shared_b(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16],
                            c: hk.Tensor[hk.fp32]):
    """The same product with four warps, each 16 rows of A, multiplying B straight from the
    shared buffer picked on the device (on sm_90a a warpgroup wgmma)."""
    m, n, w = hk.arch.block_idx.y, hk.arch.block_idx.x, hk.arch.warp_id
    sb = (hk.shared(hk.ST(hk.bf16, BN, BK)), hk.shared(hk.ST(hk.bf16, BN, BK)))
    steps = hk.cdiv(a.cols, BK)
    hk.group.load(sb[0], b[hk.tile_coord(0, 0, n, 0)])
    acc = hk.zeros(hk.RT(hk.fp32, 16, BN))
    for k in range(steps):
        ra = a[hk.tile_coord(0, 0, 4 * m + w, k)].load(hk.RT(hk.bf16, 16, BK))
        hk.wait_for(pick(sb, k % 2))
        hk.barrier()
        acc += ra @ pick(sb, k % 2).T
        hk.wait_for(pick(sb, k % 2))       # sm_90a: this warp's wgmma has read the buffer
        hk.barrier()                       # every warp's MMA has read the buffer
        after = hk.min(k + 1, steps - 1)
        hk.group.load(pick(sb, (k + 1) % 2), b[hk.tile_coord(0, 0, n, after)])
    hk.wait_for(sb[0])                     # a wait naming a tile of the list completes the last copy
    c[hk.tile_coord(0, 0, 4 * m + w, n)] = acc


def gemm_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A·Bᵀ in float64 of the bf16 inputs, as fp32 (the MMA accumulates in fp32)."""
    return (a.astype(np.float64) @ np.swapaxes(b, -1, -2).astype(np.float64)).astype(np.float32)


# name -> (kernel, constants): what the tier 1 builds and tier 2 emulation run
KERNELS = {"pipelined_gemm": (pipelined_gemm, {}),
           "pipelined_gemm_shared_b": (pipelined_gemm_shared_b, {})}
