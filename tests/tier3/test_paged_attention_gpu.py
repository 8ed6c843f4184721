"""ktile.ops.paged_attention_decode on the GPU (tier 3, skipped without one) against its
float64 reference (issue #12): ragged lengths (not multiples of 16, a length of 1 and of 0),
shuffled blocks, stale NaN in the cache's unused rows, GQA 32/8, 8/1 and a group of 18 (two
16-head chunks), head sizes 64 and 128, bf16 and fp16; every route of the table pinned (each
split form with its combine, and the unsplit one: sm_90a's paged_decode_ring and the AMD
targets' paged_decode, which runs on sm_90a too); the split form twice gives the same bits
(no atomics); the benchmark's variants (the streams kernel, the ring 3 deep and at 2 warps,
partitions that leave warps idle or cut a step) at pinned constants; and a long context
checked against torch (pages gathered, SDPA)."""
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


# (kernel, constants but D): the benchmark's --constants variants, ragged
VARIANTS = [("paged_decode_streams", {"WARPS": 4, "PAGES": 1, "PART_PAGES": 16, "SPLIT": True}),
            ("paged_decode_streams", {"WARPS": 2, "PAGES": 2, "PART_PAGES": 5, "SPLIT": True}),
            ("paged_decode_streams", {"WARPS": 4, "PAGES": 1, "PART_PAGES": 1 << 20,
                                      "SPLIT": False}),
            ("paged_decode_ring", {"WARPS": 2, "STAGES": 3, "PART_PAGES": 7, "SPLIT": True}),
            ("paged_decode_ring", {"WARPS": 4, "STAGES": 2, "PART_PAGES": 3, "SPLIT": True}),
            ("paged_decode_ring", {"WARPS": 4, "STAGES": 2, "PART_PAGES": 64, "SPLIT": True}),
            ("paged_decode_ring", {"WARPS": 4, "STAGES": 2, "PART_PAGES": 1 << 20,
                                   "SPLIT": False})]


# the streams kernel at D 128 holds one page a step (two pass 255 registers: refused)
PAIRS = [(shape, kernel, c) for shape in SHAPES for kernel, c in VARIANTS
         if not (kernel == "paged_decode_streams" and shape[3] == 128 and c["PAGES"] > 1)]


@pytest.mark.parametrize("shape,kernel,constants", PAIRS,
                         ids=lambda x: str(x) if isinstance(x, (str, dict)) else
                         f"{len(x[0])}seqs-{x[1]}-{x[2]}-{x[3]}")
def test_sm90a_kernels_at_pinned_constants(shape, kernel, constants):
    from ktile.ops.paged_attention import cases
    from ktile.ops.paged_attention.op import launch
    lengths, heads, kv_heads, d, dtype = shape
    case = cases.make_case(lengths, heads, kv_heads, d, dtype=dtype, device="cuda", seed=d)
    outs = []
    for _ in range(2):
        out = torch.full_like(case.query, float("nan"))
        launch(kernel, {"D": d, **constants}, *case.args, 0.07, out)
        outs.append(out)
    err, tol = cases.error(case, outs[0], scale=0.07)
    assert err <= tol, (kernel, constants, err, tol)
    assert torch.equal(outs[0], outs[1])
