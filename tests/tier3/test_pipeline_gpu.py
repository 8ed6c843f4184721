"""`hk.pipeline` on the GPU (tier 3, skipped without one): matmul pinned to each route of
`wgmma_ws_nt` (the warp-specialised kernel: a producer warpgroup, two consumer warpgroups,
mbarrier stages, a grouped raster grid; 128 x 128 and 128 x 256 tiles)
against an fp32 product at ragged and model shapes, every output dtype, with and without a
bias, the same bits run to run; the persistent variant's routes (128 x 256 and 128 x 128)
at ragged and model shapes; the small pipelined GEMM of tests/pipeline_kernels.py
against the interpreter at ragged shapes and stage counts (the mbarrier phases over several
rounds)."""
import sys
from pathlib import Path

import numpy as np
import pytest

from ktile.ops import _library as lib
from ktile.ops.matmul import config
from ktile.ops.matmul.op import OP
from ktile.ops.matmul.reference import ULP

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pipeline_kernels as P  # noqa: E402

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def ws_route(kernel="wgmma_ws_nt"):
    return next(r for r in config.TABLE.routes if r.kernel == kernel)


WS_ROUTES = [r for r in config.TABLE.routes if r.kernel == "wgmma_ws_nt"]


def rand(*shape, seed=0, dtype=torch.bfloat16):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, generator=g, device="cuda").to(dtype)


def assert_close(got, a, b, bias, out):
    want = a.float() @ b.float() + (0 if bias is None else bias.float())
    accumulation = a.shape[1] * float(a.abs().max()) * float(b.abs().max()) * 2.0 ** -22
    tol = accumulation + float(want.abs().max()) * ULP[out] + 1e-3
    err = float((got.float() - want).abs().max())
    assert err <= tol, (tuple(a.shape), tuple(b.shape), err, tol)


@pytest.mark.parametrize("m,n,k", [(65, 100, 70), (130, 270, 200), (513, 4000, 4100),
                                   (4096, 4096, 4096), (2048, 12288, 4096), (1000, 6144, 4096),
                                   (1100, 3000, 256)],     # 9 row tiles: bands of 8 and 1
                         ids=str)
@pytest.mark.parametrize("out", ["bf16", "fp32"])
@pytest.mark.parametrize("route", WS_ROUTES, ids=lambda r: f"BN{r.constants['BN']}")
def test_wgmma_ws_nt_matches_fp32(m, n, k, out, route):
    import ktile.ops as ops
    a, w, bias = rand(m, k, seed=1), rand(n, k, seed=2), rand(n, seed=3)
    with_bias = m % 2 == 1
    with lib.pinned(OP.table, route):
        got = ops.matmul(a, w.t(), bias if with_bias else None, out_dtype=DTYPES[out])
    assert_close(got, a, w.t(), bias if with_bias else None, out)


PERSISTENT_ROUTES = [r for r in config.TABLE.routes if r.kernel == "wgmma_ws_persistent_nt"]


@pytest.mark.parametrize("route", PERSISTENT_ROUTES, ids=lambda r: f"BN{r.constants['BN']}")
@pytest.mark.parametrize("m,n,k", [(130, 270, 200), (4096, 4096, 4096), (1000, 6144, 4096)],
                         ids=str)
def test_wgmma_ws_persistent_nt_matches_fp32(m, n, k, route):
    import ktile.ops as ops
    a, w, bias = rand(m, k, seed=6), rand(n, k, seed=7), rand(n, seed=8)
    with lib.pinned(OP.table, route):
        got = ops.matmul(a, w.t(), bias)
    assert_close(got, a, w.t(), bias, "bf16")


def test_wgmma_ws_nt_fp16_and_the_same_bits_run_to_run():
    import ktile.ops as ops
    a, w = rand(300, 1000, seed=4, dtype=torch.float16), rand(700, 1000, seed=5,
                                                               dtype=torch.float16)
    with lib.pinned(OP.table, ws_route()):
        first = ops.matmul(a, w.t())
        assert torch.equal(ops.matmul(a, w.t()), first)
    assert_close(first, a, w.t(), None, "fp16")


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("m,n,k", [(70, 45, 100), (200, 96, 1000)], ids=str)
def test_small_pipeline_matches_the_interpreter(m, n, k, stages):
    a, b, c = P.operands(m, n, k, seed=stages)
    want = c.clone()
    P.pipelined.interpret(a, b, want, target="sm_90a", STAGES=stages)
    got = c.cuda()
    P.pipelined(a.cuda(), b.cuda(), got, STAGES=stages)
    torch.cuda.synchronize()
    scale = float(np.abs(want.numpy()).max())
    assert float((got.cpu() - want).abs().max()) <= 1e-5 * scale
