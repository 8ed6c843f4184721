"""Kernels of issue #10, shared by the tiers' tests: sub-tile shared stores at device
coordinates, cross-warp tile reductions, and split-K (each warp multiplies a slice of K, then
`hk.group.sum` combines the warps' partial tiles: no branch per warp, no atomics)."""
from __future__ import annotations

import numpy as np

import ktile as hk

WARPS = 4


@hk.kernel(grid=lambda p: (1,), warps=WARPS)
def reversed_rows(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    """Warp w stores its 16x32 tile into sub-tile (3 - w, 0) of a 64x32 shared tile, then
    reads sub-tile (w, 0): o holds a's row blocks in reverse order."""
    w = hk.arch.warp_id
    x = a[hk.tile_coord(0, 0, w, 0)].load(hk.RT(hk.bf16, 16, 32))
    s = hk.shared(hk.ST(hk.bf16, 64, 32))
    s.store(x, row=WARPS - 1 - w, col=0)
    hk.barrier()
    y = s.load(hk.RT(hk.bf16, 16, 32), row=w)
    hk.wait_for(y)
    o[hk.tile_coord(0, 0, w, 0)] = y


@hk.kernel(grid=lambda p: (1,), warps=WARPS)
def tile_reductions(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    """Every warp contributes its 16x32 tile; warp w writes the sum, max and min over warps
    as column blocks 0, 1, 2 of row block w (each warp gets the same three tiles)."""
    w = hk.arch.warp_id
    x = a[hk.tile_coord(0, 0, w, 0)].load(hk.RT(hk.fp32, 16, 32))
    o[hk.tile_coord(0, 0, w, 0)] = hk.group.sum(x)
    o[hk.tile_coord(0, 0, w, 1)] = hk.group.max(x)
    o[hk.tile_coord(0, 0, w, 2)] = hk.group.min(x)


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, p.BN), hk.cdiv(p.c.rows, p.BM), 1),
           warps=WARPS)
def split_k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32], *,
            BM: hk.Constexpr[int] = 32, BN: hk.Constexpr[int] = 32,
            BK: hk.Constexpr[int] = 32):
    """C = A·Bᵀ, K split over the block's warps: warp w multiplies K tiles w, w + 4, ...,
    then the warps' partial tiles are summed across warps (a tree through shared memory) and
    warp 0 writes the block's tile."""
    m, n, w = hk.arch.block_idx.y, hk.arch.block_idx.x, hk.arch.warp_id
    acc = hk.zeros(hk.RT(hk.fp32, BM, BN))
    for j in range(hk.cdiv(a.cols, BK * WARPS)):
        k = j * WARPS + w                            # K tiles past the edge read zeros
        ra = a[hk.tile_coord(0, 0, m, k)].load(hk.RT(hk.bf16, BM, BK))
        rb = b[hk.tile_coord(0, 0, n, k)].load(hk.RT(hk.bf16, BN, BK))
        acc += ra @ rb.T
    total = hk.group.sum(acc)
    if w == 0:
        c[hk.tile_coord(0, 0, m, n)] = total


@hk.kernel(grid=lambda p: (1,), warps=WARPS)
def staged_partials(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    """The explicit form of what group.sum does: each warp stores its row vector piece into a
    shared vector at col = warp (a sub-vector store), and every warp reads the whole."""
    w = hk.arch.warp_id
    x = a[hk.tile_coord(0, 0, 0, w)].load(hk.RV(hk.fp32, 16))
    s = hk.shared(hk.SV(hk.fp32, 64))
    s.store(x, col=w)
    hk.barrier()
    y = s.load(hk.RV(hk.fp32, 64))
    hk.wait_for(y)
    o[hk.tile_coord(0, 0, w, 0)] = y


KERNELS = {"reversed_rows": (reversed_rows, {}), "tile_reductions": (tile_reductions, {}),
           "split_k": (split_k, {}), "staged_partials": (staged_partials, {})}


# ---- references (numpy) -------------------------------------------------------------------

def tree(values: list, step):
    """The pairwise order the tile reduction combines warps in (ops_shared.tile_reduce_rounds)."""
    partial = list(values)
    stride = 1
    while stride < len(partial):
        for own in range(0, len(partial), 2 * stride):
            if own + stride < len(partial):
                partial[own] = step(partial[own], partial[own + stride])
        stride *= 2
    return partial[0]


def reversed_rows_reference(a: np.ndarray) -> np.ndarray:
    blocks = a.reshape(WARPS, 16, 32)
    return blocks[::-1].reshape(a.shape)


def tile_reductions_reference(a: np.ndarray) -> np.ndarray:
    parts = list(a[0, 0].reshape(WARPS, 16, 32))
    row = np.concatenate([tree(parts, np.add), tree(parts, np.maximum),
                          tree(parts, np.minimum)], axis=1)
    return np.tile(row, (WARPS, 1))[None, None]


def split_k_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64)[0, 0] @ b.astype(np.float64)[0, 0].T)[None, None]
