"""The norm ops on CPU tensors (the interpreter): rms_norm, fused_add_rms_norm(_), layer_norm
and layer_norm_backward against their references at small ragged shapes of 1 to 4 dimensions
(1 row, and model widths at 1-3 rows: rms_norm 2880 / 5120 / 14336 through the row-tile
kernel, widths not a multiple of 16 through the loop; the fused form 4000 / 4096 / 5120 and
1000 through its fallback; layer_norm 2000: docs/ops.md), in bf16, fp16 and fp32; out=; the
in-place engine form (in place, no copy, for multiples of 16); refusals naming the parameter;
torch.compile(fullgraph=True) and fake tensors."""
import pytest

import ktile as hk
import ktile.ops as ops
from ktile.errors import InputError
from ktile.ops.fused_add_rmsnorm.reference import fused_add_rms_norm as fused_reference
from ktile.ops.layernorm.reference import (forward_tolerance, layer_norm as ln_reference,
                                           layernorm_backward, tolerance as bwd_tolerance)
from ktile.ops.rmsnorm.reference import rms_norm as rms_reference, tolerance

from bad_inputs import refused

torch = pytest.importorskip("torch")

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
SHAPES = [(37,), (1, 300), (3, 1000), (2, 3, 130), (1, 2, 2, 64), (2, 2880), (1, 5120),
          (3, 5120), (1, 14336), (2, 14336)]
SMALL = [(37,), (3, 1000), (2, 3, 130), (1, 2, 2, 64)]


def rand(shape, seed, dtype=torch.bfloat16):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def np32(t):
    return t.float().numpy()


def err(got, want):
    return float(abs(np32(got) - want).max())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_rms_norm_matches_reference(shape, dtype):
    if dtype != "bf16" and shape not in SMALL:
        pytest.skip("the wide rows once, in bf16")
    x, w = rand(shape, 1, DTYPES[dtype]), rand(shape[-1:], 2, DTYPES[dtype])
    y = ops.rms_norm(x, w, 1e-5)
    want = rms_reference(np32(x), np32(w), 1e-5, getattr(hk, dtype))
    assert y.shape == x.shape and y.dtype == x.dtype
    assert err(y, want) <= tolerance(want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 64), (3, 1000), (2, 2, 4000), (1, 4096), (2, 5120)],
                         ids=str)
def test_fused_add_rms_norm_matches_reference(shape, dtype):
    if dtype != "bf16" and shape[-1] > 1000:
        pytest.skip("the wide rows once, in bf16")
    t = DTYPES[dtype]
    x, r, w = rand(shape, 3, t), rand(shape, 4, t), rand(shape[-1:], 5, t)
    out, residual_out = ops.fused_add_rms_norm(x, r, w, 1e-6)
    want_o, want_h = fused_reference(np32(x), np32(r), np32(w), 1e-6, getattr(hk, dtype))
    assert err(out, want_o) <= tolerance(want_o)
    assert err(residual_out, want_h) == 0.0


@pytest.mark.parametrize("cols", [300, 1024], ids=["fallback", "tiles"])
def test_fused_add_rms_norm_in_place_is_the_engine_form(cols):
    x, r, w = rand((3, cols), 6), rand((3, cols), 7), rand((cols,), 8)
    want_o, want_h = ops.fused_add_rms_norm(x, r, w, 1e-6)
    assert ops.fused_add_rms_norm_(x, r, w, 1e-6) is None
    assert torch.equal(x, want_o) and torch.equal(r, want_h)


