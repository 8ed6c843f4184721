"""ktile/integrations/transformers.py on a tiny random Qwen3 (and Llama) built here, eager on
the CPU interpreter: patched logits match stock, every route counts, unpatch restores stock,
a moved hook leaves the model stock with one warning, the switches, shadow mode, bad input."""
import copy
import sys
import types
import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from ktile.errors import InputError  # noqa: E402
from ktile.integrations import _core  # noqa: E402
from ktile.integrations import transformers as kt  # noqa: E402
from ktile.integrations import transformers_bench as bench  # noqa: E402
from ktile.integrations import transformers_ops  # noqa: E402

ALL_KTILE = {op: "ktile" for op in kt.OPS}


@pytest.fixture(scope="module")
def base():
    return bench.build("tiny", None, "cpu")


@pytest.fixture
def model(base):
    return copy.deepcopy(base)


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    for name in ("KTILE_TRANSFORMERS", "KTILE_TRANSFORMERS_SHADOW",
                 *(f"KTILE_TRANSFORMERS_{op.upper()}" for op in kt.OPS)):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(kt.fw, "STATE", {"shadow": False})
    _core.reset()
    yield
    _core.reset()


@torch.no_grad()
def decode(model, steps=2):
    """Prefill 6 tokens into a StaticCache, then `steps` greedy steps: the logits of each."""
    from transformers import StaticCache
    cache = StaticCache(config=model.config, max_cache_len=16)
    ids = torch.arange(12, dtype=torch.long).view(2, 6) * 7 % model.config.vocab_size
    out = [model(ids, past_key_values=cache, use_cache=True).logits[:, -1]]
    for _ in range(steps):
        token = out[-1].argmax(-1, keepdim=True)
        out.append(model(token, past_key_values=cache, use_cache=True).logits[:, -1])
    return torch.stack(out).float()


def own_forwards(model):
    return [name for name, m in model.named_modules() if "forward" in m.__dict__]


def test_every_route_to_ktile_matches_stock_and_counts(base, model, monkeypatch):
    monkeypatch.setattr(kt.fw, "ROUTES", dict(ALL_KTILE))
    want = decode(base)
    kt.patch(model)
    got = decode(model)
    assert (got - want).abs().max() <= 0.02 * want.abs().max()
    assert torch.equal(got.argmax(-1), want.argmax(-1))
    counts = kt.counters()
    assert set(counts) == {transformers_ops.route_name(op) for op in kt.OPS}
    for op in kt.OPS:
        assert _core.calls(transformers_ops.route_name(op)) > 0, op
    # 2 layers x (input, q, k norms) + the final norm, per forward; 3 forwards
    assert counts["transformers.rms_norm"]["eager"] == 3 * (2 * 3 + 1)
    assert counts["transformers.kv_cache_write"]["eager"] == 3 * 2


def test_stock_routes_run_transformers_own_code_counted_as_fallbacks(base, model, monkeypatch):
    routes = dict(ALL_KTILE, linear="stock", rotary_embedding="stock", attention="stock",
                  kv_cache_write=lambda x: "stock")            # a per-shape route
    monkeypatch.setattr(kt.fw, "ROUTES", routes)
    kt.patch(model)
    assert torch.allclose(decode(model), decode(base), atol=0.02)
    counts = kt.counters()
    for op in ("linear", "rotary_embedding", "attention", "kv_cache_write"):
        c = counts[f"transformers.{op}"]
        assert c["eager"] == 0 and c["fallback"] > 0, op
    assert counts["transformers.silu_and_mul"]["eager"] > 0


def test_unpatch_restores_stock(base, model, monkeypatch):
    monkeypatch.setattr(kt.fw, "ROUTES", dict(ALL_KTILE))
    want = decode(base)
    kt.patch(model)
    routed = model._ktile_patch.routed_module
    assert routed in sys.modules and model.config._attn_implementation == kt.ATTENTION
    assert set(model.state_dict()) == set(base.state_dict())    # the merged gate/up: no key
    kt.unpatch(model)
    assert kt.status(model) is None and own_forwards(model) == []
    assert routed not in sys.modules and model.config._attn_implementation == "sdpa"
    _core.reset()
    assert torch.equal(decode(model), want)
    assert kt.counters() == {}
    kt.unpatch(model)                                   # not patched: nothing happens


