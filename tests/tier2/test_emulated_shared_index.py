"""Issue #10's lists of shared tiles indexed by a device value (tests/shared_index_kernels.py)
under wave emulation of gfx1100 and gfx950: the generated C++, base + index × stride into the
list lds-alloc laid out, agrees with the interpreter and with A·Bᵀ."""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from ktile.emulate import emulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import shared_index_kernels as K  # noqa: E402

pytestmark = pytest.mark.tier2


def _operands(seed: int):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn((1, 1, 64, 160), generator=g).to(torch.bfloat16)
    b = torch.randn((1, 1, 32, 160), generator=g).to(torch.bfloat16)
    return a, b, torch.zeros((1, 1, 64, 32))


@pytest.mark.parametrize("target", ("gfx1100", "gfx950"))
@pytest.mark.parametrize("name", sorted(K.KERNELS))
def test_emulation_agrees_with_the_interpreter(target, name):
    kernel, constants = K.KERNELS[name]
    a, b, c = _operands(7)
    want = c.clone()
    kernel.interpret(a, b, want, target=target, **constants)
    got = c.clone()
    emulate(kernel, a, b, got, target=target, **constants)
    reference = K.gemm_reference(a.float().numpy(), b.float().numpy())
    assert np.abs(want.numpy() - reference).max() <= 1e-4 * np.abs(reference).max()
    assert np.abs(got.numpy() - want.numpy()).max() <= 1e-5 * np.abs(reference).max(), name
