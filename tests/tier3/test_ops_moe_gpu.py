"""The MoE ops on the GPU (tier 3, skipped without one) against the float64 references: the
layout against its definition, the grouped GEMM at ragged tokens, N and K with top-k 2 and 8,
each block size, routed weights or not, fp16 and bf16; fused_moe at Qwen3-30B-A3B's shapes
(hidden 2048, intermediate 768, 128 experts, top-8) at 1 to 256 tokens and at a ragged small
layer, stage by stage (reference.stage_errors); and in a CUDA-graph replay (the layout needs
no host sync). tests/tier3/test_ops_gpu.py runs the op's `case` over its wide grid too."""
import functools

import numpy as np
import pytest

from ktile import dtypes
from ktile.ops import _library as lib
from ktile.ops.moe import align, config
from ktile.ops.moe.reference import stage_errors
from ktile.ops.moe.reference import gemm_tolerance, grouped_gemm

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

TORCH = {"bf16": torch.bfloat16, "fp16": torch.float16}


def routing(tokens: int, experts: int, top_k: int, seed: int = 5):
    gen = torch.Generator().manual_seed(seed)
    weights, ids = torch.randn(tokens, experts, generator=gen).softmax(-1).topk(top_k)
    return weights.cuda(), ids.cuda()


@pytest.mark.parametrize("tokens,experts,top_k,block_m",
                         [(1, 128, 8, 16), (37, 8, 2, 32), (1000, 128, 8, 16)])
def test_align_matches_its_definition(tokens, experts, top_k, block_m):
    import ktile.ops as ops
    _, ids = routing(tokens, experts, top_k)
    sorted_ids, expert_ids, padded = ops.moe_align_block_size(ids, experts, block_m)
    want_ids, want_experts, want_padded = align.reference(ids.cpu(), experts, block_m)
    live = int(padded)
    assert live == want_padded and sorted_ids[:live].tolist() == want_ids
    assert expert_ids[:live // block_m].tolist() == want_experts


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("block_m", config.BLOCK_MS)
@pytest.mark.parametrize("tokens,experts,top_k,n,k,routed",
                         [(1, 128, 8, 1536, 2048, False), (3, 8, 2, 70, 200, True),
                          (77, 16, 8, 300, 520, True), (256, 128, 8, 2048, 768, True)])
def test_grouped_gemm_matches_the_reference(tokens, experts, top_k, n, k, routed, block_m,
                                            dtype):
    import ktile.ops as ops
    x = lib.random((tokens, k), 1, dtype, "cuda")
    w = lib.random((experts, n, k), 2, dtype, "cuda")
    weights, ids = routing(tokens, experts, top_k)
    layout = ops.moe_align_block_size(ids, experts, block_m)
    got = ops.moe_grouped_gemm(x, w, *layout, weights, top_k=top_k, mul_routed_weight=routed)
    xn, wn = x.float().cpu().numpy(), w.float().cpu().numpy()
    wts = weights.cpu().numpy() if routed else None
    want = grouped_gemm(xn, wn, ids.cpu().numpy(), wts, getattr(dtypes, dtype))
    tol = gemm_tolerance(xn, wn, want, wts, dtype)
    assert lib.max_error(got.view(-1, n), want) <= tol


@functools.cache
def expert_weights(hidden: int, inter: int, experts: int) -> tuple:
    """w13 and w2 made once per shape (Qwen3's take seconds on the CPU)."""
    w13 = (lib.random((experts, 2 * inter, hidden), 4, "bf16") / hidden ** 0.5).bfloat16()
    w2 = (lib.random((experts, hidden, inter), 6, "bf16") / inter ** 0.5).bfloat16()
    return w13.cuda(), w2.cuda()


def qwen3_layer(tokens: int, hidden=2048, inter=768, experts=128, top_k=8):
    x = lib.random((tokens, hidden), 3, "bf16", "cuda")
    w13, w2 = expert_weights(hidden, inter, experts)
    weights, ids = routing(tokens, experts, top_k)
    return x, w13, w2, weights, ids


def check_fused(got, x, w13, w2, weights, ids):
    """fused_moe's result is its stages' (the same kernels: the same bits), and each stage is
    within one ulp plus fp32 accumulation of its float64 reference from the previous stage's
    actual output (reference.stage_errors); each tolerance far below the stage's magnitude,
    so a wrong expert, slot or weight shows."""
    from ktile.ops.moe import fused
    parts = fused.stages(x, w13, w2, weights, ids)
    assert torch.equal(got, parts["out"])
    args = [t.float().cpu().numpy() for t in (x, w13, w2, weights)]
    found = {k: v.float().cpu().numpy() for k, v in parts.items()}
    for stage in stage_errors(*args, ids.cpu().numpy(), found, dtypes.bf16):
        assert stage["tol_max"] < 0.05 * stage["want_max"], stage
        assert stage["ok"], stage


@pytest.mark.parametrize("tokens", [1, 4, 16, 64, 256])
def test_fused_moe_at_qwen3_shapes(tokens):
    import ktile.ops as ops
    layer = qwen3_layer(tokens)
    check_fused(ops.fused_moe(*layer), *layer)


def test_fused_moe_at_a_ragged_layer():
    import ktile.ops as ops
    layer = qwen3_layer(29, hidden=200, inter=72, experts=12, top_k=3)
    check_fused(ops.fused_moe(*layer), *layer)


def test_fused_moe_replays_from_a_cuda_graph():
    import ktile.ops as ops
    x, w13, w2, weights, ids = qwen3_layer(4)
    ops.fused_moe(x, w13, w2, weights, ids)            # builds outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = ops.fused_moe(x, w13, w2, weights, ids)
    new_weights, new_ids = routing(4, 128, 8, seed=9)
    weights.copy_(new_weights)
    ids.copy_(new_ids)
    graph.replay()
    torch.cuda.synchronize()
    check_fused(out, x, w13, w2, weights, ids)


def test_the_decode_layout_made_inside_a_capture_is_not_kept():
    """At 3 tokens (24 slots: the decode layout) first seen inside a capture: its constant
    arrays are made by captured kernels (run only at replay), so they are not cached; an eager
    call afterwards makes its own and gives the replay's bits."""
    import ktile.ops as ops
    from ktile.ops.moe import align
    warm = qwen3_layer(4)
    ops.fused_moe(*warm)                               # builds outside the capture
    x, w13, w2, weights, ids = qwen3_layer(3)
    assert config.direct(3, ids.numel(), w13.shape[0])
    align._DIRECT.clear()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = ops.fused_moe(x, w13, w2, weights, ids)
    assert not align._DIRECT
    graph.replay()
    torch.cuda.synchronize()
    check_fused(out, x, w13, w2, weights, ids)
    assert torch.equal(ops.fused_moe(x, w13, w2, weights, ids), out)
