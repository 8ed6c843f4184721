"""matmul's wgmma kernels on the H200 (tier 3, skipped without a GPU): `wgmma_nt` (both
operands from shared memory, the MMA kept in flight: wgmma.wait_group 1 in the K loop), its
BN 256 / 4-stage form, and the previous `wgmma_sync_nt`, each pinned and checked against an
fp32 product at ragged and model shapes, with and without a bias, bf16 and fp32 out; the same
bits run to run."""
import dataclasses

import pytest

from ktile.ops import _library as lib
from ktile.ops.matmul import config
from ktile.ops.matmul.op import OP
from ktile.ops.matmul.reference import ULP

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

ROUTES = {"wgmma_nt": {}, "wgmma_nt_bn256": {"BN": 256, "STAGES": 4}, "wgmma_sync_nt": {}}


def route(name: str):
    kernel = "wgmma_nt" if name.startswith("wgmma_nt") else name
    base = next(r for r in config.TABLE.routes if r.kernel == kernel)
    return dataclasses.replace(base, constants={**base.constants, **ROUTES[name]})


def rand(*shape, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, generator=g, device="cuda").bfloat16()


def assert_close(got, a, b, bias, out="bf16"):
    want = a.float() @ b.float() + (0 if bias is None else bias.float())
    accumulation = a.shape[1] * float(a.abs().max()) * float(b.abs().max()) * 2.0 ** -22
    tol = accumulation + float(want.abs().max()) * ULP[out] + 1e-3
    assert float((got.float() - want).abs().max()) <= tol


@pytest.mark.parametrize("name", list(ROUTES))
@pytest.mark.parametrize("m,n,k", [(64, 128, 64), (130, 200, 4100), (333, 1000, 136),
                                   (512, 4096, 4096), (2048, 6144, 4096)])
def test_pinned_route_matches_fp32(name, m, n, k):
    import ktile.ops as ops
    a, w, bias = rand(m, k, seed=1), rand(n, k, seed=2), rand(n, seed=3)
    with lib.pinned(OP.table, route(name)):
        assert_close(ops.matmul(a, w.t(), bias), a, w.t(), bias)
        assert_close(ops.matmul(a, w.t(), out_dtype=torch.float32), a, w.t(), None, out="fp32")


@pytest.mark.parametrize("name", list(ROUTES))
def test_same_bits_run_to_run(name):
    import ktile.ops as ops
    a, w = rand(1024, 4096, seed=4), rand(4096, 4096, seed=5)
    with lib.pinned(OP.table, route(name)):
        first = ops.matmul(a, w.t())
        assert torch.equal(ops.matmul(a, w.t()), first)
