"""ktile.ops.softmax on CPU tensors (the interpreter): 1-4-D, ragged rows and columns, one row,
every dtype, any dim; every route of the shipped table at its sample shape; the row-tile
kernels (rows of a multiple of 16 columns) held, looped and split across blocks (split counts
forced), -inf stretches (masked logits); the 16-row kernels for other widths and their split
path (forced at small widths through a table of their own); out=, refusals and
torch.compile(fullgraph=True)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ktile as hk  # noqa: E402
from ktile import ops  # noqa: E402
from ktile.errors import InputError  # noqa: E402
from ktile.ops import _library as lib  # noqa: E402
from ktile.ops._library import Route, RoutingTable  # noqa: E402
from ktile.ops.softmax import config, op as softmax_op  # noqa: E402
from ktile.ops.softmax.reference import softmax as reference, tolerance  # noqa: E402
from tests.bad_inputs import refused  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def rand(shape, dtype, seed, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * scale).to(dtype)


def check(got, x, dim=-1):
    kt = getattr(hk, {v: k for k, v in DTYPES.items()}[x.dtype])
    want = np.moveaxis(reference(np.moveaxis(x.float().numpy(), dim, -1), kt), -1, dim)
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_allclose(got.float().numpy(), want, rtol=0, atol=tolerance(kt))


@pytest.fixture
def split_table(monkeypatch):
    """Route every call through the two-phase split path at BLOCK columns per block."""
    def use(block=128, warps=2):
        constants = {"BLOCK": block, "COLS": 64, "WARPS": warps}
        monkeypatch.setattr(config, "TABLE", RoutingTable(
            [Route("softmax_partials", constants), Route("softmax_normalize", constants)]))
    return use


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(70,), (1, 64), (37, 300), (2, 3, 50), (2, 1, 17, 129),
                                   (96,), (5, 1040), (2, 3, 4, 272)],
                         ids=lambda s: "x".join(map(str, s)))
def test_rows(dt, shape):
    x = rand(shape, DTYPES[dt], 1)
    check(ops.softmax(x), x)


@pytest.mark.parametrize("dim", [0, 1, -2])
def test_other_dims(dim):
    x = rand((4, 6, 33), torch.float32, 2)
    check(ops.softmax(x, dim), x, dim)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1000), (3, 129), (19, 700), (2, 2, 5, 300)],
                         ids=lambda s: "x".join(map(str, s)))
def test_split_across_blocks(split_table, dt, shape):
    split_table()
    x = rand(shape, DTYPES[dt], 3)
    check(ops.softmax(x), x)


def test_split_is_the_path_taken(split_table, monkeypatch):
    split_table(block=64)
    launched = launched_kernels(monkeypatch)
    x = rand((2, 200), torch.float32, 4)
    check(ops.softmax(x), x)
    assert launched == ["softmax_partials", "softmax_normalize"]


def test_split_agrees_with_rows_bit_for_bit_in_fp32_max(split_table):
    x = rand((5, 500), torch.float32, 5, scale=20.0)
    whole = ops.softmax(x)
    split_table(block=128)
    split = ops.softmax(x)
    torch.testing.assert_close(split, whole, rtol=0, atol=1e-6)
    torch.testing.assert_close(split.sum(-1), torch.ones(5), rtol=0, atol=1e-5)


ROW_TILE = [r for r in config.ROUTES if r.kernel in ("softmax_held", "softmax_loop",
                                                       "softmax_stats")]


@pytest.mark.parametrize("route", ROW_TILE, ids=lambda r: f"{r.kernel}-{r.max_cols}")
@pytest.mark.parametrize("dt", ["fp32", "bf16"])
def test_every_row_tile_route_at_its_sample(route, dt):
    with lib.pinned(config.TABLE, route):
        err, tol = softmax_op.OP.check(*route.sample, dt)
    assert err <= tol, (route, err, tol)


def launched_kernels(monkeypatch) -> list:
    launched = []
    real = softmax_op.OP.kernel
    monkeypatch.setattr(softmax_op.OP, "kernel",
                        lambda route, dtype: launched.append(route.kernel) or real(route, dtype))
    return launched


@pytest.mark.parametrize("dt", ["fp32", "bf16"])     # the next tile loaded after / before
@pytest.mark.parametrize("splits", [1, 2, 5, 7, config.MAX_SPLITS])
def test_row_tile_split_at_any_count(monkeypatch, splits, dt):
    """Splits that do not divide the row's tiles: interleaved, some blocks take fewer (or
    none); at MAX_SPLITS phase 2's one vector load of the partials is full."""
    monkeypatch.setattr(config, "split_count", lambda *args: splits)
    launched = launched_kernels(monkeypatch)
    x = rand((3, 16 * 350), DTYPES[dt], 11)   # 6 tiles of 64 view columns, the last ragged
    with lib.pinned(config.TABLE, route_of("softmax_stats")):
        check(ops.softmax(x), x)
    assert launched == ["softmax_stats", "softmax_write"]


