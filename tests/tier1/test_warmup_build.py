"""Warm-up, then nothing compiles (issue #14), on the CPU.

End to end with nvcc: `ktile.ops.warmup` of a few calls for sm_90a builds what they reach; the
same calls, made again the way a call on an sm_90a GPU gets its code objects (build-only mode),
ask the build cache for no key warm-up did not and run no compiler (`build_count`); the key set
makes the check hold whatever the disk cache held before the test.

Coverage, without compiling (a cold compile costs seconds on this 2-core machine): for a small
decoder model (sm_90a) and for every call of `CALLS` (every public op function in each of its
forms; sm_90a and gfx950), every code object the calls would load is in the list warm-up hands
to its compile step (the same generated source, so the same cache key). bf16, at most 16 rows:
the fewest shapes that reach every call's kernels."""
import importlib

import pytest

import build_gates

from ktile.runtime import build_count
from ktile.runtime.builds import build_keys, building

torch = pytest.importorskip("torch")
warm = importlib.import_module("ktile.ops.warmup")   # ktile.ops.warmup is the function
pytestmark = pytest.mark.tier1

MODEL = {"hidden_size": 256, "intermediate_size": 512, "vocab_size": 1000, "num_heads": 4,
         "num_kv_heads": 2, "head_dim": 64, "max_tokens": 16}
EVERY = {name: [(4, 128, 64) if call.inner else (4, 128)] for name, call in warm.CALLS.items()}


@pytest.fixture(scope="module")
def nvcc():
    build_gates.hopper()


COMPILED = {"rms_norm": [(1, 256)], "linear": [(1, 256, 256), (65, 256, 256)]}


def test_no_compile_after_warmup(nvcc):
    """End to end with nvcc, on a few calls (a row kernel; a skinny matmul and its split-K
    reduction; a tile matmul, with and without tensor-map copies where the trace has them)."""
    report = warm.warmup(COMPILED, target="sm_90a")
    assert report.calls == 3 and report.compiles + report.hits >= 3
    before, keys = build_count(), build_keys()
    with building("sm_90a"):
        for name, problems in COMPILED.items():
            for shape in problems:
                warm.call_shape(name, shape, torch.bfloat16)
    after = build_count() - before
    assert after.compiles == 0
    assert after.hits >= 3 and build_keys() == keys


def warmed_and_again(monkeypatch, given: dict, target: str, sizes: dict) -> tuple[list, list]:
    """The traces warm-up hands to its compile step (recorded, not compiled), and those the
    calls of `given`, made again as on a `target` GPU, would load."""
    builds = importlib.import_module("ktile.runtime.builds")
    warmed: list = []
    monkeypatch.setattr(builds, "build_traces", lambda traces, workers=None: warmed.extend(traces))
    report = warm.warmup(given, target=target)
    assert report.compiles == 0
    shapes = warm.model_shapes(given) if "max_tokens" in given else given
    again: list = []
    with building(target, compile=False, collect=again):
        for name, problems in shapes.items():
            for shape in problems:
                warm.call_shape(name, shape, torch.bfloat16, sizes)
    return warmed, again


def test_the_model_warms_up_every_code_object_its_calls_load(monkeypatch):
    warmed, again = warmed_and_again(monkeypatch, MODEL, "sm_90a", MODEL)
    sources = {t.source() for t in warmed}
    assert again and all(t.source() in sources for t in again)
    names = {t.name for t in again}
    # decode M 2..64 takes skinny_wgmma_nt since the eighth session (skinny_nt is pinnable only)
    assert {"matmul_gemv_nt", "matmul_skinny_wgmma_nt", "kv_scatter",
            "embedding_flat_rows", "rope_neox_flat"} <= names


@pytest.mark.parametrize("target", ["sm_90a", "gfx950"])
def test_every_call_warms_up_every_code_object_it_loads(monkeypatch, target):
    """Every call of CALLS (45 cold compiles would take minutes here: the compile step is
    recorded, not run; the test above runs it)."""
    warmed, again = warmed_and_again(monkeypatch, EVERY, target, {})
    sources = {t.source() for t in warmed}
    assert again and all(t.source() in sources for t in again)
    assert len({t.source() for t in again}) >= len({c.op for c in warm.CALLS.values()})


# public functions warm-up does not call yet, each with why (an entry here is a known gap)
NO_CALL_YET = {"scaled_dot_product_attention": "sm_90a only, new in the seventh session; "
                                               "warm-up has no attention shapes yet",
               **dict.fromkeys(("moe_align_block_size", "moe_grouped_gemm", "fused_moe"),
                               "MoE (issue #11), new: warm-up reads no expert count yet"),
               "paged_attention_decode": "paged decode (issue #12), new: warm-up reads no "
                                         "block-table shape yet",
               "scaled_mm": "fp8 GEMM (issue #11), new in the eighth session: warm-up reads "
                            "no quantisation config yet",
               **dict.fromkeys(("awq_gemm", "awq_dequantize"),
                               "W4A16 (issue #11), new in the eighth session: warm-up reads no "
                               "AWQ config yet")}


def test_every_public_op_function_has_a_call():
    from ktile.ops._library import all_ops
    functions = {name for op in all_ops() for name in op.functions} - set(NO_CALL_YET)
    assert functions <= {call.function for call in warm.CALLS.values()}
    assert not set(NO_CALL_YET) & {call.function for call in warm.CALLS.values()}
    for call in warm.CALLS.values():
        assert call.function in next(op for op in all_ops() if op.name == call.op).functions


def test_model_shapes_split_rows_at_the_tables_bounds():
    shapes = warm.model_shapes(dict(MODEL, max_tokens=600))
    assert {"embedding", "rms_norm", "fused_add_rms_norm", "linear", "rotary_embedding",
            "kv_cache_write", "silu_and_mul", "add", "softmax"} <= set(shapes)
    hidden, q, kv = MODEL["hidden_size"], 4 * 64, 2 * 64
    assert {(n, k) for _, n, k in shapes["linear"]} == {
        (q + 2 * kv, hidden), (hidden, q), (2 * MODEL["intermediate_size"], hidden),
        (hidden, MODEL["intermediate_size"]), (MODEL["vocab_size"], hidden)}
    assert {cols for _, cols in shapes["kv_cache_write"]} == {kv}
    softmax_rows = [rows for rows, _ in shapes["softmax"]]
    bounds = [r.max_rows for r in warm._op("softmax").table.routes
              if r.max_rows is not None and r.max_rows < 600]
    for bound in bounds:
        assert bound in softmax_rows and bound + 1 in softmax_rows
    assert softmax_rows[0] == 1 and softmax_rows[-1] == 600


def test_bad_warmup_input_is_refused():
    from ktile.errors import InputError
    for given, kwargs in [({"hidden_size": 8}, {"target": "sm_90a"}),
                          ({"rms_norm": [(0, 8)]}, {"target": "sm_90a"}),
                          ({"linear": [(1, 8)]}, {"target": "sm_90a"}),      # no K
                          (dict(MODEL, num_kv_heads=0), {"target": "sm_90a"}),
                          ({"no_such_fn": [(1, 8)]}, {"target": "sm_90a"}),
                          ({"rms_norm": [(1, 8)]}, {"target": "sm_90a", "dtypes": ("bf17",)}),
                          ([(1, 8)], {"target": "sm_90a"})]:
        with pytest.raises(InputError):
            warm.warmup(given, **kwargs)