def test_a_moved_hook_leaves_the_model_stock_with_one_warning(base, model, monkeypatch):
    import transformers.models.qwen3.modeling_qwen3 as mq
    stock_rope = mq.apply_rotary_pos_emb
    monkeypatch.setattr(mq, "apply_rotary_pos_emb",             # unsqueeze_dim is gone
                        lambda q, k, cos, sin: stock_rope(q, k, cos, sin))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kt.patch(model)
    moved = [w for w in caught if "stays stock" in str(w.message)]
    assert len(moved) == 1 and "apply_rotary_pos_emb" in str(moved[0].message)
    assert kt.status(model) is None and own_forwards(model) == []
    assert torch.equal(decode(model), decode(base))


def test_a_wrapped_attention_forward_leaves_the_model_stock(model, monkeypatch):
    import functools
    import transformers.models.qwen3.modeling_qwen3 as mq
    stock = mq.Qwen3Attention.forward
    monkeypatch.setattr(mq.Qwen3Attention, "forward", functools.wraps(stock)(
        lambda *a, **k: stock(*a, **k)))
    with pytest.warns(RuntimeWarning, match="Qwen3Attention.forward is wrapped"):
        kt.patch(model)
    assert kt.status(model) is None
    kt.patch(model, ops=["rms_norm", "silu_and_mul"])   # ops not touching attention still patch
    assert set(kt.status(model)) == {"rms_norm", "silu_and_mul"}


def test_switches(model, monkeypatch):
    monkeypatch.setenv("KTILE_TRANSFORMERS", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kt.patch(model)
    assert kt.status(model) is None and own_forwards(model) == []
    monkeypatch.setenv("KTILE_TRANSFORMERS", "1")
    monkeypatch.setenv("KTILE_TRANSFORMERS_RMS_NORM", "0")
    kt.patch(model)
    assert "rms_norm" not in kt.status(model) and "silu_and_mul" in kt.status(model)
    assert not any("forward" in m.__dict__ for m in model.modules()
                   if type(m).__name__ == "Qwen3RMSNorm")


def test_shadow_mode_counts_a_kernel_that_differs(model, monkeypatch):
    import ktile.ops
    monkeypatch.setenv("KTILE_TRANSFORMERS_SHADOW", "1")
    wrong = types.SimpleNamespace(**{name: getattr(ktile.ops, name) for name in (
        "fused_add_rms_norm", "silu_and_mul", "linear", "rotary_embedding", "kv_cache_write")})
    wrong.rms_norm = lambda x, w, eps: ktile.ops.rms_norm(x, w, eps) * 2
    monkeypatch.setattr(transformers_ops, "_ops", lambda: wrong)
    kt.patch(model, ops=["rms_norm", "silu_and_mul"])
    with pytest.warns(RuntimeWarning, match="transformers.rms_norm"):
        decode(model, steps=0)
    counts = kt.counters()
    assert counts["transformers.rms_norm"]["shadow_mismatch"] > 0
    assert counts["transformers.silu_and_mul"]["shadow_mismatch"] == 0


def test_bad_input_is_refused_before_anything_changes(model, monkeypatch):
    with pytest.raises(InputError, match="'ops' names"):
        kt.patch(model, ops=["rms_norm", "flash"])
    with pytest.raises(InputError, match="'model' is a Linear"):
        kt.patch(torch.nn.Linear(4, 4))
    monkeypatch.setitem(kt.fw.ROUTES, "linear", "cublas")
    with pytest.raises(InputError, match=r"ROUTES\['linear'\]"):
        kt.patch(model)
    assert kt.status(model) is None and own_forwards(model) == []
    monkeypatch.setitem(kt.fw.ROUTES, "linear", "stock")
    kt.patch(model)
    with pytest.raises(InputError, match="already patched"):
        kt.patch(model)


def test_llama(monkeypatch):
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(vocab_size=96, hidden_size=64, intermediate_size=96, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, head_dim=32,
                         max_position_embeddings=64)
    torch.manual_seed(0)
    stock = LlamaForCausalLM(config).to(torch.bfloat16).eval()
    patched = kt.patch(copy.deepcopy(stock))
    monkeypatch.setattr(kt.fw, "ROUTES", dict(ALL_KTILE))
    want, got = decode(stock, steps=1), decode(patched, steps=1)
    assert (got - want).abs().max() <= 0.02 * want.abs().max()
    assert all(_core.calls(f"transformers.{op}") > 0 for op in kt.OPS)
