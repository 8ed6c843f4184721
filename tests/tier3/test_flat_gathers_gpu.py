"""The kernels that place flat tiles at a row hk.load_scalar reads, on an NVIDIA GPU (tier 3,
skipped without one): embedding_flat against F.embedding (ids inside the table) and zero rows
(ids outside, int64 ids of 2^31 and up); rope_neox_flat (few tokens) bit for bit against the
gather kernel (rope_neox_qk) it replaces there, and against the reference."""
import numpy as np
import pytest

import ktile
from ktile.ops.rotary import config as rotary_config
from ktile.ops.rotary import reference as R

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]


@pytest.mark.parametrize("tokens,hidden,dtype", [(1, 4096, torch.bfloat16),
                                                 (4099, 4096, torch.bfloat16),
                                                 (33, 5120, torch.float16),
                                                 (7, 768, torch.float32)], ids=str)
def test_embedding_flat(tokens, hidden, dtype):
    g = torch.Generator().manual_seed(4)
    weight = torch.randn(1000, hidden, generator=g).to(dtype).cuda()
    ids = torch.randint(0, 1000, (tokens,), generator=g)
    bad = torch.zeros(tokens, dtype=torch.bool)
    if tokens > 3:
        ids[:3] = torch.tensor([-1, 1000, 2 ** 32 + 2])
        bad[:3] = True
    out = ktile.ops.embedding(ids.cuda(), weight).cpu()
    want = torch.nn.functional.embedding(ids.clamp(0, 999).cuda(), weight).cpu()
    assert torch.equal(out[~bad], want[~bad])
    assert not out[bad].any()


@pytest.mark.parametrize("tokens,q_heads,k_heads,head,rot", [(1, 32, 8, 128, 128),
                                                             (32, 28, 4, 128, 128),
                                                             (5, 20, 4, 64, 32)], ids=str)
def test_rotary_flat_equals_the_gather_kernel(monkeypatch, tokens, q_heads, k_heads, head, rot):
    g = torch.Generator().manual_seed(5)
    positions = torch.randint(0, 4096, (tokens,), generator=g).cuda()
    cache = torch.from_numpy(R.cos_sin_cache(4096, rot)).cuda()
    q = torch.randn(tokens, q_heads * head, generator=g).to(torch.bfloat16).cuda()
    k = torch.randn(tokens, k_heads * head, generator=g).to(torch.bfloat16).cuda()
    flat_q, flat_k = q.clone(), k.clone()
    ktile.ops.rotary_embedding(positions, flat_q, flat_k, head, cache, True)
    monkeypatch.setattr(rotary_config, "FLAT_TOKENS", 0)
    ktile.ops.rotary_embedding(positions, q_g := q.clone(), k_g := k.clone(), head, cache, True)
    assert torch.equal(flat_q, q_g) and torch.equal(flat_k, k_g)
    want = R.rotary(positions.cpu().numpy(), q.float().cpu().numpy(), cache.cpu().numpy(),
                    head, True)
    assert np.max(np.abs(flat_q.float().cpu().numpy() - want)) <= R.tolerance(want, 8)
