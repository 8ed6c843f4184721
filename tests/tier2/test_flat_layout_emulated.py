"""The flat layout under wave emulation of gfx1100 (wave32) and gfx950 (wave64), where flat
tiles are held in the row layout: the same results as the interpreter and the reference."""
import numpy as np
import pytest

from ktile.emulate import emulate
from flat_kernels import flat_extremes, flat_rms, rms_case

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2


@pytest.mark.parametrize("target", ["gfx1100", "gfx950"])
def test_flat_kernels_under_emulation(target):
    args, constants, o, want = rms_case(2, 1008, 1, 2)
    emulate(flat_rms, *args, target=target, **constants)
    got = o.float().numpy()
    assert np.max(np.abs(got - want)) <= np.max(np.abs(want)) * 2.0 ** -7 + 1e-3

    x = torch.randn(20, 40)
    o2, m2 = torch.full_like(x, float("nan")), torch.zeros(64, 16)
    emulate(flat_extremes, x, o2, m2, target=target)
    o1, m1 = torch.full_like(x, float("nan")), torch.zeros(64, 16)
    flat_extremes(x, o1, m1)                      # the interpreter
    assert torch.equal(o1, o2) and torch.equal(m1, m2)
