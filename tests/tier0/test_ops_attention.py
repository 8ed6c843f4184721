"""`ktile.ops.scaled_dot_product_attention` on the CPU interpreter traced for sm_90a (issue
#12): the warp-specialised prefill kernel (producer warpgroup, two consumer warpgroups, K and
Vᵀ stages) against the float64 reference at ragged lengths (not multiples of the 128-row
block or the 64-key tile), causal and not, GQA, D 64 and 128, bf16 and fp16, L != S and a
given scale; bad inputs refused before anything runs."""
import numpy as np
import pytest
import torch

import ktile.ops
from ktile.errors import InputError
from ktile.ops.attention.reference import attention as reference, tolerance

sdpa = ktile.ops.scaled_dot_product_attention


@pytest.fixture
def hopper(monkeypatch):
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")


def inputs(b, h, h_kv, n_q, n_k, d, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(shape, generator=g).to(dtype)
                 for shape in ((b, h, n_q, d), (b, h_kv, n_k, d), (b, h_kv, n_k, d)))


# (batch, heads, kv heads, L, S, D, dtype, causal, scale)
CASES = [(1, 4, 2, 70, 70, 64, torch.bfloat16, True, None),
         (1, 2, 1, 150, 150, 128, torch.float16, False, None),
         (2, 2, 2, 45, 45, 64, torch.bfloat16, False, 0.3),
         (1, 2, 1, 40, 100, 128, torch.bfloat16, True, None),
         (1, 2, 1, 300, 100, 64, torch.bfloat16, True, 0.3)]     # L > S: rows past S see all


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"L{c[3]}-S{c[4]}-D{c[5]}-{c[7]}")
def test_matches_the_reference_at_ragged_lengths(hopper, case):
    b, h, h_kv, n_q, n_k, d, dtype, causal, scale = case
    q, k, v = inputs(b, h, h_kv, n_q, n_k, d, dtype)
    o = sdpa(q, k, v, is_causal=causal, scale=scale, enable_gqa=h != h_kv)
    assert o.shape == q.shape and o.dtype == dtype
    want = reference(*(t.float().numpy() for t in (q, k, v)), causal, scale)
    err = np.abs(o.float().numpy() - want).max()
    assert err <= tolerance(v.float().numpy()), err


def test_agrees_with_torch_sdpa(hopper):
    q, k, v = inputs(1, 2, 1, 33, 33, 64, torch.bfloat16, seed=3)
    o = sdpa(q, k, v, is_causal=True, enable_gqa=True)
    kv = [t.float().repeat_interleave(2, dim=1) for t in (k, v)]
    want = torch.nn.functional.scaled_dot_product_attention(q.float(), *kv, is_causal=True)
    assert (o.float() - want).abs().max() <= tolerance(v.float().numpy())


@pytest.mark.parametrize("change, message", [
    (lambda q, k, v: (q[..., :32].contiguous(), k[..., :32].contiguous(),
                      v[..., :32].contiguous()), "head dim 32"),
    (lambda q, k, v: (q.transpose(1, 2), k, v), "not contiguous"),
    (lambda q, k, v: (q, k.float(), v.float()), "holds float32"),
    (lambda q, k, v: (q, k, v[:, :, :5].contiguous()), "'v' has shape"),
])
def test_bad_inputs_are_refused(hopper, change, message):
    q, k, v = change(*inputs(1, 4, 2, 16, 16, 64, torch.bfloat16))
    with pytest.raises(InputError, match=message):
        sdpa(q, k, v, enable_gqa=True)


def test_gqa_needs_enable_gqa_and_a_multiple(hopper):
    q, k, v = inputs(1, 4, 2, 16, 16, 64, torch.bfloat16)
    with pytest.raises(InputError, match="enable_gqa=True"):
        sdpa(q, k, v)
    q3 = torch.zeros(1, 3, 16, 64, dtype=torch.bfloat16)
    with pytest.raises(InputError, match="not a multiple"):
        sdpa(q3, k, v, enable_gqa=True)
    with pytest.raises(InputError, match="'scale'"):
        sdpa(q, k, v, enable_gqa=True, scale=float("nan"))


def test_a_target_with_no_route_is_refused_naming_the_kernels_target():
    """Every target ktile knows has a route now (attention_amd on AMD); a name no route
    lists is still refused, naming sm_90a's kernel."""
    from ktile.ops.attention import op
    with pytest.raises(InputError, match="sm_90a"):
        op.route_for(64, False, 16, "gfx90a")


def test_the_kernel_in_turns_matches_too(monkeypatch):
    """Traced for a target without warp specialisation (gfx1100), every warp loads and
    computes in turn: the same results (not routed: the op refuses such targets). The VT
    form: gfx1100 has no transposed-B MMA from shared memory for `p @ sv`."""
    import math
    from ktile.ops.attention import op, prefill_ws
    monkeypatch.setenv("KTILE_TARGET", "gfx1100")
    q, k, v = inputs(1, 2, 1, 50, 50, 64, torch.bfloat16, seed=5)
    o = torch.full_like(q, float("nan"))
    prefill_ws.attention_ws("bf16")(q, k, op.transposed_values(v), o, 1 / math.sqrt(64),
                                    D=64, CAUSAL=True, VT=True)
    want = reference(*(t.float().numpy() for t in (q, k, v)), True)
    assert np.abs(o.float().numpy() - want).max() <= tolerance(v.float().numpy())