def test_fused_in_place_runs_the_tile_kernel_on_x_and_residual(monkeypatch):
    """The declared in-place kernel gets x as o and residual as h: no scratch outputs."""
    from ktile.ops import _library as lib
    calls, run = [], lib.run
    monkeypatch.setattr(lib, "run", lambda k, *args, **c: (calls.append(args), run(k, *args, **c)))
    x, r, w = rand((2, 2, 512), 9), rand((2, 2, 512), 10), rand((512,), 11)
    want_o, want_h = fused_reference(np32(x), np32(r), np32(w), 1e-6, hk.bf16)
    ops.fused_add_rms_norm_(x, r, w, 1e-6)
    (xs, rs, _, o, h, _), = calls     # one launch, on x and residual themselves
    assert o.data_ptr() == xs.data_ptr() == x.data_ptr()
    assert h.data_ptr() == rs.data_ptr() == r.data_ptr()
    assert err(x, want_o) <= tolerance(want_o) and err(r, want_h) == 0.0


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_row_tile_kernels_in_every_dtype_at_a_ragged_width(dtype):
    """2080 columns: 130 view columns on 3 warps of 16 x 64 (fp32: pairs of 16 x 32), the
    last share ragged."""
    t = DTYPES[dtype]
    x, r, w = rand((2, 2080), 21, t), rand((2, 2080), 22, t), rand((2080,), 23, t)
    want = rms_reference(np32(x), np32(w), 1e-5, getattr(hk, dtype))
    assert err(ops.rms_norm(x, w, 1e-5), want) <= tolerance(want)
    out, residual_out = ops.fused_add_rms_norm(x, r, w, 1e-6)
    want_o, want_h = fused_reference(np32(x), np32(r), np32(w), 1e-6, getattr(hk, dtype))
    assert err(out, want_o) <= tolerance(want_o) and err(residual_out, want_h) == 0.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["rms_norm", "fused_add_rms_norm"])
def test_row_tile_kernels_hold_flat_tiles_and_load_before_reducing(op, dtype):
    """Every register tile of the row-tile kernels is flat (memory order: docs/language.md);
    x (and residual) are loaded before the block's sum, the weight too in 16-bit dtypes (in
    fp32 after it, so the tiles held at once stay in the budget)."""
    from ktile.ops import _library as lib
    from ktile.ir.types import RegTileType
    kernel = next(k for k in lib.all_kernels() if k.op == op and k.dtype == dtype
                  and k.target == "sm_90a" and k.route.kernel.endswith("_tiles")
                  and k.constants["WARPS"] == 4)
    ops_ = list(kernel.kernel.trace("sm_90a", **kernel.constants).module.walk())
    tiles = [r.type for o in ops_ for r in o.results if isinstance(r.type, RegTileType)]
    assert tiles and {t.layout.data for t in tiles} == {"flat"}
    names = [o.name for o in ops_]
    first_sum = names.index("kt.block_reduce")
    loads = [i for i, n in enumerate(names) if n == "kt.load"]
    per_operand = len(loads) // (2 if op == "rms_norm" else 3)     # x, (residual,) w
    early = sum(i < first_sum for i in loads)
    if dtype == "fp32":
        assert early == len(loads) - per_operand    # the weight after the sum
    else:
        assert early == len(loads)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(37,), (3, 1000), (2, 3, 130), (1, 2, 2, 64), (2, 2000)],
                         ids=str)
def test_layer_norm_matches_reference(shape, dtype):
    t = DTYPES[dtype]
    x, w, b = rand(shape, 9, t) + 2, rand(shape[-1:], 10, t), rand(shape[-1:], 11, t)
    y = ops.layer_norm(x, w, b, 1e-5)
    want = ln_reference(np32(x), np32(w), np32(b), 1e-5, getattr(hk, dtype))
    assert err(y, want) <= forward_tolerance(want, getattr(hk, dtype))


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("shape", [(1, 64), (21, 300), (2, 17, 130)], ids=str)
def test_layer_norm_backward_matches_reference(shape, dtype):
    t = DTYPES[dtype]
    x, dy, w, b = rand(shape, 12, t), rand(shape, 13, t), rand(shape[-1:], 14, t), \
        rand(shape[-1:], 15, t)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x.float(), shape[-1:], w.float(),
                                                     b.float(), 1e-5)
    dx, dw, db = ops.layer_norm_backward(dy, x, w, mean, rstd)
    cols = shape[-1]
    want = layernorm_backward(np32(x).reshape(-1, cols), np32(dy).reshape(-1, cols), np32(w),
                              mean.reshape(-1).numpy(), rstd.reshape(-1).numpy())
    slack = 2.0 ** -7 if dtype == "bf16" else 0.0   # one rounding of each result
    for got, exp in zip((dx.reshape(-1, cols), dw, db), want):
        assert err(got, exp) <= bwd_tolerance(*want) + slack * float(abs(exp).max())


# ---- out= --------------------------------------------------------------------------------

