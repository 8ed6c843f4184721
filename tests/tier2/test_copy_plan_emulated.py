"""kt::copy_async (hk.group.load) under wave emulation of gfx950 and gfx942 (global→LDS DMA,
16 and 4 bytes a lane) and gfx1100 (through registers): the copy plan's per-lane offsets
(ktile/amd/common/copy_plan.hpp: a few per-lane values a copy, held from before the loop, plus
scalars a period of the swizzle) land every chunk at its swizzled place, for a swizzle that
repeats every instruction (64-byte rows on gfx950) and every 4 or 8 (256-byte rows), with one,
two or four waves taking the instructions, and for windows at the global's ragged edges (rows
past the edge: zeros; columns past it: the out-of-line edge path). The tile goes global → LDS
→ registers → global and must come back bit for bit."""
import pytest
import torch

import ktile as hk
from ktile.emulate import emulate

pytestmark = pytest.mark.tier2


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, p.C), hk.cdiv(p.x.rows, p.R), 1), warps="WARPS")
def round_trip(x: hk.Tensor[hk.bf16], y: hk.Tensor[hk.bf16], *, R: hk.Constexpr[int] = 32,
               C: hk.Constexpr[int] = 128, WARPS: hk.Constexpr[int] = 2):
    """Each block copies its R × C tile of x into LDS twice (a loop of two steps: the copy
    inside a kernel loop, as attention's), then its warps store their row blocks into y."""
    n, m, w = hk.arch.block_idx.x, hk.arch.block_idx.y, hk.arch.warp_id
    s = hk.shared(hk.ST(hk.bf16, R, C))
    for _ in range(2):
        hk.group.load(s, x[hk.tile_coord(0, 0, m, n)])
        hk.wait_for(s)
        hk.barrier()
    for i in range(R // 16 // WARPS):
        rows = w * (R // 16 // WARPS) + i
        t = s.load(hk.RT(hk.bf16, 16, C), row=rows)
        hk.wait_for(t)
        y[hk.tile_coord(0, 0, m * (R // 16) + rows, n)] = t


# (target, rows, cols of x, R, C, WARPS), one build each (~7 s): gfx942's 4-byte DMA over
# 256-byte rows (8 phases) at ragged rows; gfx950's DMA beside the edge path (ragged columns)
# with 4 waves; gfx1100's register copy of 256-byte rows (4 phases) on 2 waves
CASES = [("gfx942", 50, 128, 32, 128, 1), ("gfx950", 70, 100, 64, 32, 4),
         ("gfx1100", 64, 256, 32, 128, 2)]


@pytest.mark.parametrize("target,rows,cols,R,C,warps", CASES)
def test_a_copied_tile_comes_back_bit_for_bit(target, rows, cols, R, C, warps):
    x = torch.randn((1, 1, rows, cols), generator=torch.Generator().manual_seed(rows + cols)).to(torch.bfloat16)
    y = torch.full_like(x, float("nan"))
    emulate(round_trip, x, y, target=target, R=R, C=C, WARPS=warps)
    assert torch.equal(y, x), f"{target} {rows}x{cols} R {R} C {C} warps {warps}: " \
                              f"{(y != x).sum().item()} elements differ"
