"""ktile.ops.paged_attention_decode on the GPU (tier 3, skipped without one) against its
float64 reference (issue #12): ragged lengths (not multiples of 16, a length of 1 and of 0),
shuffled blocks, stale NaN in the cache's unused rows, GQA 32/8, 8/1 and a group of 18 (two
16-head chunks), head sizes 64 and 128, bf16 and fp16; every route of the table pinned (each
split form with its combine, and the unsplit one); the split form twice gives the same bits
(no atomics); and a long context checked against torch (pages gathered, SDPA)."""
import pytest

from ktile.ops import _library as lib

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

# (lengths, heads, kv heads, head size, dtype)
SHAPES = [([1000, 37, 1, 0, 513], 32, 8, 128, torch.bfloat16),
          ([77, 300, 16], 8, 1, 64, torch.float16),
          ([129, 2049], 36, 2, 128, torch.bfloat16),
          ([4097] * 3, 32, 8, 64, torch.bfloat16)]


def routes_for(d: int) -> list:
    from ktile.ops.paged_attention.op import TABLE
    return [r for r in TABLE.routes if r.constants["D"] == d]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{len(s[0])}seqs-{s[1]}-{s[2]}-{s[3]}")
def test_every_route_matches_the_reference(shape):
    import ktile.ops
    from ktile.ops.paged_attention import cases
    lengths, heads, kv_heads, d, dtype = shape
    case = cases.make_case(lengths, heads, kv_heads, d, dtype=dtype, device="cuda", seed=d)
    from ktile.ops.paged_attention.op import TABLE
    for route in routes_for(d):
        with lib.pinned(TABLE, route):
            got = ktile.ops.paged_attention_decode(*case.args)
            again = ktile.ops.paged_attention_decode(*case.args)
        err, tol = cases.error(case, got)
        assert err <= tol, (route, err, tol)
        assert torch.equal(got, again), route
    err, tol = cases.error(case, ktile.ops.paged_attention_decode(*case.args, scale=0.05),
                           scale=0.05)
    assert err <= tol


def test_long_context_matches_torch():
    import ktile.ops
    from ktile.ops.paged_attention import cases
    case = cases.make_case([32768, 32768], 32, 8, 128, device="cuda", seed=3)
    got = ktile.ops.paged_attention_decode(*case.args)
    want = cases.torch_reference(case)
    tol = float(torch.nan_to_num(case.value_cache).abs().max()) * 2.0 ** -6 + 1e-3
    assert float((got.float() - want.float()).abs().max()) <= tol
