"""The non-norm ops of the library end to end under wave emulation of gfx1100 (RDNA3, wave32)
and gfx950 (CDNA4, wave64): each op's public function on CPU tensors with its kernels emulated
(`_library.emulating`), against its reference, at small ragged shapes (a partial last row
tile and a partial last column tile, so the edge paths of the loads and stores run too).

An emulator build costs 12-17 s on this 2-core machine (clang -O0 of the generated C++ and
the headers; cached, but any header edit invalidates it), so CI's selection is bounded
(~30 s of builds cold, on 2 cores): four kernels of four different shapes, alternating the
two targets: a same-shape binary (mul) and a gather with partial rotary, in place (NeoX RoPE)
on gfx1100; a gated activation (silu_and_mul, one plane per token) and a looped full-tile
reduction (int8 per token, one warp per token) on gfx950. The scatter (kv_cache_write), the counter-based random
(dropout) and the rest run in the full sweep (and on the interpreter in tier 0).
KTILE_OPS_FULL_BUILD=1 (ktile/config.py) runs every test on both targets instead: every
kernel an op launches, each op on each target (a developer's sweep, ~4 minutes).

One dtype per op (bf16, or float32 where the reference is exact in it): the kernel bodies are
dtype-generic (one factory per element type, float32 math), so the other dtypes are the same
code with another element type: tier 0 checks them on the interpreter and tier 1 compiles
them. fp8 runs on gfx950 only (gfx1100 has no fp8 type)."""
import numpy as np
import pytest

import ktile
from ktile import config, dtypes
from ktile.ops import _library as lib
from ktile.ops.activations import reference as act_ref
from ktile.ops.dropout import reference as dropout_ref
from ktile.ops.elementwise import reference as ew_ref
from ktile.ops.embedding import reference as embedding_ref
from ktile.ops.quant import reference as quant_ref
from ktile.ops.rotary import reference as rotary_ref

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2

TARGETS = ("gfx1100", "gfx950")
FULL = config.OPS_FULL_BUILD.get() == "1"
SWEEP_ONLY = pytest.mark.skip(reason="the full sweep only: KTILE_OPS_FULL_BUILD=1")
ROWS, COLS = 19, 136          # a partial 16-row tile and a partial 64-column tile


def on(ci_target: str | None, targets=TARGETS):
    """Parametrize over `targets`; outside the full sweep only `ci_target` runs (None: none)."""
    return pytest.mark.parametrize("target", [
        pytest.param(t, marks=() if FULL or t == ci_target else SWEEP_ONLY) for t in targets])


def randn(*shape, seed=0, dtype=torch.bfloat16):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def assert_close(got, want, tol):
    err = float(np.max(np.abs(got.float().numpy().reshape(want.shape) - want)))
    assert err <= tol, f"max error {err} > {tol}"


@on("gfx1100")
def test_elementwise_same_shape(target):
    x, y = randn(ROWS, COLS, seed=1), randn(ROWS, COLS, seed=2)
    with lib.emulating(target):
        got = ktile.ops.mul(x, y)
    assert_close(got, ew_ref.binary("mul", x.float().numpy(), y.float().numpy(), dtypes.bf16),
                 0.0)


@on(None)
def test_elementwise_broadcast_scalar_and_unary_forms(target):
    x, bias, scale = randn(ROWS, COLS, seed=1), randn(COLS, seed=3), randn(ROWS, 1, seed=4)
    xs, bf16 = x.float().numpy(), dtypes.bf16
    with lib.emulating(target):
        results = {"row": ktile.ops.sub(bias, x), "col": ktile.ops.maximum(x, scale),
                   "scalar": ktile.ops.add(x, 0.5), "unary": ktile.ops.gelu(x, approximate="tanh")}
    wants = {"row": ew_ref.binary("sub", bias.float().numpy(), xs, bf16),
             "col": ew_ref.binary("maximum", xs, scale.float().numpy(), bf16),
             "scalar": ew_ref.binary("add", xs, np.float32(0.5), bf16),
             "unary": ew_ref.unary("gelu_tanh", xs, bf16)}
    for form, want in wants.items():
        tol = ew_ref.tolerance("gelu_tanh", want, bf16) if form == "unary" else 0.0
        assert_close(results[form], want, tol)


# d = 1280: every token a plane of rows of 16, five 16 x 16 tiles a half: two blocks, the
# second with three spare warps (act_and_mul_flat); 128: every token one band of 8 columns
# (act_and_mul_tokens); 136: bands of 16 rows of [rows, 2d], the up half at an element offset
# (act_and_mul)
@on("gfx950")
@pytest.mark.parametrize("d", [1280, pytest.param(128, marks=() if FULL else SWEEP_ONLY),
                               pytest.param(COLS, marks=() if FULL else SWEEP_ONLY)])
def test_silu_and_mul(target, d):
    x = randn(ROWS, 2 * d, seed=5)
    with lib.emulating(target):
        got = ktile.ops.silu_and_mul(x)
    want = act_ref.silu_and_mul(x.float().numpy(), dtypes.bf16)
    assert_close(got, want, act_ref.tolerance(want, dtypes.bf16))


@pytest.mark.parametrize("neox,cache_dtype", [
    pytest.param(True, torch.float32, id="neox"),
    pytest.param(True, torch.bfloat16, id="neox-bf16-cache", marks=() if FULL else SWEEP_ONLY),
    pytest.param(False, torch.float32, id="gptj", marks=() if FULL else SWEEP_ONLY)])
