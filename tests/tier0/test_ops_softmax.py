"""ktile.ops.softmax on CPU tensors (the interpreter): 1-4-D, ragged rows and columns, one row,
every dtype, any dim, the split path (rows across blocks, forced at small widths through a
table of its own), out=, refusals and torch.compile(fullgraph=True)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ktile as hk  # noqa: E402
from ktile import ops  # noqa: E402
from ktile.errors import InputError  # noqa: E402
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
@pytest.mark.parametrize("shape", [(70,), (1, 64), (37, 300), (2, 3, 50), (2, 1, 17, 129)],
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
    launched = []
    real = softmax_op.OP.kernel
    monkeypatch.setattr(softmax_op.OP, "kernel",
                        lambda route, dtype: launched.append(route.kernel) or real(route, dtype))
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


def test_shipped_table_routes_wide_few_rows_to_split():
    assert config.TABLE.choose(32, 151936, "sm_90a").kernel == "softmax_partials"
    assert config.TABLE.choose(4096, 32000, "sm_90a").kernel == "softmax_rows"
    assert config.TABLE.choose(1, 300, None).kernel == "softmax_rows"


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