def test_out_is_written_and_returned():
    x, w = rand((3, 300), 1), rand((300,), 2)
    out = torch.full_like(x, float("nan"))
    assert ops.rms_norm(x, w, 1e-6, out=out) is out
    assert torch.equal(out, ops.rms_norm(x, w, 1e-6))
    b = rand((300,), 3)
    ln = torch.empty_like(x)
    assert ops.layer_norm(x, w, b, out=ln) is ln and torch.equal(ln, ops.layer_norm(x, w, b))


def test_fused_out_pair():
    x, r, w = rand((2, 300), 1), rand((2, 300), 2), rand((300,), 3)
    o, h = torch.empty_like(x), torch.empty_like(x)
    got = ops.fused_add_rms_norm(x, r, w, out=o, residual_out=h)
    assert got[0] is o and got[1] is h
    want = ops.fused_add_rms_norm(x, r, w)
    assert torch.equal(o, want[0]) and torch.equal(h, want[1])


def test_eps_is_a_runtime_value():
    x, w = rand((2, 64), 1), rand((64,), 2)
    small, large = ops.rms_norm(x, w, 1e-6), ops.rms_norm(x, w, 100.0)
    want = rms_reference(np32(x), np32(w), 100.0, hk.bf16)
    assert not torch.equal(small, large) and err(large, want) <= tolerance(want)


# ---- refusals ----------------------------------------------------------------------------

