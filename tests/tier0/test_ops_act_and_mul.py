"""silu_and_mul / gelu_and_mul on the flat-token kernel (act_and_mul_flat) on CPU tensors (the
interpreter), against ktile/ops/activations/reference.py: which kernel a d takes, one token and
a ragged token count, 3-D input and out=, every route variant (COLS 16 / 32 / 64) including a
last block with spare warps, a pinned route that does not fit d."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ktile as hk  # noqa: E402
from ktile import ops  # noqa: E402
from ktile.ops import _library as lib  # noqa: E402
from ktile.ops.activations import config, reference as act_ref  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def rand(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * 2.0).to(dtype)


def check(x, act: str, out=None):
    kt = getattr(hk, {torch.bfloat16: "bf16", torch.float16: "fp16"}.get(x.dtype, "fp32"))
    if act == "silu":
        got = ops.silu_and_mul(x, out=out)
        want = act_ref.silu_and_mul(x.float().numpy(), kt)
    else:
        approximate = "tanh" if act == "gelu_tanh" else "none"
        got = ops.gelu_and_mul(x, approximate, out=out)
        want = act_ref.gelu_and_mul(x.float().numpy(), kt, approximate)
    assert got.shape == x.shape[:-1] + (x.shape[-1] // 2,) and got.dtype == x.dtype
    err = np.abs(got.float().numpy().astype(np.float64) - want.astype(np.float64)).max()
    assert err <= act_ref.tolerance(want, kt), (act, x.dtype, err)
    return got


@pytest.mark.parametrize("d,kernel", [(14336, "act_and_mul_flat"), (11008, "act_and_mul_flat"),
                                      (768, "act_and_mul_flat"), (1152, "act_and_mul_tokens"),
                                      (100, "act_and_mul")])
def test_the_kernel_a_width_takes(d, kernel):
    for tokens in (1, 16384):
        assert config.TABLE.choose(tokens, d, None).kernel == kernel


@pytest.mark.parametrize("tokens,d,cols", [(1, 14336, 16), (256, 14336, 16), (257, 14336, 32),
                                           (16384, 12288, 32), (16384, 11008, 16)])
def test_the_tile_width_a_call_takes(tokens, d, cols):
    """COLS 16 up to DECODE_TOKENS tokens (most warps across a row), 32 above where d allows."""
    assert config.TABLE.choose(tokens, d, None).constants["COLS"] == cols


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("act", config.ACTS)
def test_default_route(dt, act):
    check(rand((5, 2 * 512), DTYPES[dt], 31), act)


@pytest.mark.parametrize("shape", [(2 * 768,), (2, 3, 2 * 256)],
                         ids=lambda s: "x".join(map(str, s)))
def test_one_token_and_3d(shape):
    """768 = 3 tiles of 16 x 16 per half: one block, one spare warp."""
    check(rand(shape, torch.bfloat16, 35), "silu")


@pytest.mark.parametrize("cols,warps", config.FLAT_TOKEN_SHAPES)
@pytest.mark.parametrize("dt", ["bf16", "fp32"])
def test_every_variant(cols, warps, dt):
    """d = 5 tiles per half at each width: a last block with spare warps at WARPS 2 and 4."""
    route = config.flat_route("silu", cols, warps)
    x = rand((3, 2 * 5 * 16 * cols), DTYPES[dt], 32)
    with lib.pinned(config.TABLE, route):
        check(x, "silu")
        check(x, "gelu")


def test_out_is_written_in_place():
    x = rand((4, 2 * 256), torch.bfloat16, 33)
    out = torch.full((4, 256), float("nan"), dtype=torch.bfloat16)
    assert check(x, "silu", out=out) is out
    assert not torch.isnan(out).any()


def test_a_pinned_route_that_does_not_fit_d_gives_way():
    """COLS 64 needs d % 1024 == 0: at d = 768 the call runs act_and_mul, still correct."""
    with lib.pinned(config.TABLE, config.flat_route("silu", 64, 2)):
        check(rand((3, 2 * 768), torch.float32, 34), "silu")
