"""ktile.ops' elementwise ops and gated activations on CPU tensors (the interpreter): every op
against its reference at 1-4-D shapes with ragged edges, the three dtypes, broadcasts of a row
and of a column, Python numbers on either side, out= (an input as out too), torch's dtype
promotion, refusals naming the parameter and the fix, and torch.compile(fullgraph=True)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ktile as hk  # noqa: E402
from ktile import ops  # noqa: E402
from ktile.errors import InputError  # noqa: E402
from ktile.ops.activations import reference as act_ref  # noqa: E402
from ktile.ops.elementwise import reference as ref  # noqa: E402
from tests.bad_inputs import refused  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
SHAPES = [(70,), (37, 100), (2, 3, 50), (2, 1, 17, 33), (1,), (4096,), (5, 40, 64)]
BINARY = ["add", "sub", "mul", "maximum", "minimum"]
UNARY = ["exp", "relu", "gelu", "gelu_tanh", "silu", "neg", "abs"]


def rand(shape, dtype, seed, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * scale).to(dtype)


def assert_matches(got, want, tol):
    got = got.float().numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)


def call_unary(fn, x, **kw):
    if fn == "gelu_tanh":
        return ops.gelu(x, "tanh", **kw)
    return getattr(ops, fn)(x, **kw)


# ---- results against the references -------------------------------------------------------

@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dt", DTYPES)
def test_binary_same_shape(op, dt):
    x, y = rand((37, 100), DTYPES[dt], 1), rand((37, 100), DTYPES[dt], 2)
    got = getattr(ops, op)(x, y)
    assert got.dtype == x.dtype and got.shape == x.shape
    assert_matches(got, ref.binary(op, x.float(), y.float(), getattr(hk, dt)), 0.0)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_add_every_rank(shape):
    x, y = rand(shape, torch.bfloat16, 3), rand(shape, torch.bfloat16, 4)
    got = ops.add(x, y)
    assert got.shape == x.shape
    assert torch.equal(got, x + y)


@pytest.mark.parametrize("fn", UNARY)
@pytest.mark.parametrize("dt", DTYPES)
def test_unary(fn, dt):
    x = rand((2, 21, 70), DTYPES[dt], 5)
    got = call_unary(fn, x)
    want = ref.unary(fn, x.float(), getattr(hk, dt))
    assert got.dtype == x.dtype and got.shape == x.shape
    assert_matches(got, want, ref.tolerance(fn, want, getattr(hk, dt)))


@pytest.mark.parametrize("fn", UNARY)
def test_unary_agrees_with_torch(fn):
    x = rand((5, 300), torch.float32, 6)
    torch_fn = {"gelu_tanh": lambda v: torch.nn.functional.gelu(v, approximate="tanh"),
                "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu}.get(
        fn, getattr(torch, fn, None))
    torch.testing.assert_close(call_unary(fn, x), torch_fn(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", BINARY)
def test_row_broadcast(op):
    x, b = rand((2, 3, 70), torch.bfloat16, 7), rand((70,), torch.bfloat16, 8)
    assert torch.equal(getattr(ops, op)(x, b), getattr(torch, op)(x, b))
    assert torch.equal(getattr(ops, op)(b, x), getattr(torch, op)(b, x))


@pytest.mark.parametrize("op", BINARY)
def test_column_broadcast(op):
    x, c = rand((2, 19, 70), torch.float16, 9), rand((2, 19, 1), torch.float16, 10)
    assert torch.equal(getattr(ops, op)(x, c), getattr(torch, op)(x, c))
    assert torch.equal(getattr(ops, op)(c, x), getattr(torch, op)(c, x))


def test_one_element_broadcasts_as_a_row():
    x, one = rand((3, 40), torch.float32, 11), rand((1, 1), torch.float32, 12)
    assert torch.equal(ops.mul(x, one), x * one)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("dt", DTYPES)
def test_python_number_either_side(op, dt):
    x = rand((37, 100), DTYPES[dt], 13)
    kt = getattr(hk, dt)
    assert_matches(getattr(ops, op)(x, 0.3), ref.binary(op, x.float(), 0.3, kt), 0.0)
    assert_matches(getattr(ops, op)(0.3, x), ref.binary(op, 0.3, x.float(), kt), 0.0)


def test_a_new_number_is_no_new_trace():
    x = rand((16, 64), torch.float32, 14)
    kernel = __import__("ktile.ops.elementwise.kernels", fromlist=["x"]).scalar_kernel("fp32")
    ops.add(x, 1.0)
    traces = len(kernel._traces)
    ops.add(x, 2.5)
    assert len(kernel._traces) == traces
    assert torch.equal(ops.add(x, 2.5), x + 2.5)


def test_mixed_dtypes_promote_as_torch():
    x, y = rand((8, 33), torch.bfloat16, 15), rand((8, 33), torch.float32, 16)
    got = ops.add(x, y)
    assert got.dtype == torch.float32
    assert torch.equal(got, x + y)


def test_narrow_rows_reflow_to_whole_tiles():
    x = rand((4096, 2), torch.float32, 17)
    assert torch.equal(ops.neg(x), -x)


# ---- out= ---------------------------------------------------------------------------------

def test_out_is_written_and_returned():
    x, y = rand((5, 70), torch.float32, 18), rand((5, 70), torch.float32, 19)
    out = torch.full_like(x, float("nan"))
    assert ops.sub(x, y, out=out) is out
    assert torch.equal(out, x - y)


@pytest.mark.parametrize("which", ["x", "y"])
def test_out_may_be_an_input(which):
    x, y = rand((37, 100), torch.float32, 20), rand((37, 100), torch.float32, 21)
    want = x * y
    ops.mul(x, y, out=x if which == "x" else y)
    assert torch.equal(x if which == "x" else y, want)


def test_unary_and_scalar_out():
    x = rand((3, 50), torch.bfloat16, 22)
    want_relu, want_add = torch.relu(x), x + 1.5
    out = torch.empty_like(x)
    ops.relu(x, out=out)
    assert torch.equal(out, want_relu)
    ops.add(x, 1.5, out=x)
    assert torch.equal(x, want_add)


# ---- gated activations --------------------------------------------------------------------

@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("act", ["silu", "gelu", "gelu_tanh"])
@pytest.mark.parametrize("shape", [(2 * 64,), (21, 2 * 100), (2, 3, 2 * 40), (1, 2, 5, 2 * 17)],
                         ids=lambda s: "x".join(map(str, s)))
def test_act_and_mul(dt, act, shape):
    x = rand(shape, DTYPES[dt], 23)
    kt = getattr(hk, dt)
    if act == "silu":
        got, want = ops.silu_and_mul(x), act_ref.silu_and_mul(x.float().numpy(), kt)
    else:
        approximate = "tanh" if act == "gelu_tanh" else "none"
        got = ops.gelu_and_mul(x, approximate)
        want = act_ref.gelu_and_mul(x.float().numpy(), kt, approximate)
    assert got.shape == shape[:-1] + (shape[-1] // 2,) and got.dtype == x.dtype
    assert_matches(got, want, act_ref.tolerance(want, kt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(3, 2 * 1152), (2, 2 * 8320)], ids=["72cols", "520cols"])
def test_act_and_mul_token_bands(dt, shape):
    """d a multiple of 128: every token one band of d / 16 columns (act_and_mul_tokens), a
    partial last column tile, and at 520 columns a second block of column tiles."""
    from ktile.ops.activations.config import TABLE
    x = rand(shape, DTYPES[dt], 27)
    assert TABLE.choose(shape[0], shape[-1] // 2, None).kernel == "act_and_mul_tokens"
    kt = getattr(hk, dt)
    got = ops.silu_and_mul(x)
    want = act_ref.silu_and_mul(x.float().numpy(), kt)
    assert_matches(got, want, act_ref.tolerance(want, kt))
    got = ops.gelu_and_mul(x, "tanh")
    want = act_ref.gelu_and_mul(x.float().numpy(), kt, "tanh")
    assert_matches(got, want, act_ref.tolerance(want, kt))


def test_act_and_mul_is_vllms_convention():
    x = rand((7, 2 * 48), torch.float32, 24)
    d = 48
    torch.testing.assert_close(ops.silu_and_mul(x),
                               torch.nn.functional.silu(x[:, :d]) * x[:, d:])
    torch.testing.assert_close(ops.gelu_and_mul(x, "tanh"),
                               torch.nn.functional.gelu(x[:, :d], approximate="tanh") * x[:, d:])


def test_act_and_mul_out():
    x = rand((9, 2 * 30), torch.bfloat16, 25)
    out = torch.empty((9, 30), dtype=torch.bfloat16)
    assert ops.silu_and_mul(x, out=out) is out
    assert torch.equal(out, ops.silu_and_mul(x))


# ---- refusals -----------------------------------------------------------------------------

X = rand((3, 5, 70), torch.bfloat16, 26)

REFUSALS = {
    "uncovered broadcast": (lambda: ops.add(X, rand((5, 1), torch.bfloat16, 1)),
                            ["'y'", "broadcast", "expand"]),
    "both broadcast": (lambda: ops.add(rand((4, 1), torch.float32, 1),
                                       rand((1, 6), torch.float32, 2)),
                       ["broadcast each other", "expand"]),
    "shapes that never broadcast": (lambda: ops.mul(X, rand((3, 7), torch.bfloat16, 1)),
                                    ["do not broadcast", "x", "y"]),
    "a string operand": (lambda: ops.add(X, "1"), ["'y'", "torch.Tensor", "number"]),
    "two numbers": (lambda: ops.add(1.0, 2.0), ["one must be a tensor"]),
    "a bool operand": (lambda: ops.mul(X, True), ["'y'", "torch.Tensor"]),
    "an integer tensor": (lambda: ops.relu(torch.ones(3, 4, dtype=torch.int32)),
                          ["'x'", "int32", "convert"]),
    "float64": (lambda: ops.exp(torch.ones(3, 4, dtype=torch.float64)), ["'x'", "float64"]),
    "a 5-D tensor": (lambda: ops.neg(torch.ones(1, 1, 1, 2, 3)), ["'x'", "5 dimensions"]),
    "a 0-D tensor": (lambda: ops.add(torch.tensor(1.0), torch.tensor(2.0)), ["'x'", "0 dimen"]),
    "an empty tensor": (lambda: ops.abs(torch.ones(0, 4)), ["'x'", "empty"]),
    "a number beyond float32": (lambda: ops.add(X, 1e39), ["'y'", "float32", "3.4e38"]),
    "gelu's approximate": (lambda: ops.gelu(X, "fast"), ["approximate", "'tanh'"]),
    "out of another shape": (lambda: ops.add(X, X, out=torch.empty(3, 70, dtype=X.dtype)),
                             ["'out'", "shape", "torch.empty"]),
    "out of another dtype": (lambda: ops.add(X, X, out=torch.empty_like(X, dtype=torch.float32)),
                             ["'out'", "float32", "bfloat16"]),
    "out not a tensor": (lambda: ops.relu(X, out=[1]), ["'out'", "torch.Tensor"]),
    "out not contiguous": (lambda: ops.relu(X, out=torch.empty(3, 70, 5, dtype=X.dtype)
                                            .transpose(1, 2)),
                           ["'out'", "contiguous"]),
    "act_and_mul of odd width": (lambda: ops.silu_and_mul(rand((4, 33), torch.float32, 1)),
                                 ["'x'", "33 columns", "2 * d"]),
    "act_and_mul out of the input's shape": (
        lambda: ops.silu_and_mul(X, out=torch.empty_like(X)), ["'out'", "(3, 5, 35)"]),
    "act_and_mul out meeting x": (lambda: ops.silu_and_mul(X, out=X[..., :35]),
                                  ["'out'"]),
    "gelu_and_mul's approximate": (lambda: ops.gelu_and_mul(X, "erf"), ["approximate"]),
    "devices differ": (lambda: ops.add(X, torch.ones(3, 5, 70, dtype=X.dtype, device="meta")),
                       ["different devices"]),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_refused(case):
    action, words = REFUSALS[case]
    refused(action, *words, kind=InputError)


# ---- torch.library and torch.compile ------------------------------------------------------

def test_torch_compile_fullgraph():
    def block(x, b, gate_up):
        return ops.silu(ops.add(x, b)) * 2 + ops.silu_and_mul(gate_up)

    compiled = torch.compile(block, fullgraph=True, backend="aot_eager")
    x, b = rand((4, 64), torch.float32, 27), rand((64,), torch.float32, 28)
    gate_up = rand((4, 128), torch.float32, 29)
    want = torch.nn.functional.silu(x + b) * 2 + (torch.nn.functional.silu(gate_up[:, :64])
                                                  * gate_up[:, 64:])
    torch.testing.assert_close(compiled(x, b, gate_up), want)


def test_ops_are_registered_with_fake_implementations():
    x = torch.empty((3, 8, 70), dtype=torch.bfloat16, device="meta")
    assert torch.ops.ktile.elementwise_binary(x, x[0, 0], "add").shape == (3, 8, 70)
    assert torch.ops.ktile.elementwise_scalar(x, 2.0, "mul", False).dtype == torch.bfloat16
    assert torch.ops.ktile.act_and_mul(x, "silu").shape == (3, 8, 35)


def test_library_lists_the_kernels():
    names = {op.name for op in ops.all_ops()}
    assert {"elementwise", "act_and_mul", "softmax"} <= names
    shipped = {k.kernel.name for k in ops.all_kernels(("sm_90a",))}
    assert {"ew_binary_bf16", "ew_scalar_fp16", "ew_unary_fp32", "act_and_mul_bf16"} <= shipped
