"""ktile.ops.scaled_int8_quant / scaled_fp8_quant / dequantize on CPU tensors (the interpreter)
against ktile/ops/quant/reference.py, bit for bit: ragged shapes, one token, 1-4 dimensions, a
row of zeros, ties; refusals naming the parameter; torch.compile(fullgraph=True)."""
import numpy as np
import pytest
import torch

import ktile
from ktile.errors import InputError
from ktile.ops.quant import reference as R
from bad_inputs import refused

SHAPES = [(1, 64), (21, 300), (3, 5, 70), (2, 2, 2, 33),
          (21, 320), (3, 5, 1040)]     # hidden % 16 == 0: one warp per token (token_rows.py)


def data(shape, dtype=torch.bfloat16, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(shape, generator=g) * 3).to(dtype)
    if x.numel() // x.shape[-1] > 1:
        x.view(-1, x.shape[-1])[0] = 0          # a row of zeros: scale 0 / the floor
    return x


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=str)
def test_int8_per_token(shape, dtype):
    x = data(shape, dtype)
    q, scales = ktile.ops.scaled_int8_quant(x)
    want_q, want_s = R.int8_per_token(x.float().numpy())
    assert q.dtype == torch.int8 and q.shape == x.shape
    assert scales.shape == (x.numel() // x.shape[-1], 1)
    np.testing.assert_array_equal(q.numpy(), want_q)
    np.testing.assert_array_equal(scales.view(-1).numpy(), want_s)


def test_int8_static_rounds_ties_to_even_and_saturates():
    x = torch.tensor([[0.5, 1.5, 2.5, -2.5, 300.0, -300.0] + [0.0] * 10])
    q, scale = ktile.ops.scaled_int8_quant(x, torch.tensor([1.0]))
    assert q[0, :6].tolist() == [0, 2, 2, -2, 127, -128]
    assert scale.item() == 1.0


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_int8_static(shape):
    x = data(shape)
    q, _ = ktile.ops.scaled_int8_quant(x, torch.tensor([0.03]))
    np.testing.assert_array_equal(q.numpy(), R.int8_per_tensor(x.float().numpy(), 0.03))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_fp8_dynamic_per_tensor_and_per_token(shape):
    x = data(shape)
    q, scale = ktile.ops.scaled_fp8_quant(x)
    want_q, want_scale = R.fp8_per_tensor(x.float().numpy())
    assert q.dtype == torch.float8_e4m3fn and scale.shape == (1,)
    assert scale.item() == want_scale
    np.testing.assert_array_equal(q.float().numpy(), want_q)
    q, scales = ktile.ops.scaled_fp8_quant(x, use_per_token_if_dynamic=True)
    want_q, want_s = R.fp8_per_token(x.float().numpy())
    np.testing.assert_array_equal(q.float().numpy(), want_q)
    np.testing.assert_array_equal(scales.view(-1).numpy(), want_s)


def test_fp8_static_clamps_at_448():
    x = data((5, 40))
    q, _ = ktile.ops.scaled_fp8_quant(x, torch.tensor([0.001]))
    np.testing.assert_array_equal(q.float().numpy(), R.fp8_per_tensor(x.float().numpy(), 0.001)[0])
    assert q.float().abs().max().item() == 448.0


@pytest.mark.parametrize("shape", [(21, 300), (21, 320)], ids=str)   # 320: token_rows.py
@pytest.mark.parametrize("form", ["int8_token", "int8_tensor", "fp8_token", "fp8_tensor"])
def test_dequantize(form, shape):
    x = data(shape)
    quant = ktile.ops.scaled_int8_quant if form.startswith("int8") else ktile.ops.scaled_fp8_quant
    kwargs = {"use_per_token_if_dynamic": True} if form == "fp8_token" else {}
    q, scale = quant(x, torch.tensor([0.05]), **kwargs) if form == "int8_tensor" else \
        quant(x, **kwargs)
    out = ktile.ops.dequantize(q, scale, torch.float32)
    np.testing.assert_array_equal(out.numpy(), R.dequantize(q.float().numpy(), scale.numpy()))
    bf = ktile.ops.dequantize(q, scale)
    assert torch.equal(bf, out.to(torch.bfloat16))


def test_static_scale_is_read_from_the_tensor_at_each_call():
    x, scale = data((4, 64)), torch.tensor([0.1])
    first, _ = ktile.ops.scaled_int8_quant(x, scale)
    scale.fill_(0.2)
    second, _ = ktile.ops.scaled_int8_quant(x, scale)
    np.testing.assert_array_equal(second.numpy(), R.int8_per_tensor(x.float().numpy(), 0.2))
    assert not torch.equal(first, second)


def test_compile_fullgraph():
    x = data((7, 96))
    f = torch.compile(lambda x: ktile.ops.scaled_int8_quant(x)[0].float() + 1, fullgraph=True,
                      backend="aot_eager")
    np.testing.assert_array_equal(f(x).numpy(), R.int8_per_token(x.float().numpy())[0].astype(np.float32) + 1)


BAD = [
    ("x dtype", lambda: ktile.ops.scaled_int8_quant(torch.zeros(4, 4, dtype=torch.int32)),
     ("'x'", "int32", "convert")),
    ("x not tensor", lambda: ktile.ops.scaled_int8_quant([1.0, 2.0]), ("'x'", "torch.tensor")),
    ("x 5-D", lambda: ktile.ops.scaled_int8_quant(torch.zeros(1, 1, 1, 1, 4)),
     ("'x'", "5 dimensions", "reshape")),
    ("scale two values", lambda: ktile.ops.scaled_int8_quant(torch.zeros(4, 4),
                                                             torch.tensor([1.0, 2.0])),
     ("'scale'", "2 values", "torch.tensor([s]")),
    ("scale fp16", lambda: ktile.ops.scaled_fp8_quant(torch.zeros(4, 4),
                                                      torch.tensor([1.0], dtype=torch.half)),
     ("'scale'", "float16", "convert")),
    ("dequant q float", lambda: ktile.ops.dequantize(torch.zeros(4, 4), torch.tensor([1.0])),
     ("'q'", "float32")),
    ("dequant scales per row", lambda: ktile.ops.dequantize(torch.zeros(4, 4, dtype=torch.int8),
                                                            torch.ones(3)),
     ("'scale'", "3 values", "one per token")),
    ("dequant dtype", lambda: ktile.ops.dequantize(torch.zeros(4, 4, dtype=torch.int8),
                                                   torch.tensor([1.0]), torch.int32),
     ("'dtype'", "bfloat16")),
    ("x empty", lambda: ktile.ops.scaled_int8_quant(torch.zeros(0, 4)), ("'x'", "empty")),
]


@pytest.mark.parametrize("action,words", [(a, w) for _, a, w in BAD], ids=[b[0] for b in BAD])
def test_refusals(action, words):
    refused(action, *words, kind=InputError)


# ---- per-token routes: one block per token up to 16384, one warp per token past it ----------

@pytest.mark.parametrize("hidden", [64, 1040, 4096, 4112, 14336, 16384, 16400])
def test_per_token_route_by_hidden(hidden):
    from ktile.ops.quant import config
    for table, family, target in ((config.INT8, "int8_per_token", "sm_90a"),
                                  (config.FP8, "fp8_per_token", "sm_90a"),
                                  (config.INT8, "int8_per_token", "gfx1100")):
        route = config.per_token_route(table, family, hidden, target)
        if hidden > config.BLOCK_WIDTHS[-1]:
            assert route.kernel == f"{family}_rows"
            continue
        assert route.kernel == f"{family}_block"
        c = route.constants
        width = min(w for w in config.BLOCK_WIDTHS if w >= hidden)
        assert c["HELD"] * c["C"] * c["WARPS"] * 16 == width       # the narrowest that holds it


def test_past_the_widest_block_route_one_warp_per_token():
    x = data((2, 16400))                   # hidden > 16384: token_rows.py, a row of zeros first
    q, scales = ktile.ops.scaled_int8_quant(x)
    want_q, want_s = R.int8_per_token(x.float().numpy())
    np.testing.assert_array_equal(q.numpy(), want_q)
    np.testing.assert_array_equal(scales.view(-1).numpy(), want_s)


def test_sweep_candidates_agree_bit_for_bit():
    """Every route the sweep times (block C64 / C128 / C64 x2 / C32, one warp per token) gives
    the shipped route's q and scales at a ragged width (the sweep's CPU smoke run)."""
    from ktile.ops.quant import sweep
    for name in sweep.OPS:
        records = sweep.time_shape(name, 3, 1040, device="cpu", timer=lambda f: (f(), 0.0)[1])
        timed = [r for r in records if "kernel" in r]
        assert {r["route"] for r in timed} == {"block C64", "block C128", "block C64 x2",
                                               "block C32", "rows"}
        assert all(r["same"] for r in timed), [r["route"] for r in timed if not r["same"]]
        assert [r["route"] for r in timed if r["shipped"]] == ["block C64"]
