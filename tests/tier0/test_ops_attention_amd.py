"""`ktile.ops.scaled_dot_product_attention` on the CPU interpreter traced for the AMD targets
(issue #12): the op routes gfx950 and gfx1100 to `attention_amd` (ktile/ops/attention/
prefill_amd.py: K and Vᵀ tiles double-buffered in LDS, the masks outside the steady-state
loop), which matches the float64 reference at ragged lengths (L and S no multiple of the
block's rows or the key tile), causal and not, GQA, L != S, D 64 and 128, bf16 and fp16.
Each case reaches the steady-state loop (a pair of unmasked key tiles) and the tail."""
import numpy as np
import pytest
import torch

import ktile.ops
from ktile.ops.attention import op
from ktile.ops.attention.reference import attention as reference, tolerance

sdpa = ktile.ops.scaled_dot_product_attention


def inputs(b, h, h_kv, n_q, n_k, d, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(shape, generator=g).to(dtype)
                 for shape in ((b, h, n_q, d), (b, h_kv, n_k, d), (b, h_kv, n_k, d)))


# (target, batch, heads, kv heads, L, S, D, dtype, causal, scale)
CASES = [("gfx950", 1, 4, 2, 100, 100, 64, torch.bfloat16, True, None),
         ("gfx950", 2, 2, 1, 45, 150, 128, torch.float16, False, 0.3),
         ("gfx1100", 1, 2, 2, 70, 70, 128, torch.bfloat16, True, None),
         ("gfx1100", 1, 2, 1, 130, 97, 64, torch.bfloat16, False, None)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-L{c[4]}-S{c[5]}-D{c[6]}-{c[8]}")
def test_amd_kernel_matches_the_reference_at_ragged_lengths(monkeypatch, case):
    target, b, h, h_kv, n_q, n_k, d, dtype, causal, scale = case
    monkeypatch.setenv("KTILE_TARGET", target)
    route = op.route_for(d, causal, n_q, None)
    assert route.kernel == "attention_amd" and target in route.targets
    q, k, v = inputs(b, h, h_kv, n_q, n_k, d, dtype)
    o = sdpa(q, k, v, is_causal=causal, scale=scale, enable_gqa=h != h_kv)
    assert o.shape == q.shape and o.dtype == dtype
    want = reference(*(t.float().numpy() for t in (q, k, v)), causal, scale)
    err = np.abs(o.float().numpy() - want).max()
    assert err <= tolerance(v.float().numpy()), err


def test_every_amd_target_has_a_route_for_each_head_dim_and_mask():
    for target in op.AMD_TARGETS:
        for d in op.HEAD_DIMS:
            for causal in (False, True):
                route = op.route_for(d, causal, 64, target)
                assert route.kernel == "attention_amd", (target, d, causal)
                assert route.constants["D"] == d and route.constants["CAUSAL"] == causal
