"""`ktile.ops.scaled_dot_product_attention`'s AMD kernel (`attention_amd`, issue #12) end to
end under wave emulation of gfx950 (CDNA4, wave64: 2 waves of 32 query rows, K and Vᵀ copied
global→LDS by DMA) and gfx1100 (RDNA3, wave32: 4 waves of 16 rows, register-staged copies):
the op's public function with its kernel emulated (`_library.emulating`, the route the op
picks for the target), against the float64 reference at ragged lengths (L 40, S 70: one pair
of unmasked key tiles, then the ragged tail), GQA. CI: D 64, causal on gfx950 and not on
gfx1100 (a few seconds each with a warm build cache, about 13 s cold). D 128 on both targets:
KTILE_OPS_FULL_BUILD=1."""
import numpy as np
import pytest

from ktile import config
from ktile.ops import _library as lib
from ktile.ops.attention import op
from ktile.ops.attention.reference import attention as reference, tolerance

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2

FULL = config.OPS_FULL_BUILD.get() == "1"
HEAVY = pytest.mark.skipif(not FULL, reason="D 128 emulation: KTILE_OPS_FULL_BUILD=1")
CASES = [pytest.param("gfx950", 64, True, id="gfx950-D64-causal"),
         pytest.param("gfx1100", 64, False, id="gfx1100-D64"),
         pytest.param("gfx950", 128, False, id="gfx950-D128", marks=HEAVY),
         pytest.param("gfx1100", 128, True, id="gfx1100-D128-causal", marks=HEAVY)]


@pytest.mark.parametrize("target,d,causal", CASES)
def test_amd_kernel_matches_the_reference_under_emulation(monkeypatch, target, d, causal):
    monkeypatch.setenv("KTILE_TARGET", target)
    assert op.route_for(d, causal, 40, None).kernel == "attention_amd"
    g = torch.Generator().manual_seed(1)
    q = torch.randn(1, 2, 40, d, generator=g).bfloat16()
    k, v = (torch.randn(1, 1, 70, d, generator=g).bfloat16() for _ in range(2))
    with lib.emulating(target):
        o = op.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    want = reference(*(t.float().numpy() for t in (q, k, v)), causal)
    err = np.abs(o.float().numpy() - want).max()
    assert err <= tolerance(v.float().numpy()), f"{target} D{d}: {err}"
