"""On the GPU (tier 3, skipped without one): softmax's chunk kernels (ktile/ops/softmax/chunks.py)
at vocabulary widths, each shape checked against the reference by the shipped table's route and
each chunk route pinned (the split pair at 1-128 rows, the loop past 128), in fp32 and bf16;
layer_norm_backward's one-launch route (ktile/ops/layernorm/backward_direct.py) at 1-4 rows of
model widths, deterministic across calls."""
import pytest

from ktile.ops import _library as lib
from ktile.ops.layernorm import config as ln_config
from ktile.ops.layernorm.op import BACKWARD_OP
from ktile.ops.softmax import config
from ktile.ops.softmax.op import OP

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

SHAPES = [(1, 32000), (32, 32000), (1, 128256), (8, 151936), (32, 151936), (128, 152064),
          (300, 151936)]


def chunk_routes():
    seen = {}
    for r in config.ROUTES:
        if r.kernel in ("softmax_chunk_stats", "softmax_chunk_loop"):
            seen.setdefault((r.kernel, tuple(r.constants.items())), r)
    return list(seen.values())


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("rows,cols", SHAPES)
def test_chunk_kernels_match_the_reference(rows, cols, dtype):
    err, tol = OP.check(rows, cols, dtype, "cuda")
    assert err <= tol, (rows, cols, dtype, err, tol)
    for route in chunk_routes():
        if cols % route.constants["C"]:
            continue
        with lib.pinned(config.TABLE, route):
            err, tol = OP.check(rows, cols, dtype, "cuda")
        assert err <= tol, (route, rows, cols, dtype, err, tol)


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
@pytest.mark.parametrize("cols", [1024, 4096, 8192])
def test_layer_norm_backward_direct(cols, dtype):
    import ktile.ops as ops
    for rows in range(1, ln_config.BACKWARD_DIRECT_ROWS + 1):
        route = ln_config.BACKWARD.choose(rows, cols, "sm_90a")
        assert route.kernel == "layer_norm_rows_backward_direct"
        err, tol = BACKWARD_OP.check(rows, cols, dtype, "cuda")
        assert err <= tol, (rows, cols, dtype, err, tol)
    t = getattr(torch, {"bf16": "bfloat16", "fp32": "float32"}[dtype])
    x, dy = (torch.randn(3, cols, device="cuda").to(t) for _ in range(2))
    w = torch.randn(cols, device="cuda").to(t)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x.float(), (cols,), w.float(), None, 1e-5)
    first = ops.layer_norm_backward(dy, x, w, mean, rstd)
    again = ops.layer_norm_backward(dy, x, w, mean, rstd)
    assert all(torch.equal(a, b) for a, b in zip(first, again))
