"""matmul with b row-major [K, N] from M 128 on the GPU (tier 3, skipped without one):
`wgmma_ws_nn` as routed, against float64 at ragged M, N and K and Qwen3-8B widths, every
input / output dtype pair of the op, with and without a bias; M 127 (tiles_nn) beside it."""
import pytest

import ktile
from ktile.ops.matmul import config

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

SHAPES = [(128, 4096, 4096), (127, 1000, 520), (130, 264, 136), (1100, 6144, 4096),
          (2048, 1000, 12288), (4096, 6144, 4096)]
PAIRS = [(torch.bfloat16, torch.bfloat16), (torch.float16, torch.float16),
         (torch.bfloat16, torch.float32), (torch.float16, torch.bfloat16)]


def check(m, n, k, dtype, out_dtype, with_bias):
    g = torch.Generator(device="cuda").manual_seed(m + 3 * n + 7 * k)
    a = torch.randn((m, k), generator=g, device="cuda").to(dtype)
    b = torch.randn((k, n), generator=g, device="cuda").to(dtype)
    bias = torch.randn((n,), generator=g, device="cuda").to(dtype) if with_bias else None
    got = ktile.ops.matmul(a, b, bias, out_dtype=out_dtype)
    want = a.double() @ b.double() + (bias.double() if with_bias else 0.0)
    spread = float((a.double().abs() @ b.double().abs()).max())
    ulp = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11, torch.float32: 0.0}[out_dtype]
    tol = spread * 2.0 ** -20 + float(want.abs().max()) * ulp + 1e-3
    assert got.dtype == out_dtype and got.shape == (m, n)
    err = float((got.double() - want).abs().max())
    assert err <= tol, f"{m}x{n}x{k} {dtype}->{out_dtype}: {err} > {tol}"


@pytest.mark.parametrize("m,n,k", SHAPES, ids=str)
def test_row_major_b_matches_float64(m, n, k):
    routed = config.choose("nn", m, n, "sm_90a", k).kernel
    assert routed == "tiles_nn"      # wgmma_ws_nn is not routed while it is wrong on the H200
    check(m, n, k, torch.bfloat16, torch.bfloat16, with_bias=True)


@pytest.mark.parametrize("dtype,out_dtype", PAIRS, ids=str)
def test_every_dtype_pair(dtype, out_dtype):
    check(200, 1000, 264, dtype, out_dtype, with_bias=False)
