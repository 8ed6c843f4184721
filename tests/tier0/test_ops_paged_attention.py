"""ktile.ops.paged_attention_decode on CPU tensors (the interpreter) against its float64
reference (issue #12): ragged lengths (not multiples of the 16-token block, a length of 0 and
of 1), GQA groups of 1, 4 and 18 (two 16-head chunks), head sizes 64 and 128, bf16 and fp16,
the split form (partials and the combine kernel) and the unsplit one, out=, the scale, stale
NaN in the cache's unused rows; the routing table's choice; refusals naming the parameter."""
import pytest
import torch

import ktile
from ktile.errors import InputError
from ktile.ops import _library as lib
from ktile.ops.paged_attention import cases
from ktile.ops.paged_attention.op import TABLE, route_for
from bad_inputs import refused

decode = ktile.ops.paged_attention_decode


def unsplit(d: int):
    """The unsplit route of head size `d` for the interpreter's target (gfx1100 unless
    KTILE_TARGET says otherwise)."""
    from ktile.config import default_target
    return next(r for r in TABLE.routes if r.constants["D"] == d and not r.constants["SPLIT"]
                and default_target() in r.targets)


@pytest.mark.parametrize("lengths,heads,kv_heads,d,dtype", [
    ([37, 5, 50], 8, 2, 64, torch.bfloat16),         # split: 8 pages a partition
    ([200, 1, 0], 4, 1, 128, torch.bfloat16),         # 2 partitions, a length of 1 and of 0
    ([20, 33], 36, 2, 64, torch.float16),             # group 18: two chunks of 16 heads
], ids=str)
def test_matches_the_reference(lengths, heads, kv_heads, d, dtype):
    case = cases.make_case(lengths, heads, kv_heads, d, dtype=dtype, seed=len(lengths))
    assert route_for(d, len(lengths) * kv_heads, case.block_tables.shape[1] * 16,
                     None).constants["SPLIT"]
    got = decode(*case.args)
    assert got.shape == case.query.shape and got.dtype == dtype
    err, tol = cases.error(case, got)
    assert err <= tol, (err, tol)


def test_unsplit_route_and_out_and_scale():
    """The one-block-a-pair kernel (pinned: the table takes it from 2048 pairs) writes out=,
    with a scale of its own; the split form gives the same within the tolerance."""
    case = cases.make_case([45, 17, 3], 12, 4, 64, seed=4)
    out = torch.full_like(case.query, float("nan"))
    with lib.pinned(TABLE, unsplit(64)):
        assert decode(*case.args, scale=0.3, out=out) is out
    err, tol = cases.error(case, out, scale=0.3)
    assert err <= tol, (err, tol)
    err, _ = cases.error(case, decode(*case.args, scale=0.3), scale=0.3)
    assert err <= tol


@pytest.mark.parametrize("kernel", ["paged_decode_streams", "paged_decode_ring"])
@pytest.mark.parametrize("lengths,heads,kv_heads,d,constants", [
    # a partition of 3 pages under 4 warps of 1-page steps: warp 3 has no page; 2 partitions
    ([37, 0, 1], 8, 2, 64, {"WARPS": 4, "PAGES": 1, "PART_PAGES": 3, "SPLIT": True}),
    # 2-page steps over 5-page partitions: a step's second page is the next partition's
    # (the ring 3 deep)
    ([150, 70], 8, 2, 64, {"WARPS": 2, "PAGES": 2, "STAGES": 3, "PART_PAGES": 5,
                           "SPLIT": True}),
    # unsplit, group 18 (two chunks), a step running past the sequence's last page
    ([45, 17], 36, 2, 64, {"WARPS": 2, "PAGES": 3, "PART_PAGES": 1 << 20, "SPLIT": False}),
    # D 128 (traced for sm_90a: gfx1100's 256 VGPRs do not hold a whole head a warp)
    ([70, 300], 8, 1, 128, {"WARPS": 3, "PAGES": 1, "PART_PAGES": 4, "SPLIT": True}),
], ids=str)
def test_sm90a_kernels_match_the_reference(monkeypatch, kernel, lengths, heads, kv_heads, d,
                                           constants):
    """sm_90a's paged_decode_streams (pages in registers) and paged_decode_ring (pages copied
    to shared memory STAGES steps ahead) at pinned constants (PAGES the streams kernel's alone,
    STAGES the ring's), run through op.launch as the benchmark's variants are: idle warps,
    steps crossing the partition's end and the sequence's, an odd count of ring steps, a
    3-deep ring, stale NaN in unused rows."""
    from ktile.ops.paged_attention.op import launch
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")
    case = cases.make_case(lengths, heads, kv_heads, d, seed=d + len(lengths))
    out = torch.full_like(case.query, float("nan"))
    own = {"paged_decode_ring": "PAGES", "paged_decode_streams": "STAGES"}[kernel]
    constants = {k: v for k, v in constants.items() if k != own}
    launch(kernel, {"D": d, **constants}, *case.args, 0.2, out)
    err, tol = cases.error(case, out, scale=0.2)
    assert err <= tol, (err, tol)


