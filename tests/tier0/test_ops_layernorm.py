"""layer_norm's row-tile kernels on CPU tensors (the interpreter), issue #13: the routes by width
(widths that are a multiple of 16 take the row view, others the vector kernels, wide ragged
ones refused naming the limit), the forward (flat tiles) at model widths up to 16384 and a
width between two routes, the sm_90a row-tile backward (pinned: the interpreter takes
gfx1100's routes) with its partial sums, and the partial count."""
import pytest

import ktile as hk
import ktile.ops as ops
from ktile.errors import InputError
from ktile.ops import _library as lib
from ktile.ops.layernorm import config
from ktile.ops.layernorm.reference import (forward_tolerance, layer_norm as ln_reference,
                                           layernorm_backward, tolerance as bwd_tolerance)

from bad_inputs import refused

torch = pytest.importorskip("torch")


def rand(shape, seed, dtype=torch.bfloat16):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def err(got, want):
    return float(abs(got.float().numpy() - want).max())


@pytest.mark.parametrize("target", ["sm_90a", "gfx1100", "gfx950"])
def test_routes_by_width(target):
    for cols in (1024, 2048, 2880, 4096, 5120, 8192, 14336, 16384):
        route = config.forward_route(4, cols, target)
        assert route.kernel == "layer_norm_rows", cols
        c, warps, held = (route.constants[k] for k in ("C", "WARPS", "HELD"))
        assert 16 * c * warps * held >= cols and 16 * c * warps * (held - 1) < cols, cols
    assert config.forward_route(4, 2000 + 1, target).kernel == "layer_norm_held"


def test_model_widths_fill_every_warp():
    for cols in (2048, 3584, 4096, 5120, 8192, 16384):
        c = config.forward_route(1, cols, "sm_90a").constants
        assert c["C"] * c["WARPS"] * c["HELD"] == cols // 16, cols


def test_sm90a_backward_takes_row_tiles_up_to_8192_then_the_16_row_kernel():
    for cols in (1024, 2048, 4096, 8192):
        route = config.BACKWARD.choose(4096, cols, "sm_90a")
        assert route.kernel == "layer_norm_rows_backward", cols
        assert route.constants["C"] * route.constants["WARPS"] == cols // 16, cols
    assert config.BACKWARD.choose(8, 16384, "sm_90a").kernel == "layer_norm_dx"
    assert config.BACKWARD.choose(8, 2050, "sm_90a").kernel == "layer_norm_dx"
    assert config.BACKWARD.choose(8, 4096, "gfx950").kernel == "layer_norm_dx"


def test_a_wide_ragged_row_is_refused_naming_the_limit():
    x, w = torch.ones(2, 4100), torch.ones(4100)
    refused(lambda: ops.layer_norm(x, w, w), "4100 columns", "multiple of 16", "2048",
            kind=InputError)


@pytest.mark.parametrize("shape,dtype", [((2, 16384), "bf16"), ((1, 5120), "fp32"),
                                         ((3, 2880), "fp16"), ((2, 14336), "bf16"),
                                         ((2, 2, 48), "fp32"), ((2, 1040), "fp32")], ids=str)
def test_forward_at_model_widths(shape, dtype):
    t = getattr(torch, getattr(hk, dtype).torch_name)
    x, w, b = rand(shape, 1, t) + 2, rand(shape[-1:], 2, t), rand(shape[-1:], 3, t)
    y = ops.layer_norm(x, w, b, 1e-5)
    want = ln_reference(x.float().numpy(), w.float().numpy(), b.float().numpy(), 1e-5,
                        getattr(hk, dtype))
    assert y.shape == x.shape and y.dtype == x.dtype
    assert err(y, want) <= forward_tolerance(want, getattr(hk, dtype))


@pytest.mark.parametrize("rows,cols", [(21, 288), (5, 1024), (150, 64), (5, 4208)])
def test_row_tile_backward_matches_reference(rows, cols):
    x, dy, w = rand((rows, cols), 4, torch.float32), rand((rows, cols), 5, torch.float32), \
        rand((cols,), 6, torch.float32)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, (cols,), w, None, 1e-5)
    route = config.BACKWARD.choose(rows, cols, "sm_90a")
    assert route.kernel == "layer_norm_rows_backward"
    with lib.pinned(config.BACKWARD, route):
        got = ops.layer_norm_backward(dy, x, w, mean, rstd)
    want = layernorm_backward(x.numpy(), dy.numpy(), w.numpy(), mean.reshape(-1).numpy(),
                              rstd.reshape(-1).numpy())
    for g, e in zip(got, want):
        assert err(g, e) <= bwd_tolerance(*want)


def test_parts_cover_the_rows_and_stay_bounded():
    assert [config.parts(r) for r in (1, 21, 132, 4096, 65536)] == [1, 21, 132, 256, 264]


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_sm90a_many_row_route_at_8192(dtype):
    """sm_90a's route for many rows of 8192 (two shares per warp, the weight and bias loaded
    with x in 16-bit dtypes), which the interpreter does not take by itself, pinned and run at
    3 rows with a mean far from 0."""
    route = config.forward_route(4096, 8192, "sm_90a")
    assert route.constants["HELD"] == 2 and route in config.FORWARD.routes
    t = getattr(torch, getattr(hk, dtype).torch_name)
    x, w, b = rand((3, 8192), 7, t) * 3 + 40, rand((8192,), 8, t), rand((8192,), 9, t)
    with lib.pinned(config.FORWARD, route):
        y = ops.layer_norm(x, w, b, 1e-5)
    want = ln_reference(x.float().numpy(), w.float().numpy(), b.float().numpy(), 1e-5,
                        getattr(hk, dtype))
    assert err(y, want) <= forward_tolerance(want, getattr(hk, dtype))
