"""matmul's row-major case (b [K, N]) from M 128 on sm_90a: `wgmma_ws_nn` (tiles_ws_nn.py),
traced for sm_90a and run by the interpreter at ragged M, N and K against float64; M 127 stays
on tiles_nn; the kernel refuses a BN no N-major descriptor reads, naming BN."""
import numpy as np
import pytest
import torch

import ktile
from ktile.errors import KernelError
from ktile.ops.matmul import config
from ktile.ops.matmul.tiles_ws_nn import wgmma_ws_nn


def test_not_routed_while_wrong_on_the_h200():
    """wgmma_ws_nn matches float64 here (the interpreter) but gave wrong results on the H200
    (eighth session): no shape routes to it until tier 3 passes."""
    assert config.choose("nn", 128, 4096, "sm_90a", 4096).kernel == "tiles_nn"
    assert config.choose("nn", 127, 4096, "sm_90a", 4096).kernel == "tiles_nn"
    assert config.choose("nn", 4096, 4096, "gfx950", 4096).kernel == "tiles_nn"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_row_major_b_matches_float64_at_sm90a(monkeypatch, dtype):
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")
    g = torch.Generator().manual_seed(7)
    m, n, k = 130, 264, 80                  # a ragged row tile, BN 256 + 8, a ragged K step
    a = torch.randn((m, k), generator=g).to(dtype)
    b = torch.randn((k, n), generator=g).to(dtype)
    bias = torch.randn((n,), generator=g).to(dtype)
    got = ktile.ops.matmul(a, b, bias)
    want = a.double().numpy() @ b.double().numpy() + bias.double().numpy()
    spread = np.abs(a.double().numpy()) @ np.abs(b.double().numpy())
    tol = spread.max() * 2.0 ** -20 + np.abs(want).max() * 2.0 ** -8
    assert got.shape == (m, n) and np.abs(got.double().numpy() - want).max() <= tol


def test_a_bn_no_descriptor_reads_is_refused():
    a, b = torch.zeros(128, 64).bfloat16(), torch.zeros(64, 96).bfloat16()
    with pytest.raises(KernelError, match="BN"):
        wgmma_ws_nn("bf16").interpret(a.view(1, 1, 128, 64), b.view(1, 1, 64, 96),
                                      torch.zeros(1, 1, 1, 96).bfloat16(),
                                      torch.zeros(1, 1, 128, 96).bfloat16(),
                                      target="sm_90a", BN=96)