def test_sm90a_routes_take_the_ring_kernel():
    for pairs, context in ((8, 32768), (128, 4096), (2048, 512)):
        for d in (64, 128):
            assert route_for(d, pairs, context, "sm_90a").kernel == "paged_decode_ring"
            assert route_for(d, pairs, context, "gfx1100").kernel == "paged_decode"


def test_routes_split_few_pairs_and_refuse_cdna():
    assert route_for(128, 8, 32768, "sm_90a").constants["PART_PAGES"] == 64
    assert route_for(128, 8, 4096, "sm_90a").constants["PART_PAGES"] == 16
    assert route_for(128, 128, 4096, "sm_90a").constants["PART_PAGES"] == 128
    assert route_for(128, 128, 4096, "gfx1100").constants["PART_PAGES"] == 32
    assert route_for(128, 32, 512, "sm_90a").constants["PART_PAGES"] == 8
    assert not route_for(128, 2048, 4096, "sm_90a").constants["SPLIT"]
    refused(lambda: route_for(128, 8, 4096, "gfx950"), "gfx950", "MMA needs 32",
            kind=InputError)


def test_torch_op_is_registered():
    case = cases.make_case([19], 4, 2, 64, seed=2)
    got = torch.ops.ktile.paged_attention_decode(*case.args, 0.125)
    err, tol = cases.error(case, got, scale=0.125)
    assert err <= tol


def test_refusals_name_the_parameter():
    c = cases.make_case([19, 4], 8, 2, 64, seed=3)
    q, k, v, bt, lens = c.args
    refused(lambda: decode(q.float(), k, v, bt, lens), "'query'", "float32", kind=InputError)
    refused(lambda: decode(q, k.half(), v.half(), bt, lens), "'key_cache'", "query's dtype",
            kind=InputError)
    refused(lambda: decode(q, k, v[..., :32].contiguous(), bt, lens), "'value_cache'", "shape",
            kind=InputError)
    refused(lambda: decode(q[..., :32].contiguous(), k[..., :32].contiguous(),
                           v[..., :32].contiguous(), bt, lens), "head size 32", kind=InputError)
    refused(lambda: decode(q[:, :3].contiguous(), k, v, bt, lens), "3 heads", "kv_heads",
            kind=InputError)
    refused(lambda: decode(q, k.view(-1, 8, 2, 64), v.view(-1, 8, 2, 64), bt, lens),
            "blocks of 8", "16", kind=InputError)
    refused(lambda: decode(q, k, v, bt.long(), lens), "'block_tables'", "int32",
            kind=InputError)
    refused(lambda: decode(q, k, v, bt, lens[:1]), "'seq_lens'", "one per sequence",
            kind=InputError)
    refused(lambda: decode(q, k, v, bt.t(), lens), "'block_tables'", "contiguous",
            kind=InputError)
    refused(lambda: decode(q, k, v, bt, lens, scale=float("inf")), "'scale'", "finite",
            kind=InputError)
    refused(lambda: decode(q, k, v, bt, lens, out=q), "'out'", "shares memory",
            kind=InputError)


def test_benchmark_case_checks_then_times(monkeypatch):
    """benchmarks/paged_decode.py's run_case on the interpreter, the timer faked: ktile is
    checked against torch (pages gathered, SDPA) before it is timed, and the copy's GB/s
    count its read and write."""
    import importlib.util
    import pathlib
    from ktile.bench.timing import Timing
    path = pathlib.Path(__file__).parents[2] / "benchmarks" / "paged_decode.py"
    spec = importlib.util.spec_from_file_location("paged_decode_bench", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.setattr(bench, "triton_decode", lambda: None)
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")        # the ring is sm_90a's
    timer = lambda fn: (fn(), Timing(0.01, 0.0, 1))[1]       # noqa: E731
    row = bench.run_case(torch, {"requests": 2, "context": 40, "d": 64}, False, "cpu", timer,
                         extra=["KERNEL=ring,WARPS=2,PART_PAGES=0", "D128:WARPS=8"])
    assert row["ktile"]["correct"] and row["ktile"]["max_error"] <= row["tolerance"]
    assert row["ktile"]["pct_of_copy"] == pytest.approx(50.0)
    assert "ktile" in bench.show(row)
    ring = row["constants:KERNEL=ring,WARPS=2,PART_PAGES=0"]      # checked, then timed
    assert ring["kernel"] == "paged_decode_ring" and ring["correct"] and "us" in ring
    assert ring["constants"] == {"D": 64, "WARPS": 2, "PART_PAGES": 1 << 20, "SPLIT": False}
    assert "constants:D128:WARPS=8" not in row                  # for head size 128 only
    assert "paged_decode_ring" in bench.show_variants(row)[0]
    with pytest.raises(SystemExit, match="BK"):
        bench.parse_constants("BK=64")
