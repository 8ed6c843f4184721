"""The waits pass (waits_mma.issue) on a wgmma carried through a loop in flight: the previous
iteration's group, read after this iteration's group of the same MMA is issued (a lagged
promotion: scaled_mm's LAG), is waited for with this one left in flight (`wgmma.wait_group
1`); before, the two groups of the one op were folded into one entry and the read waited for
both (0). The interpreter computes the sum of the blocks."""
import numpy as np
import pytest

import ktile as hk

torch = pytest.importorskip("torch")


@hk.kernel(warps=4, grid=lambda p: (1, 1, 1))
def lagged_sum(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    """c = Σ_j a · b_jᵀ over 3 blocks b_j, each block's product added one iteration late."""
    w = hk.arch.warp_id
    ra = a[hk.tile_coord(0, 0, w, 0)].load(hk.RT(hk.bf16, 16, 64))
    acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
    prev = hk.zeros(hk.RT(hk.fp32, 16, 64))
    for j in hk.range(3):
        sb = hk.shared(hk.ST(hk.bf16, 64, 64))
        hk.group.load(sb, b[hk.tile_coord(0, 0, j, 0)])
        hk.wait_for(sb)
        hk.barrier()
        block = hk.zeros(hk.RT(hk.fp32, 16, 64))
        block += ra @ sb.T                  # this iteration's group
        acc = acc + prev                    # the previous one's: wgmma.wait_group 1
        prev = block
        hk.barrier()
    c[hk.tile_coord(0, 0, w, 0)] = acc + prev


def test_the_previous_iterations_mma_is_waited_for_with_this_one_in_flight():
    source = lagged_sum.source(target="sm_90a")
    issue = source.index("kt::mma_ABt_shared<4>(")
    assert source.index("kt::wgmma_wait<1>()", issue) < source.index("kt::add(", issue)
    g = torch.Generator().manual_seed(5)
    a = torch.randn((1, 1, 64, 64), generator=g).bfloat16()
    b = torch.randn((1, 1, 192, 64), generator=g).bfloat16()
    c = torch.full((1, 1, 64, 64), float("nan"))
    lagged_sum.interpret(a, b, c, target="sm_90a")
    a64, b64 = a.double().numpy()[0, 0], b.double().numpy()[0, 0]
    np.testing.assert_allclose(c.numpy()[0, 0], a64 @ b64.T.reshape(64, 3, 64).sum(1),
                               atol=1e-2, rtol=1e-3)
