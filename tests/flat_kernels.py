"""Kernels of the flat layout's tests (tier 0 interprets them, tier 1 builds them, tier 2
emulates them): an RMSNorm over rows viewed as 16 x cols/16 bands, and a masked scale."""
import ktile as hk


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), warps="WARPS")
def flat_rms(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], eps: float, *,
             C: hk.Constexpr[int] = 32, HELD: hk.Constexpr[int] = 1,
             WARPS: hk.Constexpr[int] = 2):
    r, warp = hk.arch.block_idx.x, hk.arch.warp_id
    t = hk.RT(hk.bf16, 16, C, "flat")
    chunks = [warp + i * WARPS for i in range(HELD)]
    held = [x[hk.tile_coord(0, 0, r, c)].load(t) for c in chunks]
    total = hk.sum(held[0].to(hk.fp32) * held[0].to(hk.fp32))
    for xs in held[1:]:
        xf = xs.to(hk.fp32)
        total = total + hk.tile_sum(xf * xf)
    inv = hk.rsqrt(hk.group.sum(total) / hk.to_float(x.cols * 16) + eps)
    for c, xs in zip(chunks, held):
        ws = w[hk.tile_coord(0, 0, 0, c)].load(t).to(hk.fp32)
        o[hk.tile_coord(0, 0, r, c)] = ((xs.to(hk.fp32) * inv).to(hk.bf16).to(hk.fp32)
                                        * ws).to(hk.bf16)


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, 32), hk.cdiv(p.x.rows, 16)), warps=1)
def flat_extremes(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], m: hk.Tensor[hk.fp32]):
    """o = x where its element's column is at most its row (iota in the flat layout), else 0;
    m[block] = (max, min) of the tile, pads included."""
    t = hk.RT(hk.fp32, 16, 32, "flat")
    xs = x[hk.tile_coord(0, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)].load(t)
    keep = hk.iota(t, "col") <= hk.iota(t, "row")
    o[hk.tile_coord(0, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)] = hk.where(keep, xs, 0.0)
    block = hk.arch.block_idx.y * hk.cdiv(x.cols, 32) + hk.arch.block_idx.x
    small = hk.RT(hk.fp32, 16, 16, "flat")
    ends = hk.where(hk.iota(small, "col") == 1, hk.zeros(small) + hk.tile_min(xs),
                    hk.zeros(small) + hk.tile_max(xs))
    m[hk.tile_coord(0, 0, block, 0)] = ends


def rms_case(rows: int, cols: int, HELD: int, WARPS: int, C: int = 32, seed: int = 0):
    """(args, constants, want) for flat_rms on rows x cols (cols a multiple of 16)."""
    import numpy as np
    import torch
    from ktile import dtypes
    from ktile.ops.rmsnorm.reference import rms_norm
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g).to(torch.bfloat16)
    w = torch.randn(cols, generator=g).to(torch.bfloat16)
    o = torch.full_like(x, float("nan"))
    v = cols // 16
    args = (x.view(rows * 16, v), w.view(16, v), o.view(rows * 16, v), 1e-5)
    want = rms_norm(x.float().numpy(), w.float().numpy(), 1e-5, dtypes.bf16)
    return args, {"C": C, "HELD": HELD, "WARPS": WARPS}, o, np.asarray(want)
