"""The flat layout on the H200 (sm_90a's own memory-order layout, flat_tile.hpp): the RMSNorm
against its reference at aligned and masked widths, iota / masks / whole-tile extremes equal to
the interpreter's, element for element."""
import numpy as np
import pytest

from flat_kernels import flat_extremes, flat_rms, rms_case

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier3


@pytest.mark.parametrize("rows,cols,held,warps,c", [(1, 4096, 1, 4, 64), (37, 4096, 2, 2, 64),
                                                    (5, 1008, 1, 2, 32), (3, 8192, 2, 4, 64)])
def test_flat_rmsnorm_on_the_gpu(rows, cols, held, warps, c):
    args, constants, o, want = rms_case(rows, cols, held, warps, C=c)
    x, w, out, eps = args
    dx, dw, do = x.cuda(), w.cuda(), out.cuda()
    flat_rms(dx, dw, do, eps, **constants)
    got = do.view(rows, cols).float().cpu().numpy()
    assert np.max(np.abs(got - want)) <= np.max(np.abs(want)) * 2.0 ** -7 + 1e-3


def test_flat_positions_on_the_gpu_equal_the_interpreter():
    x = torch.randn(20, 40)
    o1, m1 = torch.full_like(x, float("nan")), torch.zeros(64, 16)
    flat_extremes(x, o1, m1)
    dx, o2, m2 = x.cuda(), torch.full_like(x, float("nan")).cuda(), torch.zeros(64, 16).cuda()
    flat_extremes(dx, o2, m2)
    assert torch.equal(o1, o2.cpu()) and torch.equal(m1, m2.cpu())
