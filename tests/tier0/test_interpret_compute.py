"""Interpreter: compute ops against numpy / torch references. Reductions and vector
broadcasts, MMA variants, unary math, integer arithmetic, casts, masks, iota, rand."""
import numpy as np
import pytest
import torch

import ktile as hk
from ktile.dtypes import bf16, fp8
from ktile.interpret import run_module


def _rand(shape, dtype=hk.fp32, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    return dtype.round((scale * rng.standard_normal(shape)).astype(np.float32))


def _tile(x):
    return x.reshape(1, 1, *x.shape)


@hk.kernel(grid=(1, 1, 1))
def softmax_rows(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.bf16], cs: hk.Tensor[hk.fp32]):
    t = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 32))
    e = hk.exp(t - hk.row_max(t))
    o[hk.tile_coord(0, 0, 0, 0)] = (e / hk.row_sum(e)).to(hk.bf16)
    col = hk.col_sum(t) * 0.5
    cs[hk.tile_coord(0, 0, 0, 0)] = t * col - hk.col_min(t)


def test_row_and_col_reductions_broadcast_along_their_axis():
    x = _rand((16, 32), seed=3)
    o = np.zeros((1, 1, 16, 32), np.float32)
    cs = np.zeros((1, 1, 16, 32), np.float32)
    run_module(softmax_rows.trace().module, [_tile(x), o, cs])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(o[0, 0], bf16.round(e / e.sum(axis=1, keepdims=True)),
                               rtol=2 ** -7, atol=1e-6)
    col = x.sum(axis=0, dtype=np.float32) * np.float32(0.5)
    np.testing.assert_allclose(cs[0, 0], x * col[None, :] - x.min(axis=0)[None, :], rtol=1e-6,
                               atol=1e-5)


@hk.kernel(grid=(1, 1, 1))
def vector_to_scalar(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    v = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RV(hk.fp32, 64))
    s = v.sum() + v.max() * 10.0 - v.min()
    o[hk.tile_coord(0, 0, 0, 0)] = hk.zeros(hk.RV(hk.fp32, 16)) + s


def test_vector_reductions_to_a_scalar():
    x = _rand((1, 64), seed=4)
    o = np.zeros((1, 1, 1, 16), np.float32)
    run_module(vector_to_scalar.trace().module, [_tile(x), o])
    want = np.float32(x.sum(dtype=np.float32) + x.max() * np.float32(10) - x.min())
    np.testing.assert_allclose(o.reshape(16), np.full(16, want), rtol=1e-6)


MMA_SHAPES = {  # variant: (a rows, a cols, a layout, b rows, b cols, b layout)
    "AB": (16, 48, "row", 48, 32, "col"),
    "ABt": (16, 48, "row", 32, 48, "row"),
    "AtB": (48, 16, "col", 48, 32, "col"),
    "AtBt": (48, 16, "col", 32, 48, "row"),
}


@hk.kernel(grid=(1, 1, 1))
def mma_variant(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32], *,
                variant: hk.Constexpr[str]):
    ar, ac, al, br, bc, bl = MMA_SHAPES[variant]
    ta = a[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.bf16, ar, ac, al))
    tb = b[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.bf16, br, bc, bl))
    acc = c[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 32))
    c[hk.tile_coord(0, 0, 0, 0)] = hk.mma(ta, tb, acc, variant)


@pytest.mark.parametrize("variant", sorted(MMA_SHAPES))
def test_mma_variants(variant):
    ar, ac, _, br, bc, _ = MMA_SHAPES[variant]
    a, b = _rand((ar, ac), bf16, seed=5), _rand((br, bc), bf16, seed=6)
    c0 = _rand((16, 32), seed=7)
    c = _tile(c0.copy())
    run_module(mma_variant.trace(variant=variant).module, [_tile(a), _tile(b), c])
    op_a = a.T if variant.startswith("At") else a
    op_b = b.T if variant.endswith("Bt") else b
    want = c0.astype(np.float64) + op_a.astype(np.float64) @ op_b.astype(np.float64)
    np.testing.assert_allclose(c[0, 0], want, rtol=1e-5, atol=1e-4)


@hk.kernel(grid=(1, 1, 1))
def mma_i8(a: hk.Tensor[hk.i8], b: hk.Tensor[hk.i8], c: hk.Tensor[hk.i32]):
    ta = a[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.i8, 16, 64))
    tb = b[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.i8, 16, 64))
    acc = hk.zeros(hk.RT(hk.i32, 16, 16))
    acc += ta @ tb.T
    c[hk.tile_coord(0, 0, 0, 0)] = acc


def test_mma_i8_is_exact():
    rng = np.random.default_rng(8)
    a = rng.integers(-128, 128, (1, 1, 16, 64), dtype=np.int8)
    b = rng.integers(-128, 128, (1, 1, 16, 64), dtype=np.int8)
    c = np.zeros((1, 1, 16, 16), np.int32)
    run_module(mma_i8.trace().module, [a, b, c])
    np.testing.assert_array_equal(c[0, 0], a[0, 0].astype(np.int64) @ b[0, 0].T.astype(np.int64))


UNARY = {
    "exp": torch.exp, "exp2": torch.exp2, "log": torch.log, "log2": torch.log2,
    "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "silu": torch.nn.functional.silu,
    "gelu": torch.nn.functional.gelu, "relu": torch.relu, "sigmoid": torch.sigmoid,
    "tanh": torch.tanh, "sin": torch.sin, "cos": torch.cos, "abs": torch.abs,
}


@hk.kernel(grid=(1, 1, 1))
def unary(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, fn: hk.Constexpr[str]):
    t = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 64))
    o[hk.tile_coord(0, 0, 0, 0)] = getattr(hk, fn)(t)


