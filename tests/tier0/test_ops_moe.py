"""ktile.ops.moe_align_block_size, moe_grouped_gemm and fused_moe on CPU tensors (the
interpreter) against their references: the layout against its definition (vLLM's semantics),
the grouped GEMM at ragged tokens, N and K (K not a multiple of any K tile) with top-k 2, each
shipped block size, routed weights or not, an expert of id -1 left out, out=; the chain against
the float64 reference, whole and stage by stage; refusals naming the parameter and the fix."""
import numpy as np
import pytest

import ktile.ops as ops
from ktile import dtypes
from ktile.errors import InputError
from ktile.ops import _library as lib
from ktile.ops.moe import align, config, fused
from ktile.ops.moe.reference import fused_moe as fused_reference, fused_tolerance
from ktile.ops.moe.reference import gemm_tolerance, grouped_gemm, stage_errors

from bad_inputs import refused

torch = pytest.importorskip("torch")

EXPERTS, TOP_K, K, N = 6, 2, 72, 40


def routing(tokens: int, experts: int = EXPERTS, top_k: int = TOP_K, seed: int = 5):
    """(topk_weights fp32, topk_ids int64) of a seeded softmax router."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(tokens, experts, generator=gen).softmax(-1).topk(top_k)


@pytest.mark.parametrize("tokens,experts,top_k,block_m",
                         [(1, 128, 8, 16), (5, 4, 2, 16), (37, 8, 2, 32), (300, 16, 8, 16)])
def test_align_matches_the_layouts_definition(tokens, experts, top_k, block_m):
    _, ids = routing(tokens, experts, top_k)
    sorted_ids, expert_ids, padded = ops.moe_align_block_size(ids, experts, block_m)
    want_ids, want_experts, want_padded = align.reference(ids, experts, block_m)
    live = int(padded)
    assert live == want_padded
    assert sorted_ids[:live].tolist() == want_ids
    assert expert_ids[:live // block_m].tolist() == want_experts
    assert (sorted_ids[live:] == ids.numel()).all() and (expert_ids[live // block_m:] == -1).all()
    assert sorted_ids.numel() == align.capacity(ids.numel(), experts, block_m)


def gemm_case(tokens: int, block_m: int, routed: bool, n: int = N):
    x = lib.random((tokens, K), 1, "bf16")
    w = lib.random((EXPERTS, n, K), 2, "bf16")
    weights, ids = routing(tokens)
    layout = ops.moe_align_block_size(ids, EXPERTS, block_m)
    return x, w, weights, ids, layout


@pytest.mark.parametrize("block_m", config.BLOCK_MS)
@pytest.mark.parametrize("tokens,routed", [(1, False), (3, True), (19, True), (150, True)])
def test_grouped_gemm_matches_the_reference(tokens, block_m, routed):
    x, w, weights, ids, layout = gemm_case(tokens, block_m, routed)
    got = ops.moe_grouped_gemm(x, w, *layout, weights, top_k=TOP_K, mul_routed_weight=routed)
    assert got.shape == (tokens, TOP_K, N)
    xn, wn = x.float().numpy(), w.float().numpy()
    wts = weights.numpy() if routed else None
    want = grouped_gemm(xn, wn, ids.numpy(), wts, dtypes.bf16)
    tol = gemm_tolerance(xn, wn, want, wts, "bf16")
    assert tol < 0.05 * np.abs(want).max()           # the check can see a wrong expert
    assert lib.max_error(got.view(-1, N), want) <= tol


def test_a_block_of_expert_minus_one_is_left_as_it_was():
    x, w, weights, ids, (sorted_ids, expert_ids, padded) = gemm_case(7, 16, False)
    dropped = expert_ids.clone()
    dropped[0] = -1                                   # vLLM's mark: not this rank's expert
    out = torch.full((7, TOP_K, N), 3.0, dtype=torch.bfloat16)
    ops.moe_grouped_gemm(x, w, sorted_ids, dropped, padded, top_k=TOP_K, out=out)
    full = ops.moe_grouped_gemm(x, w, sorted_ids, expert_ids, padded, top_k=TOP_K)
    first = sorted_ids[:16]
    left = first[first < ids.numel()].long()
    assert (out.view(-1, N)[left] == 3.0).all()
    kept = torch.ones(ids.numel(), dtype=torch.bool)
    kept[left] = False
    assert torch.equal(out.view(-1, N)[kept], full.view(-1, N)[kept])


def test_fused_moe_matches_the_chain_reference():
    tokens, hidden, inter = 9, 72, 48
    x = lib.random((tokens, hidden), 3, "bf16")
    w13 = (lib.random((EXPERTS, 2 * inter, hidden), 4, "bf16").float() / hidden ** 0.5).bfloat16()
    w2 = (lib.random((EXPERTS, hidden, inter), 6, "bf16").float() / inter ** 0.5).bfloat16()
    weights, ids = routing(tokens)
    got = ops.fused_moe(x, w13, w2, weights, ids)
    args = [t.float().numpy() for t in (x, w13, w2)] + [weights.numpy()]
    want, stages = fused_reference(*args, ids.numpy(), dtypes.bf16)
    tol = fused_tolerance(*args, ids.numpy(), want, stages, "bf16")
    assert got.shape == (tokens, hidden) and got.dtype == torch.bfloat16
    assert tol < 0.25 * np.abs(want).max()
    assert lib.max_error(got, want) <= tol
    # stage by stage, each from the previous stage's actual output: about an ulp each
    parts = fused.stages(x, w13, w2, weights, ids)
    assert torch.equal(parts["out"], got)
    found = {k: v.float().numpy() for k, v in parts.items()}
    for stage in stage_errors(*args, ids.numpy(), found, dtypes.bf16):
        assert stage["ok"] and stage["tol_max"] < 0.05 * stage["want_max"], stage
    wrong = dict(found, y=found["y"].copy())
    wrong["y"][0] = found["y"][1]                     # slot 0 given slot 1's row
    assert [s["ok"] for s in stage_errors(*args, ids.numpy(), wrong, dtypes.bf16)] == \
        [True, True, False, False]


@pytest.mark.parametrize("tokens", [1, 2])
def test_the_decode_layout_gives_the_aligned_layouts_bits(tokens, monkeypatch):
    """One slot per block (align.direct_layout, taken at decode) against the sorted layout:
    the same bits (each slot's sums run in the same order), and the stages' checks pass."""
    experts, hidden, inter = 16, 40, 24
    x = lib.random((tokens, hidden), 3, "bf16")
    w13 = (lib.random((experts, 2 * inter, hidden), 4, "bf16").float() / 6).bfloat16()
    w2 = (lib.random((experts, hidden, inter), 6, "bf16").float() / 5).bfloat16()
    weights, ids = routing(tokens, experts, TOP_K)
    assert config.direct(tokens, ids.numel(), experts)
    direct = fused.stages(x, w13, w2, weights, ids.int())
    monkeypatch.setattr(config, "direct", lambda *shape: False)
    aligned = fused.stages(x, w13, w2, weights, ids)
    for name in direct:
        assert torch.equal(direct[name], aligned[name]), name
    args = [t.float().numpy() for t in (x, w13, w2)] + [weights.numpy()]
    found = {k: v.float().numpy() for k, v in direct.items()}
    assert all(s["ok"] for s in stage_errors(*args, ids.numpy(), found, dtypes.bf16))


def test_bad_inputs_name_the_parameter_and_the_fix():
    x, w, weights, ids, layout = gemm_case(3, 16, True)
    gemm = ops.moe_grouped_gemm
    refused(lambda: gemm(x, w[:, :, :8].contiguous(), *layout, top_k=TOP_K), "'w'", "K",
            kind=InputError)
    refused(lambda: gemm(x, w.half(), *layout, top_k=TOP_K), "'w'", "w.to(x.dtype)",
            kind=InputError)
    refused(lambda: gemm(x, w, layout[0].long(), *layout[1:], top_k=TOP_K),
            "'sorted_token_ids'", "int32", "moe_align_block_size", kind=InputError)
    refused(lambda: gemm(x, w, layout[0][:-3], *layout[1:], top_k=TOP_K),
            "'sorted_token_ids'", "blocks of", kind=InputError)
    refused(lambda: gemm(x, w, *layout, top_k=0), "'top_k'", "topk_ids.shape[1]",
            kind=InputError)
    refused(lambda: gemm(x, w, *layout, None, top_k=TOP_K, mul_routed_weight=True),
            "'topk_weights'", "float32", kind=InputError)
    refused(lambda: gemm(x, w, *layout, top_k=TOP_K, out=torch.empty(3, N)),
            "'out'", "torch.empty", kind=InputError)
    refused(lambda: ops.moe_align_block_size(ids, EXPERTS, 64), "'block_m'", "block_m=16",
            kind=InputError)
    refused(lambda: ops.moe_align_block_size(ids.float(), EXPERTS, 16), "'topk_ids'",
            "int32", kind=InputError)
    w13 = lib.random((EXPERTS, 2 * 8, K), 7, "bf16")
    refused(lambda: ops.fused_moe(x, w13, w, weights, ids), "'w2'", "[E, H, I]",
            kind=InputError)
    w2 = lib.random((EXPERTS, K, 8), 8, "bf16")
    refused(lambda: ops.fused_moe(x, w13, w2, weights[:2], ids), "'topk_weights'",
            kind=InputError)


def test_the_registered_ops_pass_opcheck():
    x, w, weights, ids, layout = gemm_case(3, 16, True)
    args = (x, w, *layout, weights.contiguous(), TOP_K, True)
    torch.library.opcheck(torch.ops.ktile.moe_grouped_gemm.default, args,
                          test_utils=("test_schema", "test_faketensor"))
    out = torch.empty(3, TOP_K, N, dtype=torch.bfloat16)
    torch.library.opcheck(torch.ops.ktile.moe_grouped_gemm_out.default, (*args, out),
                          test_utils=("test_schema", "test_faketensor"))
