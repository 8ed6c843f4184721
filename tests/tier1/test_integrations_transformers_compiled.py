"""The transformers integration under torch.compile(fullgraph=True) (a StaticCache decode step
traced whole, with every route to ktile; Dynamo + AOT autograd's functionalisation, no Inductor:
its C++ build would cost minutes here) and the A/B harness's CPU run
(`python -m ktile.integrations.ab_transformers --tiny --json`)."""
import copy
import io
import json
from contextlib import redirect_stdout

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from ktile.integrations import _core  # noqa: E402
from ktile.integrations import ab_transformers  # noqa: E402
from ktile.integrations import transformers as kt  # noqa: E402
from ktile.integrations import transformers_bench as bench  # noqa: E402


@torch.no_grad()
def greedy(model, compiled: bool, steps: int = 3):
    from transformers import StaticCache
    cache = StaticCache(config=model.config, max_cache_len=16)
    ids = torch.arange(10, dtype=torch.long).view(2, 5) * 5 % model.config.vocab_size
    logits = [model(ids, past_key_values=cache, use_cache=True).logits[:, -1]]

    def step(token):
        return model(input_ids=token, past_key_values=cache, use_cache=True).logits[:, -1]
    if compiled:
        step = torch.compile(step, backend="aot_eager", fullgraph=True, dynamic=False)
    for _ in range(steps):
        logits.append(step(logits[-1].argmax(-1, keepdim=True)))
    return torch.stack(logits).float()


def test_a_compiled_decode_step_runs_every_route_and_matches_stock(monkeypatch):
    monkeypatch.setattr(kt.fw, "ROUTES", {op: "ktile" for op in kt.OPS})
    _core.reset()
    stock = bench.build("tiny", None, "cpu")
    want = greedy(stock, compiled=False)
    patched = kt.patch(copy.deepcopy(stock))
    torch._dynamo.reset()
    got = greedy(patched, compiled=True)
    assert (got - want).abs().max() <= 0.02 * want.abs().max()
    assert torch.equal(got.argmax(-1), want.argmax(-1))
    # the ops are opaque in the graph: they count on every compiled call, not once per trace
    counts = kt.counters()
    assert counts["transformers.rms_norm"]["eager"] == 4 * (2 * 3 + 1)
    assert all(_core.calls(f"transformers.{op}") > 0 for op in kt.OPS)
    kt.unpatch(patched)
    torch._dynamo.reset()


def test_the_ab_harness_runs_a_tiny_model_on_the_cpu():
    out = io.StringIO()
    with redirect_stdout(out):
        status = ab_transformers.main(["--tiny", "--compile", "none", "--json"])
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert status == 0 and result["tokens_identical"] is True
    assert 0 <= result["logits_max_diff"] <= 0.05 * result["check"]["logits_scale"]
    assert result["counters"]["transformers.rms_norm"]["eager"] > 0
    assert result["counters"]["transformers.linear"]["fallback"] > 0     # routed stock
    for group, labels in (("decode_ms_per_token", ("1", "2")), ("prefill_ms", ("16",))):
        for label in labels:
            t = result["timings"][group][label]
            assert t["stock"] > 0 and t["ktile"] > 0 and t["speedup"] == t["stock"] / t["ktile"]
    assert "decode/token, batch 2" in ab_transformers.table(result)