@pytest.mark.parametrize("constants", [{"VT": True, "LONGEST_FIRST": False},
                                       {"VT": False, "LONGEST_FIRST": False},
                                       {"VT": False, "LONGEST_FIRST": True},
                                       {"VT": False, "EXP2_FAST": True, "PINGPONG": 1}], ids=str)
def test_each_pinnable_form_matches(hopper, constants):
    """V read N-major (the route) or as Vᵀ (VT), the causal blocks in launch order or longest
    first: 3 query blocks of a causal L 300 with S 290 (ragged: the last V tile zero-filled)."""
    import math
    from ktile.ops.attention import op, prefill_ws
    q, k, v = inputs(1, 1, 1, 300, 290, 64, torch.bfloat16, seed=7)
    o = torch.full_like(q, float("nan"))
    route = op.route_for(64, True, 300, "sm_90a")
    kernel = prefill_ws.attention_ws("bf16")
    kernel(q, k, op.values_for(v, constants), o, 1 / math.sqrt(64),
           **{**route.constants, **constants})
    want = reference(*(t.float().numpy() for t in (q, k, v)), True)
    assert np.abs(o.float().numpy() - want).max() <= tolerance(v.float().numpy())


def test_overlap_keeps_the_older_p_v_in_flight_through_the_softmax():
    """OVERLAP: step j issues S_j = Q·K_jᵀ, then P_(j-1)·V_(j-1); the waits pass makes the
    softmax wait for S_j alone (`wgmma.wait_group 1`) and the O rescale for both (0). Both
    MMAs read TMA-written stages only: no proxy fence before either."""
    from ktile.ops.attention import op, prefill_ws
    constants = {**op.route_for(128, False, 128, "sm_90a").constants, "OVERLAP": True}
    source = prefill_ws.attention_ws("bf16").trace("sm_90a", **constants).source()
    loop = source[source.index("wait_full("):source.index("release<")]
    marks = ["kt::mma_ABt_shared<8, false>(", "kt::mma_AB_shared<8, false>(",
             "kt::wgmma_wait<1>()", "kt::row_max(", "kt::wgmma_wait<0>()"]
    places = [loop.find(mark) for mark in marks]
    assert -1 not in places and places == sorted(places), dict(zip(marks, places))


@pytest.mark.parametrize("causal", [False, True])
def test_overlap_matches_at_ragged_lengths(hopper, causal):
    """OVERLAP's extra step (K past the last tile: all -inf, P 0, rescale 1) and its first
    (P 0 times V tile 0) change nothing: 3 query blocks, S 290 (a ragged last V tile)."""
    import math
    from ktile.ops.attention import op, prefill_ws
    q, k, v = inputs(1, 2, 1, 300, 290, 128, torch.float16, seed=9)
    o = torch.full_like(q, float("nan"))
    constants = {**op.route_for(128, causal, 300, "sm_90a").constants, "OVERLAP": True}
    prefill_ws.attention_ws("fp16")(q, k, op.values_for(v, constants), o, 1 / math.sqrt(128),
                                    **constants)
    want = reference(*(t.float().numpy() for t in (q, k, v)), causal)
    assert np.abs(o.float().numpy() - want).max() <= tolerance(v.float().numpy())


@pytest.mark.parametrize("causal, overlap, pingpong", [(False, False, 1), (True, True, 1),
                                                       (False, False, 2), (True, False, 2)],
                         ids=["full-1", "causal-overlap-1", "full-2", "causal-2"])
def test_pingpong_matches_at_ragged_lengths(hopper, causal, overlap, pingpong):
    """PINGPONG: the two consumer warpgroups take turns at their MMAs on named barriers 1 and
    2 (1: a turn is S_j; 2: P_(j-1)·V and S_j). The interpreter spins each sync until the
    other warpgroup's arrivals complete its phase, so a turn never given, or one count off
    at the block's last step, is a deadlock here: 3 query blocks, S 290 (ragged)."""
    import math
    from ktile.ops.attention import op, prefill_ws
    q, k, v = inputs(1, 2, 1, 300, 290, 64, torch.bfloat16, seed=11)
    o = torch.full_like(q, float("nan"))
    constants = {**op.route_for(64, causal, 300, "sm_90a").constants, "PINGPONG": pingpong,
                 "OVERLAP": overlap}
    prefill_ws.attention_ws("bf16")(q, k, op.values_for(v, constants), o, 1 / math.sqrt(64),
                                    **constants)
    want = reference(*(t.float().numpy() for t in (q, k, v)), causal)
    assert np.abs(o.float().numpy() - want).max() <= tolerance(v.float().numpy())