@pytest.mark.parametrize("fn", sorted(UNARY))
def test_unary_matches_torch(fn):
    x = _rand((16, 64), seed=9, scale=3.0)
    if fn in ("log", "log2", "sqrt", "rsqrt"):
        x = np.abs(x) + 0.01
    o = np.zeros((1, 1, 16, 64), np.float32)
    run_module(unary.trace(fn=fn).module, [_tile(x), o])
    want = UNARY[fn](torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(o[0, 0], want, rtol=2e-6, atol=1e-6)


@hk.kernel(grid=(1, 1, 1))
def unary_bf16(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    t = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.bf16, 16, 64))
    o[hk.tile_coord(0, 0, 0, 0)] = hk.gelu(-t) * 3.0


def test_unary_results_round_to_their_dtype():
    x = _rand((16, 64), bf16, seed=10, scale=2.0)
    o = np.zeros((1, 1, 16, 64), np.float32)
    run_module(unary_bf16.trace().module, [_tile(x), o])
    gelu = bf16.round(torch.nn.functional.gelu(torch.from_numpy(-x)).numpy())
    want = bf16.round(gelu * np.float32(3))
    assert np.array_equal(o[0, 0], bf16.round(o[0, 0]))  # every result is a bf16 value
    # erf's last float32 bit may differ from torch's, and move a bf16 rounding by one step
    np.testing.assert_allclose(o[0, 0], want, rtol=2 ** -7, atol=1e-5)
    assert np.mean(o[0, 0] == want) > 0.95


@hk.kernel(grid=(1, 1, 1))
def int_math(x: hk.Tensor[hk.i32], y: hk.Tensor[hk.i32], o: hk.Tensor[hk.i32]):
    a = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.i32, 16, 16))
    b = y[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.i32, 16, 16))
    o[hk.tile_coord(0, 0, 0, 0)] = a / b
    o[hk.tile_coord(0, 0, 1, 0)] = hk.maximum(a, b) - hk.minimum(a, b) * 3
    o[hk.tile_coord(0, 0, 2, 0)] = hk.where(a < b, hk.abs(a), -b)


def test_integer_tiles_divide_toward_zero():
    rng = np.random.default_rng(11)
    x = rng.integers(-50, 50, (1, 1, 16, 16), dtype=np.int32)
    y = rng.integers(1, 9, (1, 1, 16, 16), dtype=np.int32) * rng.choice([-1, 1], (1, 1, 16, 16))
    y = y.astype(np.int32)
    o = np.zeros((1, 1, 48, 16), np.int32)
    run_module(int_math.trace().module, [x, y, o])
    a, b = x[0, 0].astype(np.int64), y[0, 0].astype(np.int64)
    np.testing.assert_array_equal(o[0, 0, :16], np.trunc(a / b).astype(np.int64))
    np.testing.assert_array_equal(o[0, 0, 16:32], np.maximum(a, b) - np.minimum(a, b) * 3)
    np.testing.assert_array_equal(o[0, 0, 32:], np.where(a < b, np.abs(a), -b))


@hk.kernel(grid=(1, 1, 1))
def casts(x: hk.Tensor[hk.fp32], q: hk.Tensor[hk.i8], f: hk.Tensor[hk.fp8]):
    t = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 16))
    q[hk.tile_coord(0, 0, 0, 0)] = t.to(hk.i8)
    f[hk.tile_coord(0, 0, 0, 0)] = t.to(hk.fp8)


def test_casts_truncate_saturate_and_round():
    x = _rand((16, 16), seed=12, scale=300.0)
    x[0, :4] = [np.nan, np.inf, -np.inf, -0.7]
    q = np.zeros((1, 1, 16, 16), np.int8)
    f = np.zeros((1, 1, 16, 16), np.float32)
    run_module(casts.trace("gfx950").module, [_tile(x), q, f])
    want_q = np.clip(np.trunc(np.nan_to_num(x)), -128, 127).astype(np.int8)
    np.testing.assert_array_equal(q[0, 0], want_q)
    assert q[0, 0, 0, :4].tolist() == [0, 127, -128, 0]
    np.testing.assert_array_equal(f[0, 0], fp8.round(x))
    assert f[0, 0, 0, 1] == 448.0  # e4m3fn has no infinity: saturates


@hk.kernel(grid=(1, 1, 1))
def masks(o: hk.Tensor[hk.fp32], r: hk.Tensor[hk.fp32], *, seed: hk.Constexpr[int] = 1234):
    rows = hk.iota(hk.RT(hk.fp32, 16, 16), axis="row")
    cols = hk.iota(hk.RT(hk.fp32, 16, 16), axis="col")
    t = hk.causal_mask(rows * 100.0 + cols, 16, 8, fill=-1.0)
    o[hk.tile_coord(0, 0, 0, 0)] = t
    offsets = hk.iota(hk.RT(hk.i32, 16, 16), axis="row") * 16 + \
        hk.iota(hk.RT(hk.i32, 16, 16), axis="col")
    r[hk.tile_coord(0, 0, 0, 0)] = hk.rand(seed, offsets)


def test_iota_causal_mask_and_rand():
    from ktile.ops.rand.reference import rand
    o = np.zeros((1, 1, 16, 16), np.float32)
    r = np.zeros((1, 1, 16, 16), np.float32)
    run_module(masks.trace().module, [o, r])
    i, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    want = np.where(8 + j > 16 + i, -1.0, i * 100.0 + j).astype(np.float32)
    np.testing.assert_array_equal(o[0, 0], want)
    np.testing.assert_array_equal(r[0, 0], rand(1234, (i * 16 + j).astype(np.int32)))
