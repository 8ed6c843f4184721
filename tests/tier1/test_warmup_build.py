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
SHAPE = {"awq_dequantize": (128, 128)}      # (K, N): K a multiple of AWQ's group, 128
EVERY = {name: [SHAPE.get(name, (4, 128, 128) if call.inner else (4, 128))]
         for name, call in warm.CALLS.items()}
MOE = dict(MODEL, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=128)
FP8 = dict(MODEL, quantization_config={"quant_method": "fp8", "activation_scheme": "dynamic"})
AWQ = dict(MODEL, max_tokens=40,          # past awq_gemm's decode rows (32): its prefill too
           quantization_config={"quant_method": "awq", "bits": 4, "group_size": 128})


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
    shapes = warm.model_shapes(given, target) if "max_tokens" in given else given
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
    assert {"matmul_gemv_nt", "matmul_skinny_wgmma_nt", "kv_scatter", "embedding_flat_rows",
            "rope_neox_flat", "attention_ws", "paged_decode_ring",
            "paged_decode_combine"} <= names


@pytest.mark.parametrize("config, kernels", [
    (MOE, {"moe_gemm_nt", "act_and_mul_tokens_bf16"}),
    (FP8, {"scaled_mm_fp8_ws_nt", "quant_fp8_per_tensor"}),
    (AWQ, {"awq_gemv_partials", "awq_dequant_rows"})], ids=["moe", "fp8", "awq"])
def test_moe_and_quantised_models_warm_up_what_they_load(monkeypatch, config, kernels):
    """A MoE model's experts (fused_moe, its row counts split at the grouped GEMM's slot
    bound over top-k) and an fp8 or AWQ model's projections."""
    warmed, again = warmed_and_again(monkeypatch, config, "sm_90a", warm._model_sizes(config))
    sources = {t.source() for t in warmed}
    assert again and all(t.source() in sources for t in again)
    assert kernels <= {t.name for t in again}
    shapes = warm.model_shapes(dict(config, max_tokens=600))
    if config is MOE:
        slots = [r.max_rows for r in warm._op("moe_grouped_gemm").table.routes if r.max_rows]
        assert {(s // 2, 256) for s in slots} <= set(shapes["fused_moe"])
        assert "silu_and_mul" not in shapes and (8, 256) in {s[1:] for s in shapes["linear"]}
    else:                                            # the lm head (and a MoE's router)
        assert {s[1:] for s in shapes["linear"]} == {(MODEL["vocab_size"], 256)}
        moe = warm.model_shapes(dict(MOE, quantization_config=config["quantization_config"]))
        assert "fused_moe" not in moe and (8, 256) in {s[1:] for s in moe["linear"]}


@pytest.mark.parametrize("target", ["sm_90a", "gfx950"])
def test_every_call_warms_up_every_code_object_it_loads(monkeypatch, target):
    """Every call of CALLS that routes on the target (45 cold compiles would take minutes
    here: the compile step is recorded, not run; the test above runs it)."""
    given = {name: shapes for name, shapes in EVERY.items() if warm.CALLS[name].routes_on(target)}
    warmed, again = warmed_and_again(monkeypatch, given, target, {})
    sources = {t.source() for t in warmed}
    assert again and all(t.source() in sources for t in again)
    assert len({t.source() for t in again}) >= len({warm.CALLS[n].op for n in given})


def test_a_shapes_dict_takes_the_model_sizes_it_leaves_out(monkeypatch):
    """Paged decode's head dim and the grouped GEMM's top-k come from `sizes`."""
    builds = importlib.import_module("ktile.runtime.builds")
    for head in (64, 128):
        warmed: list = []
        monkeypatch.setattr(builds, "build_traces",
                            lambda traces, workers=None: warmed.extend(traces))
        warm.warmup({"paged_attention_decode": [(2, 48)]}, target="sm_90a",
                    sizes={"head_dim": head, "num_heads": 4, "num_kv_heads": 2})
        assert {t.constants["D"] for t in warmed if "D" in t.constants} == {head}


def test_model_shapes_leave_out_ops_without_routes_on_the_target():
    """gfx950 has no paged decode route (its MFMA's K is 32), gfx1100 no fp8: the calls are
    left out there and kept where they route; a call the target refuses raises the op's
    InputError."""
    from ktile.errors import InputError
    assert "paged_attention_decode" not in warm.model_shapes(MODEL, "gfx950")
    assert "paged_attention_decode" in warm.model_shapes(MODEL, "gfx1100")
    fp8 = warm.model_shapes(FP8, "gfx1100")                  # no fp8 there: nor its quant
    assert "scaled_mm" not in fp8 and "scaled_fp8_quant" not in fp8
    assert {"scaled_mm", "scaled_fp8_quant"} <= set(warm.model_shapes(FP8, "gfx950"))
    with pytest.raises(InputError):
        warm.warmup({"paged_attention_decode": [(1, 16)]}, target="gfx950")


# public functions warm-up does not call yet, each with why (an entry here is a known gap)
NO_CALL_YET: dict[str, str] = {}


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
                          (dict(MOE, num_experts_per_tok=None), {"target": "sm_90a"}),
                          ({"rms_norm": [(1, 8)]}, {"target": "sm_90a", "sizes": {"heads": 2}}),
                          ({"rms_norm": [(1, 8)]}, {"target": "sm_90a",
                                                    "sizes": {"head_dim": 0}}),
                          (dict(AWQ, quantization_config={"quant_method": "awq", "bits": 4,
                                                          "group_size": 64}),
                           {"target": "sm_90a"}),
                          (dict(FP8, quantization_config={"quant_method": "fp8",
                                                          "weight_block_size": [128, 128]}),
                           {"target": "sm_90a"}),
                          (dict(FP8, quantization_config={"quant_method": "gptq"}),
                           {"target": "sm_90a"}),
                          ([(1, 8)], {"target": "sm_90a"})]:
        with pytest.raises(InputError):
            warm.warmup(given, **kwargs)