@on("gfx1100")
def test_rotary_embedding(target, neox, cache_dtype):
    tokens, head, rot = ROWS, 64, 32                     # partial rotary, 2 q heads, 1 k head
    positions = torch.randint(0, 50, (tokens,), generator=torch.Generator().manual_seed(6))
    cache = torch.from_numpy(rotary_ref.cos_sin_cache(50, rot)).to(cache_dtype)
    q, k = randn(tokens, 2 * head, seed=7), randn(tokens, head, seed=8)
    before = [t.clone() for t in (q, k)]
    with lib.emulating(target):
        ktile.ops.rotary_embedding(positions, q, k, head, cache, is_neox=neox)
    for after, start in zip((q, k), before):
        want = rotary_ref.rotary(positions.numpy(), start.float().numpy(),
                                 cache.float().numpy(), head, neox)
        assert_close(after, want, rotary_ref.tolerance(want, 8))


def quant_data(cols, seed=9):
    x = randn(ROWS, cols, seed=seed) * 3
    x[0] = 0                                              # a row of zeros: scale 0 / the floor
    return x


def check_per_token(quantise, reference, cols, target):
    x = quant_data(cols)
    with lib.emulating(target):
        q, scales = quantise(x)
    want_q, want_s = reference(x.float().numpy())
    np.testing.assert_array_equal(q.float().numpy(), want_q)
    np.testing.assert_array_equal(scales.view(-1).numpy(), want_s)


# 320 columns: one warp per token (quant/token_rows.py, a view of 20 columns, partial in its
# 64-column tile); 136: the 16-token blocks (hidden not a multiple of 16)
@on("gfx950")
@pytest.mark.parametrize("cols", [320, pytest.param(136, marks=() if FULL else SWEEP_ONLY)])
def test_int8_per_token(target, cols):
    check_per_token(ktile.ops.scaled_int8_quant, quant_ref.int8_per_token, cols, target)


@on(None, targets=("gfx950",))
@pytest.mark.parametrize("cols", [320, 136])
def test_fp8_per_token(target, cols):
    check_per_token(lambda x: ktile.ops.scaled_fp8_quant(x, use_per_token_if_dynamic=True),
                    quant_ref.fp8_per_token, cols, target)


@on(None)
def test_int8_static_and_dequantize(target):
    x = quant_data(320)                    # per-token dequantisation: one warp per token
    want_q, want_s = quant_ref.int8_per_token(x.float().numpy())
    with lib.emulating(target):
        q_static, _ = ktile.ops.scaled_int8_quant(x, torch.tensor([0.03]))
        back = ktile.ops.dequantize(torch.from_numpy(want_q),
                                    torch.from_numpy(want_s).view(-1, 1), torch.float32)
    np.testing.assert_array_equal(q_static.numpy(),
                                  quant_ref.int8_per_tensor(x.float().numpy(), 0.03))
    np.testing.assert_array_equal(back.numpy(), quant_ref.dequantize(want_q, want_s[:, None]))


@on(None, targets=("gfx950",))
@pytest.mark.parametrize("cols", [320, 136])              # the per-token maxima: both forms
def test_fp8_dynamic_per_tensor_and_dequantize(target, cols):
    x = quant_data(cols, seed=10)
    with lib.emulating(target):
        q_tensor, scale = ktile.ops.scaled_fp8_quant(x)
        back = ktile.ops.dequantize(q_tensor, scale, torch.float32)
    want_q, want_scale = quant_ref.fp8_per_tensor(x.float().numpy())
    assert scale.item() == want_scale
    np.testing.assert_array_equal(q_tensor.float().numpy(), want_q)
    np.testing.assert_array_equal(back.numpy(), quant_ref.dequantize(want_q, want_scale))


@on(None)
def test_embedding(target):
    ids = torch.randint(-2, 40, (ROWS,), generator=torch.Generator().manual_seed(11))
    table = randn(40, COLS, seed=12)                       # ids outside it read zero rows
    with lib.emulating(target):
        rows = ktile.ops.embedding(ids, table)
    np.testing.assert_array_equal(rows.float().numpy(),
                                  embedding_ref.embedding(ids.numpy(), table.float().numpy()))


@on(None)
def test_embedding_flat(target):
    ids = torch.randint(-2, 40, (ROWS,), generator=torch.Generator().manual_seed(11))
    table = randn(40, 512, seed=12)                        # flat copies of 16 x 32 tiles
    with lib.emulating(target):
        rows = ktile.ops.embedding(ids, table)
    np.testing.assert_array_equal(rows.float().numpy(),
                                  embedding_ref.embedding(ids.numpy(), table.float().numpy()))


@on(None)
def test_kv_cache_write(target):
    key, value = randn(ROWS, 2, 64, seed=13), randn(ROWS, 2, 64, seed=14)
    caches = [randn(4, 8, 2, 64, seed=s) for s in (15, 16)]
    slots = torch.randperm(32, generator=torch.Generator().manual_seed(11))[:ROWS]
    slots[::3] = -1                                        # padding tokens write nothing
    wants = [c.clone().view(32, 2, 64) for c in caches]
    for t, s in enumerate(slots.tolist()):
        if s >= 0:
            wants[0][s], wants[1][s] = key[t], value[t]
    with lib.emulating(target):
        ktile.ops.kv_cache_write(key, value, *caches, slots)
    for cache, want in zip(caches, wants):
        assert torch.equal(cache.view(32, 2, 64), want)


@on(None)
def test_dropout(target):
    x = randn(ROWS, COLS, seed=17, dtype=torch.float32)
    with lib.emulating(target):
        got = ktile.ops.dropout(x, 0.25, 2024)
    want, keep = dropout_ref.dropout4(x.numpy(), 0.25, 2024)
    np.testing.assert_array_equal(got.numpy(), want)
    assert 0 < keep.mean() < 1
