"""The decode / skinny path (M ≤ 64): out = a · b for a few rows of a, memory-bound on b.

Phase 1 (`skinny_nt`, `skinny_nn`): block (n, s) owns BN columns of the output (BN rows of
the weight W [N, K], or BN columns of b [K, N]) and split s of the K tiles; its warps split
that split's tiles further (warp w of split s takes tiles s·WARPS + w, then every
splits·WARPS-th). Each warp keeps UNROLL tile loads in flight (the weight's and a's, the loads
of a step written before its MMAs) and accumulates into its own fp32 ROWS×BN tile;
`hk.group.sum` adds the warps' tiles in a fixed tree, and warp 0 writes the block's fp32
partial into `part[s]` ([splits, M, N]: the split count is `part`'s depth, a shape, so one
build serves every split count). Rows of a past M read 0, columns past N and K tiles past the
edge read 0 and add nothing; nothing past M or N is written.

Phase 2 (`splitk_reduce`): sums the partials in split order (the same bits every run: no
atomics), UNROLL splits' loads in flight at a time, adds the bias in fp32 and rounds once to
the output dtype.

Why `skinny_nt` ran 2x M = 1's time at M 3..8 on sm_90a (0.38-0.47x cuBLAS, H200 2026-12-02;
SASS of ROWS 16 / BN 32 / BK 32 / UNROLL 2, CUDA 13.0): W is read once (one block column of
a's 16 rows, every row of a in the same MMA: no per-row re-read or serial pass), but W's tile
is loaded as the MMA's fragment in the row layout, 4 bytes a lane per LDG (48 32-bit loads
and 16 HMMA in the loop) where a flat tile takes 16, and at 122 registers only 16 warps fit a
multiprocessor; each block also reloads a's 16-row tile every step (L2), and the partials
take a second launch. sm_90a routes M >= 2 to skinny_wgmma.py (W by TMA: 16-byte bulk copies).
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

from .dtypes import pair

PARTIALS = [
    (lambda p: p.a.batch * p.a.depth == 1, "a must be 2-D [M, K]"),
    (lambda p: p.part.batch == 1 and p.part.rows == p.a.rows,
     "part must be [splits, M, N] with a's M rows"),
    (lambda p: p.ROWS >= p.a.rows, "ROWS (the rows of a held) must be at least M: choose "
     "another route"),
]
NT_SHAPES = PARTIALS + [
    (lambda p: p.b.batch * p.b.depth == 1 and p.b.cols == p.a.cols,
     "b must be the weight [N, K] with a's K columns"),
    (lambda p: p.part.cols == p.b.rows, "part must have N = b.rows columns"),
]
NN_SHAPES = PARTIALS + [
    (lambda p: p.b.batch * p.b.depth == 1 and p.b.rows == p.a.cols,
     "b must be [K, N] with a's K columns as its rows"),
    (lambda p: p.part.cols == p.b.cols, "part must have N = b.cols columns"),
]


@functools.lru_cache(maxsize=None)
def skinny_nt(dtype: str):
    """Phase 1 with b the weight W [N, K] (row-major: `W.t()` is the op's b)."""
    DT = getattr(hk, pair(dtype)[0])

    @hk.kernel(grid=lambda p: (hk.cdiv(p.b.rows, p.BN), p.part.depth), warps="WARPS",
               requires=NT_SHAPES)
    def matmul_skinny_nt(a: hk.Tensor[DT], b: hk.Tensor[DT], part: hk.Tensor[hk.fp32], *,
                         ROWS: hk.Constexpr[int] = 16, BN: hk.Constexpr[int] = 32,
                         BK: hk.Constexpr[int] = 64, UNROLL: hk.Constexpr[int] = 2,
                         WARPS: hk.Constexpr[int] = 4):
        n, split, warp = hk.arch.block_idx.x, hk.arch.block_idx.y, hk.arch.warp_id
        step = part.depth * WARPS                    # warps of all splits, interleaved
        acc = hk.zeros(hk.RT(hk.fp32, ROWS, BN))
        for k0 in range(split * WARPS + warp, hk.cdiv(a.cols, BK), step * UNROLL):
            ks = [k0 + u * step for u in range(UNROLL)]          # unrolled: loads in flight
            ws = [b[hk.tile_coord(0, 0, n, k)].load(hk.RT(DT, BN, BK)) for k in ks]
            xs = [a[hk.tile_coord(0, 0, 0, k)].load(hk.RT(DT, ROWS, BK)) for k in ks]
            for x, w in zip(xs, ws):
                acc += x @ w.T
        total = hk.group.sum(acc)
        if warp == 0:
            part[hk.tile_coord(0, split, 0, n)] = total
    return matmul_skinny_nt


@functools.lru_cache(maxsize=None)
def skinny_nn(dtype: str):
    """Phase 1 with b [K, N] row-major: its K×BN tiles load in column layout (a · b, AB)."""
    DT = getattr(hk, pair(dtype)[0])

    @hk.kernel(grid=lambda p: (hk.cdiv(p.b.cols, p.BN), p.part.depth), warps="WARPS",
               requires=NN_SHAPES)
    def matmul_skinny_nn(a: hk.Tensor[DT], b: hk.Tensor[DT], part: hk.Tensor[hk.fp32], *,
                         ROWS: hk.Constexpr[int] = 16, BN: hk.Constexpr[int] = 32,
                         BK: hk.Constexpr[int] = 64, UNROLL: hk.Constexpr[int] = 2,
                         WARPS: hk.Constexpr[int] = 4):
        n, split, warp = hk.arch.block_idx.x, hk.arch.block_idx.y, hk.arch.warp_id
        step = part.depth * WARPS
        acc = hk.zeros(hk.RT(hk.fp32, ROWS, BN))
        for k0 in range(split * WARPS + warp, hk.cdiv(a.cols, BK), step * UNROLL):
            ks = [k0 + u * step for u in range(UNROLL)]
            ws = [b[hk.tile_coord(0, 0, k, n)].load(hk.RT(DT, BK, BN, "col")) for k in ks]
            xs = [a[hk.tile_coord(0, 0, 0, k)].load(hk.RT(DT, ROWS, BK)) for k in ks]
            for x, w in zip(xs, ws):
                acc += x @ w
        total = hk.group.sum(acc)
        if warp == 0:
            part[hk.tile_coord(0, split, 0, n)] = total
    return matmul_skinny_nn


REDUCE_SHAPES = [
    (lambda p: p.part.batch * p.part.depth == 1 and p.part.cols == p.out.cols
     and p.part.rows % p.out.rows == 0,
     "part must be the [splits, M, N] partials viewed as [splits * M, N] for out [M, N]"),
    (lambda p: p.out.batch * p.out.depth == 1, "out must be 2-D [M, N]"),
    (lambda p: p.bias.cols == p.out.cols and p.bias.rows * p.bias.depth * p.bias.batch == 1,
     "bias must hold one value per column of out (N values)"),
]


@functools.lru_cache(maxsize=None)
def splitk_reduce(dtype: str):
    """Phase 2: out = round(Σ_s part[s] + bias) for the pair's input (bias) and output dtype.

    The partials come as one [splits · M, N] global, so split s's 16 × BN tile of out's row
    tile m starts at element row s · M + 16 · m: UNROLL such loads are issued before their adds
    (a runtime loop over the splits would wait for each in turn). A tile's rows past M hold the
    next split's rows (or 0 past the last), are summed and never stored; a split past the
    count lies past the global's edge and reads 0. The adds run in split order: the same bits
    every run."""
    DT, OUT = (getattr(hk, d) for d in pair(dtype))

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, p.BN), hk.cdiv(p.out.rows, 16)),
               requires=REDUCE_SHAPES)
    def matmul_splitk_reduce(part: hk.Tensor[hk.fp32], bias: hk.Tensor[DT],
                             out: hk.Tensor[OUT], *, BN: hk.Constexpr[int] = 64,
                             UNROLL: hk.Constexpr[int] = 4):
        n, m = hk.arch.block_idx.x, hk.arch.block_idx.y
        rows, tile = out.rows, hk.RT(hk.fp32, 16, BN)
        acc = hk.zeros(tile)
        for s in range(0, part.rows // rows, UNROLL):
            ts = [part[hk.elem_coord(0, 0, (s + u) * rows + m * 16, n * BN)].load(tile)
                  for u in range(UNROLL)]                # in flight together
            for t in ts:
                acc += t
        acc = acc + bias[hk.tile_coord(0, 0, 0, n)].load(hk.RV(DT, BN, "col")).to(hk.fp32)
        out[hk.tile_coord(0, 0, m, n)] = acc.to(OUT)
    return matmul_splitk_reduce
