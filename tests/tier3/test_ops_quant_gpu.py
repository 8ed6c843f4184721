"""Quantisation on the GPU (tier 3, skipped without one), bit for bit against
ktile/ops/quant/reference.py: per-token int8 and fp8 at every block route's width and past the
widest (one warp per token), 1 to 4096 tokens, a row of zeros and a row that saturates; every
candidate of the sweep (pinned) at a ragged width; static and dynamic per-tensor forms and
dequantisation; the float32 -> int8 and float32 -> fp8 e4m3 conversions on special values
(sm_90a's paths: conversions.hpp's float_to_int, maps.hpp's pairwise e4m3 narrowing, which
the CPU tests cannot reach)."""
import numpy as np
import pytest

import quant_casts

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

import ktile as hk  # noqa: E402
import ktile.ops as ops  # noqa: E402
from ktile.ops import _library as lib  # noqa: E402
from ktile.ops.quant import reference as R, sweep  # noqa: E402

ROWS = (1, 8, 37, 4096)
WIDTHS = (320, 1040, 4096, 8192, 14336, 16384, 16400)


def data(rows, cols, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(rows, cols, generator=g) * 3).bfloat16()
    if rows > 1:
        x[0] = 0                               # scale 0 (int8) / the floor (fp8)
    if rows > 2:
        x[1, 5] = 3e4                          # one large value: the rest of its row near 0
    return x


@pytest.mark.parametrize("cols", WIDTHS)
@pytest.mark.parametrize("rows", ROWS)
def test_per_token_matches_the_reference(rows, cols):
    x = data(rows, cols)
    xs = x.float().numpy()
    q, s = ops.scaled_int8_quant(x.cuda())
    want_q, want_s = R.int8_per_token(xs)
    np.testing.assert_array_equal(q.cpu().numpy(), want_q)
    np.testing.assert_array_equal(s.view(-1).cpu().numpy(), want_s)
    q, s = ops.scaled_fp8_quant(x.cuda(), use_per_token_if_dynamic=True)
    want_q, want_s = R.fp8_per_token(xs)
    np.testing.assert_array_equal(q.float().cpu().numpy(), want_q)
    np.testing.assert_array_equal(s.view(-1).cpu().numpy(), want_s)


@pytest.mark.parametrize("cols", [1040, 4096])
@pytest.mark.parametrize("name", list(sweep.OPS))
def test_every_sweep_candidate_agrees_on_the_gpu(name, cols):
    records = sweep.time_shape(name, 37, cols, timer=lambda f: (f(), 0.0)[1])
    timed = [r for r in records if "kernel" in r]
    assert len(timed) == 5 and all(r["same"] for r in timed), \
        [(r["route"], r["same"]) for r in timed]


def test_per_tensor_and_dequantize():
    x = data(37, 4096)
    xs = x.float().numpy()
    q, _ = ops.scaled_int8_quant(x.cuda(), torch.tensor([0.03], device="cuda"))
    np.testing.assert_array_equal(q.cpu().numpy(), R.int8_per_tensor(xs, 0.03))
    q, scale = ops.scaled_fp8_quant(x.cuda())
    want_q, want_scale = R.fp8_per_tensor(xs)
    assert scale.item() == want_scale
    np.testing.assert_array_equal(q.float().cpu().numpy(), want_q)
    q8, s8 = ops.scaled_int8_quant(x.cuda())
    back = ops.dequantize(q8, s8, torch.float32)
    np.testing.assert_array_equal(back.cpu().numpy(),
                                  R.dequantize(q8.cpu().float().numpy(), s8.cpu().numpy()))


def test_float_to_int8_on_the_gpu():
    x, q = quant_casts.inputs()
    got = torch.from_numpy(q).cuda()
    lib.run(quant_casts.to_int8, torch.from_numpy(x).cuda(), got)
    np.testing.assert_array_equal(got.cpu().numpy(), quant_casts.expected(x))


# fp32 -> e4m3: ±0, subnormals (2^-9 the least; 2^-10 and 3 * 2^-10 ties to even), float32
# subnormals, ±448 (the largest), ±449 and 464 (past it: saturate, as RNE's 480 would not
# fit), ±inf (saturate), NaN, ties to even at several exponents, then a ramp over ±500.
FP8_SPECIAL = [0.0, -0.0, 2.0 ** -9, -(2.0 ** -9), 2.0 ** -10, 3 * 2.0 ** -10, -(3 * 2.0 ** -10),
               1e-40, -1e-40, 2.0 ** -6, 448.0, -448.0, 449.0, -449.0, 464.0, -464.0, 1e30,
               float("inf"), float("-inf"), float("nan"), 1.0625, 1.1875, -1.1875, 17.0, 19.0,
               -19.0, 0.3, 240.0, 232.0, 248.0]


@hk.kernel(grid=lambda p: (1, 1, 1))
def to_fp8(x: hk.Tensor[hk.fp32], q: hk.Tensor[hk.fp8]):
    """q rows 0-15: x's flat tile as e4m3; rows 16-31: its row-layout tile."""
    q[hk.tile_coord(0, 0, 0, 0)] = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 64, "flat")).to(hk.fp8)
    q[hk.tile_coord(0, 0, 1, 0)] = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 64)).to(hk.fp8)


def test_float_to_fp8_bits_on_the_gpu():
    """Each value at an even and an odd position (both halves of a converted pair), bit for bit
    against the e4m3fn grid (ktile.dtypes' rounding, saturating at 448) with zeros' signs."""
    x = np.linspace(-500.0, 500.0, 16 * 64, dtype=np.float32)
    x[:len(FP8_SPECIAL)] = FP8_SPECIAL
    x[len(FP8_SPECIAL):2 * len(FP8_SPECIAL) + 1] = [0.5] + FP8_SPECIAL   # shifted by one
    x = x.reshape(16, 64)
    got = torch.zeros(32, 64, dtype=torch.float8_e4m3fn, device="cuda")
    lib.run(to_fp8, torch.from_numpy(x).cuda(), got)
    grid = np.copysign(np.abs(hk.fp8.round(x)), x)        # NaN stays NaN
    want = torch.from_numpy(grid).to(torch.float8_e4m3fn).view(torch.uint8).numpy()
    bits = got.view(torch.uint8).cpu().numpy()
    np.testing.assert_array_equal(bits[:16], want)
    np.testing.assert_array_equal(bits[16:], want)