def route_of(kernel: str, cols: int = 0) -> Route:
    """The first route of the shipped table for `kernel` that holds rows of `cols` columns."""
    return next(r for r in config.ROUTES
                if r.kernel == kernel and (r.max_cols is None or r.max_cols >= cols))


@pytest.mark.parametrize("kernel", ["softmax_stats", "softmax_loop"])
def test_row_tile_paths_agree_with_held(kernel):
    x = rand((4, 16 * 60), torch.float32, 12, scale=20.0)
    whole = ops.softmax(x)
    with lib.pinned(config.TABLE, route_of(kernel)):
        other = ops.softmax(x)
    torch.testing.assert_close(other, whole, rtol=0, atol=1e-6)
    torch.testing.assert_close(other.sum(-1), torch.ones(4), rtol=0, atol=1e-5)


@pytest.mark.parametrize("kernel", ["softmax_held", "softmax_stats", "softmax_loop"])
def test_masked_logits(kernel):
    """-inf stretches (whole 1/16 segments of a row, and whole 16 x 64 tiles of its view: a
    warp's first tiles, so its running max stays at its start) give 0 there; a row that is
    -inf everywhere gives NaN, as torch does."""
    x = rand((4, 16 * 256), torch.float32, 13)
    x[0, :2800] = float("-inf")
    x[1, 5::3] = float("-inf")
    x[2].view(16, -1)[:, :192] = float("-inf")
    x[3] = float("-inf")
    with lib.pinned(config.TABLE, route_of(kernel, x.shape[-1])):
        got = ops.softmax(x)
    want = torch.softmax(x, -1)
    assert torch.isnan(got[3]).all() and torch.isnan(want[3]).all()
    torch.testing.assert_close(got[:3], want[:3], rtol=0, atol=1e-6)


def test_split_count():
    assert config.split_count(32, 151936, 32, 528) == 17     # 32 rows fill 528 blocks
    assert config.split_count(1, 151936, 32, 528) == config.MAX_SPLITS
    assert config.split_count(1, 16 * 40, 32, 528) == 2       # one per tile at most
    assert config.split_count(1000, 16 * 4000, 32, 528) == 1


def test_shipped_table_routes():
    def kernel(rows, cols, target="sm_90a"):
        return config.TABLE.choose(rows, cols, target).kernel
    assert kernel(32, 151936) == kernel(1, 128256) == "softmax_chunk_stats"
    assert kernel(32, 151920) == "softmax_stats"            # a multiple of 16, not of 32
    assert kernel(4096, 32000) == "softmax_held" and kernel(1, 16384) == "softmax_held"
    assert kernel(4096, 151936) == "softmax_chunk_loop" and kernel(4096, 151920) == "softmax_loop"
    assert kernel(4096, 4096) == "softmax_held" and kernel(1, 64, None) == "softmax_held"
    few = config.TABLE.choose(config.FEW_ROWS, 4096, "sm_90a").constants
    many = config.TABLE.choose(config.FEW_ROWS + 1, 4096, "sm_90a").constants
    assert few["WARPS"] > many["WARPS"] and few["C"] < many["C"]     # latency: more lanes
    assert kernel(32, 151930) == "softmax_partials" and kernel(1, 300, None) == "softmax_rows"
    assert all(r.cols_multiple == config.TILE for r in ROW_TILE)