X, W = rand((3, 64), 1), rand((64,), 2)
REFUSALS = {
    "x-float64": (lambda: ops.rms_norm(X.double(), W), ["'x'", "float64", "bfloat16"]),
    "x-int": (lambda: ops.rms_norm(X.int(), W), ["'x'", "int32"]),
    "x-5d": (lambda: ops.rms_norm(X.reshape(1, 1, 1, 3, 64), W), ["'x'", "5 dimensions"]),
    "x-0d": (lambda: ops.rms_norm(torch.tensor(1.0, dtype=torch.bfloat16), W), ["'x'", "0"]),
    "x-empty": (lambda: ops.rms_norm(X[:0], W), ["'x'", "empty"]),
    "x-not-contiguous": (lambda: ops.rms_norm(rand((64, 6), 3).t(), rand((3,), 4)),
                         ["'x'", "contiguous", ".contiguous()"]),
    "x-numpy": (lambda: ops.rms_norm(X.float().numpy(), W), ["'x'", "torch.Tensor"]),
    "weight-wrong-length": (lambda: ops.rms_norm(X, W[:32]), ["'weight'", "(64,)"]),
    "weight-2d": (lambda: ops.rms_norm(X, W.reshape(1, 64)), ["'weight'", "1-D"]),
    "weight-dtype": (lambda: ops.rms_norm(X, W.float()), ["'weight'", "x.dtype"]),
    "eps-tensor": (lambda: ops.rms_norm(X, W, torch.tensor(1e-6)), ["'eps'", ".item()"]),
    "eps-negative": (lambda: ops.rms_norm(X, W, -1.0), ["'eps'", ">= 0"]),
    "eps-nan": (lambda: ops.rms_norm(X, W, float("nan")), ["'eps'", "finite"]),
    "out-shape": (lambda: ops.rms_norm(X, W, out=torch.empty(3, 63, dtype=torch.bfloat16)),
                  ["'out'", "shape"]),
    "out-dtype": (lambda: ops.rms_norm(X, W, out=torch.empty(3, 64)), ["'out'", "float32"]),
    "out-not-contiguous": (lambda: ops.rms_norm(X, W, out=torch.empty(
        64, 3, dtype=torch.bfloat16).t()), ["'out'", "contiguous"]),
    "out-is-x": (lambda: ops.rms_norm(X, W, out=X), ["'out'", "shares memory"]),
    "out-not-tensor": (lambda: ops.rms_norm(X, W, out=[1]), ["'out'", "torch.Tensor"]),
    "fused-residual-shape": (lambda: ops.fused_add_rms_norm(X, X[:2], W), ["'residual'", "shape"]),
    "fused-residual-is-x": (lambda: ops.fused_add_rms_norm(X, X, W), ["'residual'", "memory"]),
    "fused-one-out": (lambda: ops.fused_add_rms_norm(X, X.clone(), W, out=torch.empty_like(X)),
                      ["residual_out", "both"]),
    "fused-inplace-dtype": (lambda: ops.fused_add_rms_norm_(X, X.float(), W), ["'residual'"]),
    "ln-bias-length": (lambda: ops.layer_norm(X, W, W[:3]), ["'bias'", "(64,)"]),
    "ln-bias-dtype": (lambda: ops.layer_norm(X, W, W.half()), ["'bias'", "x.dtype"]),
    "bwd-mean-count": (lambda: ops.layer_norm_backward(X, X, W, torch.zeros(2), torch.ones(3)),
                       ["'mean'", "one per row"]),
    "bwd-rstd-dtype": (lambda: ops.layer_norm_backward(X, X, W, torch.zeros(3),
                                                       torch.ones(3).double()), ["'rstd'"]),
    "bwd-dy-shape": (lambda: ops.layer_norm_backward(X[:2], X, W, torch.zeros(3), torch.ones(3)),
                     ["'dy'", "shape"]),
    "meta-device-mix": (lambda: ops.rms_norm(X, W.to("meta")), ["devices"]),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_bad_input_is_refused_naming_the_parameter(case):
    action, words = REFUSALS[case]
    refused(action, *words, kind=InputError)


def test_a_fused_width_no_route_takes_is_refused_saying_which_run():
    x, w = rand((1, 8200), 1), rand((8200,), 2)
    refused(lambda: ops.fused_add_rms_norm(x, x.clone(), w), "8200 columns",
            "multiple of 16 run up to 16384", kind=InputError)


def test_a_row_wider_than_every_route_is_refused():
    x, w = rand((1, 40000), 1), rand((40000,), 2)
    refused(lambda: ops.layer_norm(x, w, w), "40000 columns", kind=InputError)


# ---- torch.compile and fake tensors ------------------------------------------------------

def test_compiled_fullgraph_matches_eager():
    x, r, w, b = rand((3, 130), 1), rand((3, 130), 2), rand((130,), 3), rand((130,), 4)

    def block(x, r, w, b):
        h, res = ops.fused_add_rms_norm(x, r, w, 1e-6)
        return ops.layer_norm(ops.rms_norm(h, w, 1e-5), w, b, 1e-5) + res
    compiled = torch.compile(block, fullgraph=True, backend="eager")
    assert torch.equal(compiled(x, r, w, b), block(x, r, w, b))


def test_compiled_in_place_and_out():
    x, r, w = rand((2, 64), 5), rand((2, 64), 6), rand((64,), 7)
    want_o, want_h = ops.fused_add_rms_norm(x, r, w)

    def step(x, r, w, out):
        ops.fused_add_rms_norm_(x, r, w, 1e-6)
        ops.rms_norm(x, w, 1e-6, out=out)
        return out
    out = torch.empty_like(x)
    torch.compile(step, fullgraph=True, backend="eager")(x, r, w, out)
    assert torch.equal(x, want_o) and torch.equal(r, want_h)
    assert torch.equal(out, ops.rms_norm(want_o, w, 1e-6))


def test_fake_tensors_give_shape_and_dtype_only():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(4, 7, 5120, dtype=torch.bfloat16)
        w = torch.empty(5120, dtype=torch.bfloat16)
        y = ops.rms_norm(x, w, 1e-6)
        o, h = ops.fused_add_rms_norm(x, torch.empty_like(x), w)
        dx, dw, db = ops.layer_norm_backward(x, x, w, torch.empty(28), torch.empty(28))
    assert y.shape == x.shape and y.dtype == torch.bfloat16
    assert o.shape == h.shape == x.shape
    assert dx.shape == x.shape and dw.shape == db.shape == (5120,)


def test_registered_as_torch_ops():
    for name in ("rms_norm", "rms_norm_out", "fused_add_rms_norm", "fused_add_rms_norm_",
                 "layer_norm", "layer_norm_backward"):
        assert hasattr(torch.ops.ktile, name)
    x, w = rand((2, 64), 1), rand((64,), 2)
    assert torch.equal(torch.ops.ktile.rms_norm(x, w, 1e-6), ops.rms_norm(x, w, 1e-6))
