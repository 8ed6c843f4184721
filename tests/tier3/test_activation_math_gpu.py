"""gelu, erf, silu, sigmoid and silu_fast on the GPU against the interpreter, within the bounds
docs/language.md states (the targets compute them in float32 with CUDA's erff and a 1-ulp
reciprocal; the interpreter rounds erf of the exact argument once and divides exactly):
  erf              2 ulp of fp32;
  sigmoid, silu    2^-21 relative (exp's 2 ulp and the reciprocal's 1, on either side);
  gelu             |x|·2^-22 (1 + erf cancels for x < 0);
  silu_fast        2^-20 + |x|·2^-23 relative (exp2 of a rounded product), ±0 below x = -87
                   where |silu| < 2^-119;
and one more step of bf16's rounding for the bf16 results. Special values (0, ±inf, NaN,
subnormal results) included."""
import numpy as np
import pytest

import ktile as hk

pytestmark = pytest.mark.tier3
torch = pytest.importorskip("torch")

FUNCTIONS = ("gelu", "erf", "silu", "sigmoid", "silu_fast")
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 3.92, -3.92, 5.0, -5.0, 9.0, -9.0, 88.0, -88.0,
           -87.5, -100.0, -104.0, 100.0, 1e-8, -1e-8, 1e-40, -1e-40, 1e30, -1e30,
           float("inf"), float("-inf"), float("nan")]


@hk.kernel(grid=lambda p: (1, 1, 1))
def activations(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], ob: hk.Tensor[hk.bf16]):
    a = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 32))
    b = a.to(hk.bf16)
    o[hk.tile_coord(0, 0, 0, 0)] = hk.gelu(a)
    ob[hk.tile_coord(0, 0, 0, 0)] = b.gelu()
    o[hk.tile_coord(0, 0, 1, 0)] = hk.erf(a)
    ob[hk.tile_coord(0, 0, 1, 0)] = b.erf()
    o[hk.tile_coord(0, 0, 2, 0)] = hk.silu(a)
    ob[hk.tile_coord(0, 0, 2, 0)] = b.silu()
    o[hk.tile_coord(0, 0, 3, 0)] = hk.sigmoid(a)
    ob[hk.tile_coord(0, 0, 3, 0)] = b.sigmoid()
    o[hk.tile_coord(0, 0, 4, 0)] = hk.silu_fast(a)
    ob[hk.tile_coord(0, 0, 4, 0)] = b.silu_fast()


def _inputs(scale: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.concatenate([np.array(SPECIAL), rng.standard_normal(16 * 32) * scale])[:16 * 32]
    return x.astype(np.float32).reshape(1, 1, 16, 32)


def _allowed(fn: str, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """How far the fp32 result may be from the interpreter's `w` at inputs `x`."""
    ax, aw = np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64))
    if fn == "erf":
        return 2.0 * np.spacing(np.abs(w)).astype(np.float64)
    if fn == "gelu":
        return ax * 2.0 ** -22 + 2.0 ** -149
    if fn == "silu_fast":
        return aw * (2.0 ** -20 + ax * 2.0 ** -23) + np.where(x < -87.0, 2.0 ** -119, 8 * 2.0 ** -149)
    return aw * 2.0 ** -21 + 8 * 2.0 ** -149   # sigmoid, silu; subnormal results: 8 steps


@pytest.mark.parametrize("scale,seed", [(0.5, 1), (2.0, 2), (6.0, 3), (40.0, 4)])
def test_activations_within_the_stated_bounds(scale, seed):
    x = _inputs(scale, seed)
    shapes = [((1, 1, 16 * len(FUNCTIONS), 32), torch.float32),
              ((1, 1, 16 * len(FUNCTIONS), 32), torch.bfloat16)]
    want = [torch.from_numpy(x.copy())] + [torch.zeros(s, dtype=d) for s, d in shapes]
    activations.interpret(*want, target="sm_90a")
    got = [t.cuda() for t in [torch.from_numpy(x.copy())] + [torch.zeros(s, dtype=d) for s, d in shapes]]
    activations(*got)
    torch.cuda.synchronize()
    xs = x[0, 0]
    for k, fn in enumerate(FUNCTIONS):
        for index, bf16 in ((1, False), (2, True)):
            g = got[index][0, 0, 16 * k:16 * k + 16].float().cpu().numpy().astype(np.float64)
            w = want[index][0, 0, 16 * k:16 * k + 16].float().numpy().astype(np.float64)
            allowed = _allowed(fn, xs, w.astype(np.float32))
            if bf16:   # the fp32 bound, then one bf16 step either way
                allowed = allowed + np.spacing(np.abs(w).astype(np.float32)).astype(np.float64) * 2.0 ** 16
            same = (g == w) | (np.isnan(g) & np.isnan(w))
            with np.errstate(invalid="ignore"):
                ok = same | (np.abs(g - w) <= allowed)
            bad = np.argwhere(~ok)
            assert bad.size == 0, (f"{fn} ({'bf16' if bf16 else 'fp32'}) at x={xs[tuple(bad[0])]!r}: "
                                   f"{g[tuple(bad[0])]!r}, the interpreter {w[tuple(bad[0])]!r}")
