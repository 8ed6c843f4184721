"""Softmax's chunk kernels (ktile/ops/softmax/chunks.py: x viewed as [rows, cols // C, C], each
warp tile one contiguous run of its row) on CPU tensors (the interpreter): every chunk route of
the shipped table at its sample shape (the last tile of a row cut by whole view rows), the split
pair at split counts that do not divide the row's tile groups, -inf stretches (masked logits)
and all-(-inf) rows, agreement with the held kernel, the split count, the shipped routes, and
refusals (a width that C does not divide, the second phase pinned alone)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ktile as hk  # noqa: E402
from ktile import ops  # noqa: E402
from ktile.errors import InputError  # noqa: E402
from ktile.ops import _library as lib  # noqa: E402
from ktile.ops.softmax import chunks, config, op as softmax_op  # noqa: E402
from ktile.ops.softmax.reference import softmax as reference, tolerance  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
CHUNK = list({(r.kernel, tuple(r.constants.items())): r for r in config.ROUTES
              if r.kernel in ("softmax_chunk_stats", "softmax_chunk_loop")}.values())


def rand(shape, dtype, seed, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * scale).to(dtype)


def check(got, x):
    kt = getattr(hk, {v: k for k, v in DTYPES.items()}[x.dtype])
    want = reference(x.float().numpy(), kt)
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_allclose(got.float().numpy(), want, rtol=0, atol=tolerance(kt))


def route_of(kernel: str) -> lib.Route:
    return next(r for r in config.ROUTES if r.kernel == kernel)


def launched_kernels(monkeypatch) -> list:
    launched = []
    real = softmax_op.OP.kernel
    monkeypatch.setattr(softmax_op.OP, "kernel",
                        lambda route, dtype: launched.append(route.kernel) or real(route, dtype))
    return launched


@pytest.mark.parametrize("route", CHUNK, ids=lambda r: f"{r.kernel}-{r.max_rows}")
@pytest.mark.parametrize("dt", ["fp32", "bf16"])
def test_every_chunk_route_at_its_sample(route, dt):
    assert route.sample[1] % route.constants["C"] == 0
    assert (route.sample[1] // route.constants["C"]) % 16, "the sample's last tile is cut"
    with lib.pinned(config.TABLE, route):
        err, tol = softmax_op.OP.check(*route.sample, dt)
    assert err <= tol, (route, err, tol)


@pytest.mark.parametrize("dt", ["fp32", "bf16"])     # the next tile loaded before / after
@pytest.mark.parametrize("splits", [1, 2, 3, config.MAX_SPLITS])
def test_chunk_split_at_any_count(monkeypatch, splits, dt):
    """3 x 2784 at C 32: 87 view rows, 6 tiles (the last cut to 7 rows), 2 groups of 4 tiles:
    at 3 and MAX_SPLITS splits some blocks have no tile (their partial is the lowest float
    and 0, folded away)."""
    monkeypatch.setattr(config, "chunk_split_count", lambda *args: splits)
    launched = launched_kernels(monkeypatch)
    x = rand((3, 2784), DTYPES[dt], 21)
    with lib.pinned(config.TABLE, route_of("softmax_chunk_stats")):
        check(ops.softmax(x), x)
    assert launched == ["softmax_chunk_stats", "softmax_chunk_write"]


@pytest.mark.parametrize("kernel", ["softmax_chunk_stats", "softmax_chunk_loop"])
def test_chunk_paths_agree_with_held(kernel):
    """exp2 of the log2 e-scaled difference (chunks.py) against the held kernel's exp: within
    1e-6 at logits of scale 20."""
    x = rand((4, 64 * 20), torch.float32, 22, scale=20.0)
    whole = ops.softmax(x)
    with lib.pinned(config.TABLE, route_of(kernel)):
        other = ops.softmax(x)
    torch.testing.assert_close(other, whole, rtol=0, atol=1e-6)
    torch.testing.assert_close(other.sum(-1), torch.ones(4), rtol=0, atol=1e-5)


@pytest.mark.parametrize("kernel", ["softmax_chunk_stats", "softmax_chunk_loop"])
def test_chunk_masked_logits(monkeypatch, kernel):
    """-inf stretches (a warp's whole first tiles, a block's whole share at 4 splits) give 0
    there; a row that is -inf everywhere gives NaN, as torch does."""
    monkeypatch.setattr(config, "chunk_split_count", lambda *args: 4)
    x = rand((4, 64 * 32), torch.float32, 23)
    x[0, :1500] = float("-inf")
    x[1, 5::3] = float("-inf")
    x[2, 512:1536] = float("-inf")
    x[3] = float("-inf")
    with lib.pinned(config.TABLE, route_of(kernel)):
        got = ops.softmax(x)
    want = torch.softmax(x, -1)
    assert torch.isnan(got[3]).all() and torch.isnan(want[3]).all()
    torch.testing.assert_close(got[:3], want[:3], rtol=0, atol=1e-6)


def test_chunk_split_count():
    # 151936 columns at C 32: 4748 view rows, 297 tiles, 75 groups of 4
    assert config.chunk_split_count(1, 151936, 32, 4, 1056) == config.MAX_SPLITS
    assert config.chunk_split_count(32, 151936, 32, 4, 1056) == 33
    assert config.chunk_split_count(1, 32 * 16 * 4 * 2, 32, 4, 1056) == 2   # one per group
    assert config.chunk_split_count(1000, 151936, 32, 4, 1056) == 2
    assert config.chunk_split_count(4096, 151936, 32, 4, 1056) == 1


def test_shipped_chunk_routes():
    def kernel(rows, cols):
        return config.TABLE.choose(rows, cols, "sm_90a").kernel
    for rows, cols in [(1, 32000), (32, 32000), (1, 128256), (32, 151936), (128, 151936)]:
        assert kernel(rows, cols) == "softmax_chunk_stats", (rows, cols)
    assert kernel(128, 32000) == "softmax_held" and kernel(32, 16384) == "softmax_held"
    assert kernel(4096, 151936) == "softmax_chunk_loop"
    assert kernel(32, 151920) == "softmax_stats"      # a multiple of 16, not of 32
    assert kernel(4096, 16 * 9000 + 16) == "softmax_loop"
    for route in CHUNK:
        assert route.cols_multiple == route.constants["C"]
    assert set(chunks.KERNELS) <= set(softmax_op.OP.kernels)


def test_chunk_refusals():
    x = rand((2, 16 * 70), torch.float32, 24)             # 1120: not a multiple of 64
    with lib.pinned(config.TABLE, route_of("softmax_chunk_loop")):
        with pytest.raises(InputError, match="multiple of C"):
            ops.softmax(x)
    with lib.pinned(config.TABLE, route_of("softmax_chunk_write")):
        with pytest.raises(InputError, match="second phase"):
            ops.softmax(rand((2, 64 * 20), torch.float32, 25))
