"""`hk.pipeline` (issue #11) traced in turns for the AMD targets, under wave emulation of gfx1100
(wave32, producer and consumer warps: 8) and gfx950 (wave64, the consumers' 4 warps alone):
the generated C++ of tests/pipeline_kernels.py's small pipelined GEMM agrees with the
interpreter and with A·Bᵀ at a ragged shape (M, N, K no multiple of the tiles, more steps
than stages)."""
import sys
from pathlib import Path

import numpy as np
import pytest

from ktile.emulate import emulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pipeline_kernels as P  # noqa: E402

pytestmark = pytest.mark.tier2


@pytest.mark.parametrize("target,warps", [("gfx1100", 8), ("gfx950", 4)])
def test_emulation_agrees_with_the_interpreter(target, warps):
    a, b, c = P.operands(70, 45, 150, seed=3)
    want = c.clone()
    P.pipelined.interpret(a, b, want, target=target, WARPS=warps)
    got = c.clone()
    emulate(P.pipelined, a, b, got, target=target, WARPS=warps)
    reference = P.reference(a, b)
    scale = np.abs(reference).max()
    assert np.abs(want.numpy() - reference).max() <= 1e-5 * scale
    assert np.abs(got.numpy() - want.numpy()).max() <= 1e-5 * scale
