"""`acc += a @ s` on the GPU (tier 3, skipped without one): the small kernel of
tests/kn_kernels.py (B held K×N in shared memory, read N-major by wgmma's transposed-B form)
against a float64 product at every shape there (128, 64 and 32-byte swizzled rows, one and
several column blocks and K steps): a wrong descriptor (strides, swizzle, trans-b) reads the
wrong elements of B and misses by far more than the fp32 rounding allowed."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from kn_kernels import SHAPES, rows_times_kn  # noqa: E402

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


@pytest.mark.parametrize("dtype,k,n", SHAPES, ids=[f"{d}-{k}x{n}" for d, k, n in SHAPES])
def test_a_times_s_matches_torch(dtype, k, n):
    g = torch.Generator(device="cuda").manual_seed(k * 1000 + n)
    a = torch.randn((1, 1, 64, k), generator=g, device="cuda").to(DTYPES[dtype])
    b = torch.randn((1, 1, k, n), generator=g, device="cuda").to(DTYPES[dtype])
    c = torch.full((1, 1, 64, n), float("nan"), device="cuda")
    rows_times_kn(dtype, k, n)(a, b, c)
    torch.cuda.synchronize()
    want = 1.0 + a.double()[0, 0] @ b.double()[0, 0]
    err = float((c[0, 0].double() - want).abs().max())
    assert err <= 1e-3 * k, (dtype, k, n, err)   # fp32 sums of exact 16-bit products
