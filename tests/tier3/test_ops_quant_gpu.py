"""Quantisation on the GPU (tier 3, skipped without one), bit for bit against
ktile/ops/quant/reference.py: per-token int8 and fp8 at every block route's width and past the
widest (one warp per token), 1 to 4096 tokens, a row of zeros and a row that saturates; every
candidate of the sweep (pinned) at a ragged width; static and dynamic per-tensor forms and
dequantisation; the float32 -> int8 conversion on special values (sm_90a's path of
conversions.hpp, which the CPU tests cannot reach)."""
import numpy as np
import pytest

import quant_casts

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

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