def test_extreme_values():
    x = torch.tensor([[0.0, -1e30, 1e30, 5.0] * 20, [-100.0] * 80])
    check(ops.softmax(x), x)


def test_out():
    x = rand((3, 5, 70), torch.bfloat16, 6)
    out = torch.full_like(x, float("nan"))
    assert ops.softmax(x, out=out) is out
    check(out, x)
    out2 = torch.empty_like(x)
    ops.softmax(x, 0, out=out2)
    check(out2, x, 0)


def test_matches_torch():
    x = rand((6, 1000), torch.float32, 7)
    torch.testing.assert_close(ops.softmax(x), torch.softmax(x, -1), rtol=1e-5, atol=1e-6)


X = rand((3, 70), torch.float32, 8)

REFUSALS = {
    "dim out of range": (lambda: ops.softmax(X, 2), ["'dim'", "[-2, 1]"]),
    "dim not an int": (lambda: ops.softmax(X, 1.0), ["'dim'", "int"]),
    "an integer tensor": (lambda: ops.softmax(torch.ones(3, 4, dtype=torch.int64)),
                          ["'x'", "int64"]),
    "a 5-D tensor": (lambda: ops.softmax(torch.ones(1, 1, 1, 2, 3)), ["'x'", "5 dimensions"]),
    "an empty tensor": (lambda: ops.softmax(torch.ones(0, 4)), ["'x'", "empty"]),
    "not a tensor": (lambda: ops.softmax([[1.0, 2.0]]), ["'x'", "torch.Tensor"]),
    "out of another dtype": (lambda: ops.softmax(X, out=torch.empty_like(X).half()),
                             ["'out'", "float16"]),
    "out of another shape": (lambda: ops.softmax(X, out=torch.empty(70, 3)), ["'out'", "shape"]),
    "out is x": (lambda: ops.softmax(X, out=X), ["'out'", "memory"]),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_refused(case):
    action, words = REFUSALS[case]
    refused(action, *words, kind=InputError)


def test_torch_compile_fullgraph():
    compiled = torch.compile(lambda x: softmax_op.softmax(x * 2, -1) + 1, fullgraph=True,
                             backend="aot_eager")
    x = rand((4, 100), torch.float32, 9)
    torch.testing.assert_close(compiled(x), torch.softmax(x * 2, -1) + 1)


def test_torch_compile_fullgraph_through_ops_name():
    compiled = torch.compile(lambda x: ops.softmax(x, -1), fullgraph=True, backend="aot_eager")
    x = rand((4, 100), torch.float32, 10)
    torch.testing.assert_close(compiled(x), torch.softmax(x, -1))


def test_fake_implementation():
    x = torch.empty((2, 7, 151936), dtype=torch.bfloat16, device="meta")
    got = torch.ops.ktile.softmax(x, 2)
    assert got.shape == x.shape and got.dtype == x.dtype


def test_sweep_times_every_shipped_route_once():
    """The GPU sweep (ktile/ops/softmax/sweep.py) times each shipped row-tile route, the few-row
    held routes included, and each EXPLORE constant once; --shape takes ROWSxCOLS only."""
    import argparse
    from ktile.ops.softmax import sweep

    def key(route):
        return route.kernel, tuple(sorted(route.constants.items()))
    timed = [key(r) for r in sweep.candidates(explore=True)]
    assert len(timed) == len(set(timed))
    assert {key(r) for r in ROW_TILE} <= set(timed)
    assert {key(r) for r in sweep.EXPLORE} <= set(timed)
    assert sweep.parse_shape("32x4096") == (32, 4096)
    for bad in ("32", "0x4096", "ax4096"):
        with pytest.raises(argparse.ArgumentTypeError, match="ROWSxCOLS"):
            sweep.parse_shape(bad)
