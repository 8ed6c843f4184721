"""hk.rsqrt_fast on the GPU against the interpreter (which computes 1 / sqrt(x) with two IEEE
roundings): within 2^-22 relative, docs/language.md's bound (sm_90a rsqrt.approx.f32, 2^-22.9
by the PTX ISA), over positive values of every magnitude (normal and subnormal), and the same
special results: +inf at +0, -inf at -0, NaN below 0 and at NaN, +0 at +inf."""
import numpy as np
import pytest

import ktile as hk

pytestmark = pytest.mark.tier3
torch = pytest.importorskip("torch")

SPECIAL = [0.0, -0.0, -1.0, -1e-30, float("inf"), float("-inf"), float("nan"), 1e-40, 1e-45,
           1.17549435e-38, 1.0, 4.0, 2.0, 3.0, 1e-6, 1e30, 3.4e38]
BOUND = 2.0 ** -22


@hk.kernel(grid=lambda p: (1, 1, 1))
def rsqrt_fast(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    o[hk.tile_coord(0, 0, 0, 0)] = hk.rsqrt_fast(x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 32)))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")
@pytest.mark.parametrize("seed", [1, 2])
def test_rsqrt_fast_within_its_bound(seed):
    rng = np.random.default_rng(seed)
    magnitudes = 10.0 ** rng.uniform(-44, 38, 16 * 32)       # every exponent, subnormals too
    x = np.concatenate([np.array(SPECIAL), magnitudes])[:16 * 32].astype(np.float32)
    x = x.reshape(1, 1, 16, 32)
    want = [torch.from_numpy(x.copy()), torch.zeros(1, 1, 16, 32)]
    rsqrt_fast.interpret(*want, target="sm_90a")
    got = [torch.from_numpy(x.copy()).cuda(), torch.zeros(1, 1, 16, 32, device="cuda")]
    rsqrt_fast(*got)
    torch.cuda.synchronize()
    g = got[1].cpu().numpy().astype(np.float64).ravel()
    w = want[1].numpy().astype(np.float64).ravel()
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    with np.errstate(invalid="ignore"):
        ok = same | (np.abs(g - w) <= np.abs(w) * BOUND)
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, [(float(x.ravel()[i]), g[i], w[i]) for i in bad[:5]]
