"""A small kernel using `acc += a @ s` (B held K×N in shared memory, N contiguous: sm_90a's
transposed-B wgmma), shared by the tiers' tests: each of 4 warps multiplies its 16 rows of
A [64, K] by the block's B [K, N], plus 1, into C [64, N] fp32."""
# no `from __future__ import annotations`: the kernel annotates with the closure's dtype

import functools

import ktile as hk

# (dtype, K, N): 128-byte swizzled rows (N 64 .. 192, one and several column blocks), 64 and
# 32-byte rows (N 32, 16), K of one and several wgmma steps
SHAPES = [("bf16", 32, 64), ("fp16", 64, 128), ("bf16", 16, 16), ("bf16", 48, 32),
          ("fp16", 16, 192), ("bf16", 64, 256)]


@functools.lru_cache(maxsize=None)
def rows_times_kn(dtype: str, k: int, n: int):
    DT = getattr(hk, dtype)

    @hk.kernel(warps=4, grid=lambda p: (1, 1, 1))
    def rows_times_kn(a: hk.Tensor[DT], b: hk.Tensor[DT], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(DT, k, n))
        hk.group.load(sb, b[hk.tile_coord(0, 0, 0, 0)])
        hk.wait_for(sb)
        hk.barrier()
        w = hk.arch.warp_id
        ra = a[hk.tile_coord(0, 0, w, 0)].load(hk.RT(DT, 16, k))
        acc = hk.full(hk.RT(hk.fp32, 16, n), 1.0)
        acc += ra @ sb
        c[hk.tile_coord(0, 0, w, 0)] = acc
    return rows_times_kn
