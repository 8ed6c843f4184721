"""The norms' sm_90a latency routes (issue #13: few rows, more warps, one short flat tile per
warp; ktile/ops/rmsnorm/config.py LATENCY_WARPS, ktile/ops/layernorm/config.py LATENCY_WIDTHS)
and layer_norm's many-row routes from 8192 (two 16 x 32 shares per warp, weight and bias
loaded with x), on the interpreter (each route pinned: the CPU takes gfx1100's routes): right
against the references at a ragged width inside the route, in bf16 and in fp32 (whose 16 x 16
tiles are not split in two); the routing: which route few and many rows take on sm_90a, AMD
unchanged; layer_norm's weight-loading choices agree and a wrong one is refused."""
import pytest

import ktile as hk
import ktile.ops as ops
from ktile.errors import InputError
from ktile.ops import _library as lib
from ktile.ops.fused_add_rmsnorm import config as fused_config
from ktile.ops.fused_add_rmsnorm.reference import fused_add_rms_norm as fused_reference
from ktile.ops.layernorm import config as ln_config
from ktile.ops.layernorm.reference import forward_tolerance, layer_norm as ln_reference
from ktile.ops.rmsnorm import config as rms_config
from ktile.ops.rmsnorm.reference import rms_norm as rms_reference, tolerance

torch = pytest.importorskip("torch")

DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


def rand(shape, seed, dtype):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def err(got, want):
    return float(abs(got.float().numpy() - want).max())


def latency_route(table, cols: int):
    """The sm_90a route `table` takes for one row of `cols`, asserted to be a latency route."""
    route = table.choose(1, cols, "sm_90a")
    assert route.targets == ("sm_90a",) and route.max_rows == rms_config.FEW_ROWS, route
    return route


def check_rms_and_fused(route_cols: int, cols: int, dtype: str):
    t = DTYPES[dtype]
    x, r, w = rand((2, cols), 1, t), rand((2, cols), 2, t), rand((cols,), 3, t)
    with lib.pinned(rms_config.TABLE, latency_route(rms_config.TABLE, route_cols)):
        y = ops.rms_norm(x, w, 1e-5)
    want = rms_reference(x.float().numpy(), w.float().numpy(), 1e-5, getattr(hk, dtype))
    assert err(y, want) <= tolerance(want)
    with lib.pinned(fused_config.TABLE, latency_route(fused_config.TABLE, route_cols)):
        out, h = ops.fused_add_rms_norm(x, r, w, 1e-6)
    want_o, want_h = fused_reference(x.float().numpy(), r.float().numpy(), w.float().numpy(),
                                     1e-6, getattr(hk, dtype))
    assert err(out, want_o) <= tolerance(want_o) and err(h, want_h) == 0.0


def check_layer_norm(route, cols: int, dtype: str):
    t = DTYPES[dtype]
    x, w, b = rand((2, cols), 4, t) + 3, rand((cols,), 5, t), rand((cols,), 6, t)
    with lib.pinned(ln_config.FORWARD, route):
        y = ops.layer_norm(x, w, b, 1e-5)
    want = ln_reference(x.float().numpy(), w.float().numpy(), b.float().numpy(), 1e-5,
                        getattr(hk, dtype))
    assert err(y, want) <= forward_tolerance(want, getattr(hk, dtype))


# (the width naming the route, the width run): 16 x 16 on 4 warps with its last tile ragged,
# 16 x 32 on 10 warps with its last warp reading nothing
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("route_cols,cols", [(1024, 1008), (5120, 4624)], ids=str)
def test_rms_norm_and_fused_latency_routes(route_cols, cols, dtype):
    check_rms_and_fused(route_cols, cols, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("route_cols,cols", [(1024, 1008), (5120, 4624)], ids=str)
def test_layer_norm_latency_routes(route_cols, cols, dtype):
    route = ln_config.forward_route(1, route_cols, "sm_90a")
    assert route.targets == ("sm_90a",) and route.max_rows == ln_config.FEW_ROWS
    check_layer_norm(route, cols, dtype)


@pytest.mark.parametrize("weights", ["auto", "early", "after", "per_tile"])
def test_layer_norm_two_shares_per_warp_every_weight_load(weights):
    """Two 16 x 32 shares per warp as the many-row 8192 route holds them, on 2 warps (a
    2048-column block: the interpreter's cost), the row ragged in the second share."""
    route = ln_config.RowTileRoute("layer_norm_rows",
                                   {"C": 32, "HELD": 2, "WARPS": 2, "WEIGHTS": weights},
                                   cols_multiple=16)
    for dtype in DTYPES:
        check_layer_norm(route, 1968, dtype)


def test_a_weight_load_that_does_not_exist_is_refused():
    route = ln_config.RowTileRoute("layer_norm_rows",
                                   {"C": 32, "HELD": 1, "WARPS": 2, "WEIGHTS": "late"},
                                   cols_multiple=16)
    x = torch.ones(1, 1024, dtype=torch.bfloat16)
    with lib.pinned(ln_config.FORWARD, route), pytest.raises(InputError, match="WEIGHTS"):
        ops.layer_norm(x, x[0], x[0], 1e-5)


def test_few_rows_take_more_warps_on_sm90a_only():
    for table in (rms_config.TABLE, fused_config.TABLE):
        for cols, warps in ((2048, 8), (4096, 16), (5120, 10), (8192, 16), (14336, 14)):
            few = table.choose(32, cols, "sm_90a").constants
            assert few["WARPS"] == warps and few["HELD"] == 1, (cols, few)
            assert few["WARPS"] > table.choose(4096, cols, "sm_90a").constants["WARPS"]
            assert table.choose(32, cols, "gfx950").targets is None
    for cols in (2048, 4096, 8192, 14336, 16384):
        few = ln_config.forward_route(32, cols, "sm_90a").constants
        many = ln_config.forward_route(4096, cols, "sm_90a").constants
        assert few["HELD"] == 1 and few["C"] * few["WARPS"] * 16 == cols, cols
        assert many["C"] * many["WARPS"] * many["HELD"] * 16 == cols, cols


def test_layer_norm_many_rows_from_8192_hold_two_shares_on_sm90a():
    for cols in (8192, 14336, 16384):
        route = ln_config.forward_route(4096, cols, "sm_90a")
        assert route.constants["HELD"] == 2 and route.targets == ("sm_90a",), cols
        assert ln_config.forward_route(4096, cols, "gfx950").constants["HELD"] == 4, cols
