"""The transformers integration on a GPU: a small random Qwen3 patched with every route to ktile,
its decode step compiled with torch.compile(mode="reduce-overhead", fullgraph=True) (CUDA
graphs), matches stock eager decoding, and ktile's ops are recorded into the graphs (captured
calls) and replayed."""
import copy

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]


@torch.no_grad()
def greedy(model, mode, steps=6):
    from transformers import StaticCache
    cache = StaticCache(config=model.config, max_cache_len=32)
    ids = (torch.arange(16, device="cuda").view(2, 8) * 11) % model.config.vocab_size
    logits = [model(ids, past_key_values=cache, use_cache=True).logits[:, -1]]

    def step(token):
        return model(input_ids=token, past_key_values=cache, use_cache=True).logits[:, -1]
    if mode:
        step = torch.compile(step, mode=mode, fullgraph=True, dynamic=False)
    for _ in range(steps):
        if mode == "reduce-overhead":
            torch.compiler.cudagraph_mark_step_begin()
        logits.append(step(logits[-1].argmax(-1, keepdim=True)).clone())
    return torch.stack(logits).float()


def test_every_route_in_cuda_graphs_matches_stock(monkeypatch):
    from ktile.integrations import _core
    from ktile.integrations import transformers as kt
    from ktile.integrations import transformers_bench as bench
    monkeypatch.setattr(kt.fw, "ROUTES", {op: "ktile" for op in kt.OPS})
    monkeypatch.setitem(bench.SIZES, "gpu", dict(bench.SIZES["tiny"], hidden_size=256,
                                                 intermediate_size=512, num_attention_heads=4,
                                                 num_key_value_heads=2, head_dim=64))
    stock = bench.build("gpu", None, "cuda")
    want = greedy(stock, None)
    patched = kt.patch(copy.deepcopy(stock))
    _core.reset()
    torch._dynamo.reset()
    got = greedy(patched, "reduce-overhead")
    assert (got - want).abs().max() <= 0.02 * want.abs().max()
    counts = kt.counters()
    for op in kt.OPS:
        assert counts[f"transformers.{op}"]["captured"] > 0, op
    # replays run no Python: fewer eager calls than steps x calls per step
    assert counts["transformers.rms_norm"]["eager"] < 6 * (2 * 3 + 1) + (2 * 3 + 1)
