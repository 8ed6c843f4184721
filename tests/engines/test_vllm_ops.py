"""The ops vLLM's hooks call (`torch.ops.ktile_vllm.*`, ktile/integrations/vllm_ops.py), without
vLLM: the per-call decision, ktile's kernel (the interpreter) and the reference behind one op
name agreeing, opcheck, switches, shadow mode, and the KV write into the layout ktile's op
takes."""
import pytest
import torch

from ktile.errors import InputError
from ktile.integrations import _core, vllm_hooks, vllm_ops

BF16 = torch.bfloat16


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    for name in ("KTILE_VLLM", "KTILE_VLLM_SHADOW", "KTILE_VLLM_LINEAR"):
        monkeypatch.delenv(name, raising=False)
    _core.reset()
    yield
    _core.reset()


def rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(BF16)


def cases(rows):
    """(op, args) for every routed op at `rows` tokens (tiny Qwen3 widths)."""
    pos = torch.arange(rows)
    cache = torch.cat([torch.cos(torch.arange(64 * 32).view(64, 32) * 0.01),
                       torch.sin(torch.arange(64 * 32).view(64, 32) * 0.01)], -1).to(BF16)
    return [("rms_norm", (rand(rows, 256), rand(256, seed=1), 1e-6)),
            ("fused_add_rms_norm", (rand(rows, 256), rand(rows, 256, seed=2),
                                    rand(256, seed=1), 1e-6)),
            ("silu_and_mul", (rand(rows, 128),)),
            ("rotary_embedding", (pos, rand(rows, 128), rand(rows, 64, seed=3), cache, 64, True)),
            ("linear", (rand(rows, 64), rand(48, 64, seed=4), None)),
            ("fused_moe", (rand(rows, 64), (rand(4, 64, 64, seed=5) / 8).to(BF16),
                           (rand(4, 64, 32, seed=6) / 6).to(BF16), *moe_routing(rows)))]


def moe_routing(rows):
    """(topk_weights fp32, topk_ids int32) as vLLM's router gives them: top-2 of 4 experts."""
    g = torch.Generator().manual_seed(7)
    weights, ids = torch.randn(rows, 4, generator=g).softmax(-1).topk(2)
    return weights, ids.to(torch.int32)


def as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


@pytest.mark.parametrize("op", vllm_ops.RULES)
def test_the_decision_follows_the_rule_and_the_switches(op, monkeypatch):
    rule = vllm_ops.RULES[op]
    cpu = torch.device("cpu")
    assert vllm_ops.decide(op, rule.cpu_rows, cpu) == "ktile"
    assert vllm_ops.decide(op, rule.cpu_rows + 1, cpu) == "reference"
    assert vllm_ops.decide(op, 10 ** 6, torch.device("meta")) == "ktile"   # a GPU: no limit
    monkeypatch.setenv(f"KTILE_VLLM_{op.upper()}", "0")
    assert vllm_ops.decide(op, 1, cpu) == "engine"


def test_ktile_kernels_and_the_reference_agree_behind_one_op_name(monkeypatch):
    """The interpreter (3 rows) and the reference (the same call with cpu_rows 0) agree."""
    for op, args in cases(3):
        fn = getattr(torch.ops.ktile_vllm, op)
        rule = vllm_ops.RULES[op]
        kernel = as_tuple(fn(*args))
        monkeypatch.setitem(vllm_ops.RULES, op, vllm_ops.Rule(0, rule.atol, rule.rtol))
        reference = as_tuple(fn(*args))
        for got, want in zip(kernel, reference):
            torch.testing.assert_close(got.float(), want.float(), atol=rule.atol, rtol=rule.rtol)
        c = _core.counters()[op]
        assert (c["eager"], c["reference"], c["fallback"]) == (2, 1, 0), op


def test_ops_pass_opcheck():
    for op, args in cases(2):
        torch.library.opcheck(getattr(torch.ops.ktile_vllm, op).default, args,
                              test_utils=("test_schema", "test_faketensor"))


