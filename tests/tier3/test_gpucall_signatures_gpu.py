"""Alternating shapes on the GPU (tier 3, skipped without one): each GPU call keeps its last
signatures (docs/runtime.md), so calls whose token count changes every call take a kept
signature's parameter block. Its results match the reference at every call, and a CUDA graph
captured over two kept signatures of rms_norm replays what the eager calls computed."""
import pytest

from ktile.ops.rmsnorm.op import OP as RMS_NORM
from ktile.ops.rotary import reference as rotary_reference

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

TOKENS = (1, 32, 512, 1, 32, 512, 7)


def test_alternating_token_counts_match_the_reference_at_every_call():
    for rows in TOKENS:
        err, tol = RMS_NORM.check(rows, 4096, "bf16", "cuda")
        assert err <= tol, f"rms_norm at {rows} rows: {err} > {tol}"


def test_rotary_query_then_key_at_alternating_token_counts():
    """rotary_embedding runs one kernel on the query, then on the key: two signatures of one
    call at every step, and two more at the next token count."""
    import ktile.ops as ops
    head, rot, heads, kv_heads = 128, 128, 32, 8
    cache = torch.from_numpy(rotary_reference.cos_sin_cache(4096, rot)).cuda()
    for tokens in TOKENS:
        positions = torch.randint(0, 4096, (tokens,), device="cuda")
        q = torch.randn(tokens, heads * head, device="cuda").bfloat16()
        k = torch.randn(tokens, kv_heads * head, device="cuda").bfloat16()
        want = [rotary_reference.rotary(positions.cpu().numpy(), x.float().cpu().numpy(),
                                        cache.cpu().numpy(), head, True) for x in (q, k)]
        ops.rotary_embedding(positions, q, k, head, cache)
        for got, ref in zip((q, k), want):
            err = (got.float().cpu() - torch.from_numpy(ref)).abs().max().item()
            assert err <= rotary_reference.tolerance(ref), f"{tokens} tokens: {err}"


def test_a_graph_over_two_kept_signatures_replays_the_eager_results():
    import ktile.ops as ops
    w = torch.randn(4096, device="cuda").bfloat16()
    decode = torch.randn(8, 4096, device="cuda").bfloat16()
    prefill = torch.randn(200, 4096, device="cuda").bfloat16()
    want = (ops.rms_norm(decode, w, 1e-6), ops.rms_norm(prefill, w, 1e-6))   # both prepared
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        got = (ops.rms_norm(decode, w, 1e-6), ops.rms_norm(prefill, w, 1e-6),
               ops.rms_norm(decode, w, 1e-6))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(got[0], want[0]) and torch.equal(got[2], want[0])
    assert torch.equal(got[1], want[1])