@pytest.mark.parametrize("pingpong", [0, 2])
def test_three_consumer_warpgroups_match_at_ragged_lengths(hopper, pingpong):
    """BM 192 (D 64): three consumer warpgroups of 64 rows, 16 warps; PINGPONG passes the
    turn 0 -> 1 -> 2 -> 0 on barriers 1..3. Causal, 2 query blocks, S 290 (ragged)."""
    import math
    from ktile.ops.attention import op, prefill_ws
    q, k, v = inputs(1, 1, 1, 300, 290, 64, torch.bfloat16, seed=13)
    o = torch.full_like(q, float("nan"))
    constants = {**op.route_for(64, True, 300, "sm_90a").constants, "BM": 192, "WARPS": 16,
                 "PINGPONG": pingpong}
    with pytest.warns(hk_warning()):          # 144 of the 160 registers: close, not over
        prefill_ws.attention_ws("bf16")(q, k, op.values_for(v, constants), o,
                                        1 / math.sqrt(64), **constants)
    want = reference(*(t.float().numpy() for t in (q, k, v)), True)
    assert np.abs(o.float().numpy() - want).max() <= tolerance(v.float().numpy())


def hk_warning():
    from ktile.errors import KernelWarning
    return KernelWarning


def test_pingpong_2_with_overlap_is_refused(hopper):
    import math
    from ktile.errors import KtileError
    from ktile.ops.attention import op, prefill_ws
    q, k, v = inputs(1, 1, 1, 64, 64, 64, torch.bfloat16)
    constants = {**op.route_for(64, False, 64, "sm_90a").constants, "PINGPONG": 2,
                 "OVERLAP": True}
    with pytest.raises(KtileError, match="PINGPONG is 0, 1"):
        prefill_ws.attention_ws("bf16")(q, k, v, torch.empty_like(q), 1 / math.sqrt(64),
                                        **constants)


def test_bm_and_warps_that_do_not_match_are_refused(hopper):
    import math
    from ktile.errors import KtileError
    from ktile.ops.attention import op, prefill_ws
    q, k, v = inputs(1, 1, 1, 64, 64, 64, torch.bfloat16)
    constants = {**op.route_for(64, False, 64, "sm_90a").constants, "BM": 192}
    with pytest.raises(KtileError, match="WARPS 4 × \\(1 \\+ BM / 64\\)"):
        prefill_ws.attention_ws("bf16")(q, k, v, torch.empty_like(q), 1 / math.sqrt(64),
                                        **constants)


def test_pingpong_wraps_each_warpgroups_s_wgmma_in_its_turn():
    """A step syncs on the warpgroup's own barrier, issues S = Q·Kᵀ, arrives on the other's,
    then waits for S (the softmax runs while the other warpgroup's wgmmas do); warpgroup 1
    gives the first turn (an arrive on barrier 1 at step 0)."""
    from ktile.ops.attention import op, prefill_ws
    constants = {**op.route_for(128, False, 128, "sm_90a").constants, "PINGPONG": 1}
    source = prefill_ws.attention_ws("bf16").trace("sm_90a", **constants).source()
    loop = source[source.index("wait_full("):source.index("release<")]
    marks = ["kt::bar_arrive<1, 256>()", "kt::bar_sync<1, 256>()", "kt::bar_sync<2, 256>()",
             "kt::mma_ABt_shared<8, false>(", "kt::bar_arrive<2, 256>()",
             "kt::bar_arrive<1, 256>()", "kt::wgmma_wait<0>()", "kt::row_max("]
    places, start = [], 0
    for mark in marks:
        start = loop.find(mark, start)
        places.append(start)
    assert -1 not in places, dict(zip(marks, places))


@pytest.mark.parametrize("scale", [0.2, -0.3])
def test_fused_scale_matches_with_either_sign_of_the_scale(hopper, scale):
    """FUSED_SCALE: the row max of unscaled scores and the scale in the exp2's multiply-add,
    which needs scale ≥ 0; op.keys_for moves a negative one into k (q·(-k)ᵀ·|scale|)."""
    from ktile.ops.attention import op, prefill_ws
    q, k, v = inputs(1, 2, 1, 200, 190, 64, torch.bfloat16, seed=17)
    o = torch.full_like(q, float("nan"))
    constants = {**op.route_for(64, True, 200, "sm_90a").constants, "FUSED_SCALE": True,
                 "EXP2_FAST": True}
    keys, kernel_scale = op.keys_for(k, scale, constants)
    assert kernel_scale >= 0 and (keys is k) == (scale >= 0)
    prefill_ws.attention_ws("bf16")(q, keys, op.values_for(v, constants), o, kernel_scale,
                                    **constants)
    want = reference(*(t.float().numpy() for t in (q, k, v)), True, scale)
    assert np.abs(o.float().numpy() - want).max() <= tolerance(v.float().numpy())
