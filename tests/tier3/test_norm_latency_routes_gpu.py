"""The norms' sm_90a-only routes on the GPU (tier 3, skipped without one), each pinned: the
latency routes (rms_norm, fused_add_rms_norm and its in-place form, layer_norm up to 256 rows)
and layer_norm's many-row routes from 8192, against the references at the route's own width and
at a ragged width inside it, bf16 and fp32. The op tests (test_ops_gpu.py) reach them only where
no measured table sends the shape to an alternative (the shipped sm_90a tables route rms_norm
and the fused form up to 256 rows to Triton where it imports)."""
import pytest

import ktile as hk
import ktile.ops as ops
from ktile.ops import _library as lib
from ktile.ops.fused_add_rmsnorm import config as fused_config
from ktile.ops.fused_add_rmsnorm.reference import fused_add_rms_norm as fused_reference
from ktile.ops.layernorm import config as ln_config
from ktile.ops.layernorm.reference import forward_tolerance, layer_norm as ln_reference
from ktile.ops.rmsnorm import config as rms_config
from ktile.ops.rmsnorm.reference import rms_norm as rms_reference, tolerance

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
SM90 = ("sm_90a",)


def sm90_routes(table_routes, kernel: str) -> list:
    return [r for r in table_routes if r.kernel == kernel and r.targets == SM90]


def rand(shape, seed, dtype):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, generator=g, device="cuda").to(dtype)


def err(got, want):
    return float(abs(got.float().cpu().numpy() - want).max())


def widths(route) -> list[int]:
    return [route.max_cols, route.max_cols - 48]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("route", sm90_routes(rms_config.ROUTES, "rms_norm_tiles"),
                         ids=lambda r: f"{r.max_cols}-{r.constants}")
def test_rms_norm_and_fused_latency_routes(route, dtype):
    fused = next(r for r in fused_config.ROUTES
                 if r.targets == SM90 and r.constants == route.constants)
    t = DTYPES[dtype]
    for cols in widths(route):
        x, r, w = rand((8, cols), 1, t), rand((8, cols), 2, t), rand((cols,), 3, t)
        np = {k: v.float().cpu().numpy() for k, v in (("x", x), ("r", r), ("w", w))}
        with lib.pinned(rms_config.TABLE, route):
            y = ops.rms_norm(x, w, 1e-6)
        want = rms_reference(np["x"], np["w"], 1e-6, getattr(hk, dtype))
        assert err(y, want) <= tolerance(want), cols
        want_o, want_h = fused_reference(np["x"], np["r"], np["w"], 1e-6, getattr(hk, dtype))
        with lib.pinned(fused_config.TABLE, fused):
            out, h = ops.fused_add_rms_norm(x, r, w, 1e-6)
            ops.fused_add_rms_norm_(x, r, w, 1e-6)       # in place: x <- norm, r <- x + r
        assert err(out, want_o) <= tolerance(want_o) and err(h, want_h) == 0.0, cols
        assert torch.equal(x, out) and torch.equal(r, h), cols


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("route", sm90_routes(ln_config.FORWARD.routes, "layer_norm_rows"),
                         ids=lambda r: f"{r.max_cols}-{r.constants}")
def test_layer_norm_sm90a_routes(route, dtype):
    t = DTYPES[dtype]
    for cols in widths(route):
        x, w, b = rand((8, cols), 4, t) + 3, rand((cols,), 5, t), rand((cols,), 6, t)
        with lib.pinned(ln_config.FORWARD, route):
            y = ops.layer_norm(x, w, b, 1e-5)
        want = ln_reference(x.float().cpu().numpy(), w.float().cpu().numpy(),
                            b.float().cpu().numpy(), 1e-5, getattr(hk, dtype))
        assert err(y, want) <= forward_tolerance(want, getattr(hk, dtype)), cols
