"""layer_norm_backward's one-launch route for a few rows (ktile/ops/layernorm/backward_direct.py)
on the interpreter: the shipped table takes it up to DIRECT_ROWS rows on sm_90a and the two-pass
row-tile route above; pinned, it matches the reference in fp32 and bf16 at 1 to DIRECT_ROWS
rows, a width whose last tile is cut (288 columns: 18 view columns of 32) and a model width;
it agrees with the two-pass route; the same result every run."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ktile import ops  # noqa: E402
from ktile.ops import _library as lib  # noqa: E402
from ktile.ops.layernorm import backward_direct, config  # noqa: E402
from ktile.ops.layernorm.reference import layernorm_backward, tolerance  # noqa: E402


def inputs(rows, cols, dtype, seed=7):
    g = torch.Generator().manual_seed(seed)
    x, dy = (torch.randn((rows, cols), generator=g).to(dtype) for _ in range(2))
    w = torch.randn((cols,), generator=g).to(dtype)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x.float(), (cols,), w.float(), None, 1e-5)
    return dy, x, w, mean, rstd


def test_shipped_routes():
    for cols in (1024, 4096, 8192):
        for rows in range(1, backward_direct.DIRECT_ROWS + 1):
            route = config.BACKWARD.choose(rows, cols, "sm_90a")
            assert route.kernel == "layer_norm_rows_backward_direct", (rows, cols)
            assert route.constants["C"] * route.constants["WARPS"] * 16 >= cols
        more = config.BACKWARD.choose(backward_direct.DIRECT_ROWS + 1, cols, "sm_90a")
        assert more.kernel == "layer_norm_rows_backward"
    assert config.BACKWARD.choose(1, 4096, "gfx950").kernel == "layer_norm_dx"
    assert config.BACKWARD.choose(1, 4100, "sm_90a").kernel == "layer_norm_dx"


@pytest.mark.parametrize("rows,cols,dtype", [(1, 288, torch.float32), (4, 288, torch.float32),
                                             (3, 1024, torch.bfloat16)], ids=str)
def test_direct_matches_reference(rows, cols, dtype):
    dy, x, w, mean, rstd = inputs(rows, cols, dtype)
    route = config.BACKWARD.choose(rows, 1024, "sm_90a")
    with lib.pinned(config.BACKWARD, route):
        got = ops.layer_norm_backward(dy, x, w, mean, rstd)
        again = ops.layer_norm_backward(dy, x, w, mean, rstd)
    want = layernorm_backward(*(t.float().numpy() for t in (x, dy, w)),
                              mean.reshape(-1).numpy(), rstd.reshape(-1).numpy())
    slack = 2.0 ** -7 if dtype == torch.bfloat16 else 0.0
    for g, a, e in zip(got, again, want):
        assert g.dtype == dtype and torch.equal(g, a)
        bound = tolerance(*want) + slack * float(abs(e).max())
        assert float(abs(g.float().numpy() - e).max()) <= bound


def test_direct_agrees_with_two_passes():
    dy, x, w, mean, rstd = inputs(3, 512, torch.float32, seed=8)
    direct = config.BACKWARD.choose(3, 512, "sm_90a")
    two = config.BACKWARD.choose(backward_direct.DIRECT_ROWS + 1, 512, "sm_90a")
    results = []
    for route in (direct, two):
        with lib.pinned(config.BACKWARD, route):
            results.append(ops.layer_norm_backward(dy, x, w, mean, rstd))
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-5)


def test_fp32_past_the_direct_width_takes_two_passes(monkeypatch):
    """In fp32 the one-launch form spills on sm_90a at 8192 columns (the H200's tier 3): wider
    fp32 rows launch the two-pass kernels, bf16 keeps the one launch."""
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")
    launched = []
    real = lib.run

    def run(kernel, *args, **constants):
        launched.append(kernel.name)
        return real(kernel, *args, **constants)
    monkeypatch.setattr(lib, "run", run)
    cols = config.BACKWARD_DIRECT_FP32_COLS + 16
    dy, x, w, mean, rstd = inputs(2, cols, torch.float32)
    dx, dw, db = ops.layer_norm_backward(dy, x, w, mean, rstd)
    assert "layer_norm_rows_backward_direct" not in launched and launched
    want = layernorm_backward(*(t.float().numpy() for t in (x, dy, w)),
                              mean.reshape(-1).numpy(), rstd.reshape(-1).numpy())
    for got, exact in zip((dx, dw, db), want):
        assert lib.max_error(got, exact) <= tolerance(*want)
    launched.clear()
    ops.layer_norm_backward(*inputs(2, cols, torch.bfloat16))
    assert launched == ["layer_norm_rows_backward_direct"]