def test_a_switched_off_route_runs_the_engines_path(monkeypatch):
    monkeypatch.setenv("KTILE_VLLM_LINEAR", "0")
    monkeypatch.setitem(vllm_ops.ENGINE_PATHS, "linear", torch.nn.functional.linear)
    x, w = rand(2, 64), rand(48, 64, seed=4)
    y = torch.ops.ktile_vllm.linear(x, w, None)
    torch.testing.assert_close(y, torch.nn.functional.linear(x, w))
    assert _core.counters()["linear"]["fallback"] == 1 and _core.calls("linear") == 0


def test_a_route_off_with_no_engine_path_is_refused_naming_the_switch(monkeypatch):
    monkeypatch.setenv("KTILE_VLLM_SILU_AND_MUL", "0")
    monkeypatch.delitem(vllm_ops.ENGINE_PATHS, "silu_and_mul", raising=False)
    with pytest.raises(InputError, match="KTILE_VLLM_SILU_AND_MUL"):
        torch.ops.ktile_vllm.silu_and_mul(rand(2, 128))


def test_use_kernel_runs_a_users_function_on_the_ktile_branch(monkeypatch):
    calls = []

    def mine(x):
        calls.append(x.shape)
        return torch.nn.functional.silu(x[..., :64]) * x[..., 64:]
    monkeypatch.setattr(vllm_ops, "KERNELS", {})
    vllm_ops.use_kernel("silu_and_mul", mine)
    torch.ops.ktile_vllm.silu_and_mul(rand(2, 128))
    torch.ops.ktile_vllm.silu_and_mul(rand(20, 128))          # above cpu_rows: the reference
    assert calls == [(2, 128)] and _core.counters()["silu_and_mul"]["reference"] == 1
    with pytest.raises(InputError, match="routes are"):
        vllm_ops.use_kernel("gelu", mine)


def test_shadow_mode_counts_a_routed_call_that_differs_from_the_engine(monkeypatch):
    monkeypatch.setenv("KTILE_VLLM_SHADOW", "1")
    monkeypatch.setitem(vllm_ops.ENGINE_PATHS, "silu_and_mul",
                        lambda x: torch.nn.functional.silu(x[..., 64:]) * x[..., :64])   # swapped
    with pytest.warns(RuntimeWarning, match="silu_and_mul"):
        torch.ops.ktile_vllm.silu_and_mul(rand(2, 128))
    assert _core.counters()["silu_and_mul"]["shadow_mismatch"] == 1
    monkeypatch.setitem(vllm_ops.ENGINE_PATHS, "silu_and_mul",
                        lambda x: torch.nn.functional.silu(x[..., :64]) * x[..., 64:])
    torch.ops.ktile_vllm.silu_and_mul(rand(2, 128))
    assert _core.counters()["silu_and_mul"]["shadow_mismatch"] == 1      # the engine's formula


def test_the_kv_write_fills_the_slots_and_skips_padding():
    blocks, block_size, heads, head = 3, 4, 2, 64
    kv = torch.zeros(2, blocks, block_size, heads, head, dtype=BF16)
    key_cache, value_cache = vllm_hooks.flash_caches(kv, head)
    key, value = rand(3, heads, head), rand(3, heads, head, seed=1)
    slots = torch.tensor([5, -1, 10])
    torch.ops.ktile_vllm.kv_cache_write(key, value, key_cache, value_cache, slots)
    rows_k, rows_v = kv[0].view(-1, heads, head), kv[1].view(-1, heads, head)
    assert torch.equal(rows_k[5], key[0]) and torch.equal(rows_k[10], key[2])
    assert torch.equal(rows_v[5], value[0]) and torch.equal(rows_v[10], value[2])
    written = torch.zeros(blocks * block_size, dtype=torch.bool)
    written[[5, 10]] = True
    assert not rows_k[~written].any() and not rows_v[~written].any()
    assert _core.calls("kv_cache_write") == 1


def test_vllm_0_32_head_major_caches_are_not_taken_for_ktiles_layout():
    head = 64
    assert vllm_hooks.flash_caches(torch.zeros(4, 2, 16, 2 * head), head) is None      # CPU_ATTN
    assert vllm_hooks.flash_caches(torch.zeros(4, 2, 16, 2 * head).transpose(1, 2), head) is None
