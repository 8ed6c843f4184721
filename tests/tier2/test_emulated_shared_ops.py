"""Issue #10's kernels (tests/shared_ops_kernels.py) under wave emulation of gfx1100 and gfx950
agree with the interpreter: sub-tile stores and tile reductions bit for bit (the headers
combine warps in the interpreter's tree order), split-K within fp32 accumulation order."""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from ktile.emulate import emulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import shared_ops_kernels as K  # noqa: E402

pytestmark = pytest.mark.tier2


def _rand(shape, dtype, seed):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _cases():
    bf16, fp32 = torch.bfloat16, torch.float32
    return {
        "reversed_rows": ([_rand((1, 1, 64, 32), bf16, 1), torch.zeros((1, 1, 64, 32), dtype=bf16)], 0),
        "tile_reductions": ([_rand((1, 1, 64, 32), fp32, 2), torch.zeros((1, 1, 64, 96))], 0),
        "staged_partials": ([_rand((1, 1, 1, 64), fp32, 3), torch.zeros((1, 1, 4, 64))], 0),
        "split_k": ([_rand((1, 1, 64, 160), bf16, 4), _rand((1, 1, 32, 160), bf16, 5),
                     torch.zeros((1, 1, 64, 32))], 1e-5),
    }


@pytest.mark.parametrize("target", ("gfx1100", "gfx950"))
@pytest.mark.parametrize("name", sorted(K.KERNELS))
def test_emulation_agrees_with_the_interpreter(target, name):
    kernel, constants = K.KERNELS[name]
    tensors, tolerance = _cases()[name]
    want = [t.clone() for t in tensors]
    kernel.interpret(*want, target=target, **constants)
    got = [t.clone() for t in tensors]
    emulate(kernel, *got, target=target, **constants)
    for g, w in zip(got, want):
        diff = np.abs(g.float().numpy() - w.float().numpy()).max()
        assert diff <= tolerance * max(1.0, float(w.abs().max())), f"{name} on {target}: {diff}"
