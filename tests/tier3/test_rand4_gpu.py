"""hk.rand4 and the dropout built on it on an NVIDIA GPU (tier 3, skipped without one): draws at
runs of four offsets (one Philox call each on sm_90a's flat tiles) and at any others (the
fallback) equal ktile/ops/rand/reference.py's rand4 bit for bit, in flat and row tiles; and
ktile.ops.dropout equals its reference (dropout4) at a ragged and a large shape."""
import numpy as np
import pytest

import ktile
from ktile.ops.dropout.reference import dropout4
from ktile.ops.rand.reference import rand4
from rand4_kernels import draw4_flat, draw4_row, offsets_case

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]


@pytest.mark.parametrize("kernel", [draw4_flat, draw4_row], ids=["flat", "row"])
@pytest.mark.parametrize("seed", [0, 1234, -7])
def test_draws_match_the_reference(kernel, seed):
    offs = offsets_case(seed=abs(seed))
    o = torch.full(offs.shape, float("nan"), device="cuda")
    kernel(torch.from_numpy(offs).cuda(), o, seed)
    np.testing.assert_array_equal(o.cpu().numpy(), rand4(seed, offs))


@pytest.mark.parametrize("shape,dtype", [((37, 90), torch.float32), ((4096, 4096), torch.bfloat16),
                                         ((3, 5, 70), torch.float16)], ids=str)
def test_dropout_matches_its_reference(shape, dtype):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(3)).to(dtype)
    got = ktile.ops.dropout(x.cuda(), 0.1, 1234).cpu()
    want, keep = dropout4(x.float().numpy(), 0.1, 1234)
    assert torch.equal(got, torch.from_numpy(want).to(dtype))
    assert abs(keep.mean() - 0.9) < 0.05
