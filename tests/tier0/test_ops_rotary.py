"""ktile.ops.rotary_embedding on CPU tensors (the interpreter) against
ktile/ops/rotary/reference.py: NeoX and GPT-J, partial rotary, grouped-query k, one token,
ragged tokens, a bf16 cache, in place (query and key are the tensors rotated), key None,
torch.compile(fullgraph=True), refusals naming the parameter."""
import numpy as np
import pytest
import torch

import ktile
from ktile.errors import InputError
from ktile.ops.rotary import reference as R
from ktile.ops.rotary.op import rotary_embedding
from bad_inputs import refused

MAX_POSITION = 200
# (tokens, q heads, k heads, head_size, rot_dim, query dtype, cache dtype)
CASES = [(1, 2, 1, 128, 128, torch.bfloat16, torch.float32),
         (21, 4, 2, 64, 32, torch.bfloat16, torch.float32),
         (17, 3, 3, 64, 64, torch.float16, torch.bfloat16),
         (5, 2, 1, 96, 64, torch.float32, torch.float32),
         (19, 2, 2, 128, 128, torch.bfloat16, torch.bfloat16),   # vLLM's: the cache in q's dtype
         (2, 20, 4, 64, 32, torch.bfloat16, torch.float32),   # flat: 16 + 4 q heads, 4 k heads
         (40, 2, 1, 64, 64, torch.bfloat16, torch.float32)]   # past FLAT_TOKENS: the gather


def inputs(tokens, q_heads, k_heads, head, rot, dtype, cache_dtype, seed=3):
    g = torch.Generator().manual_seed(seed)
    positions = torch.randint(0, MAX_POSITION, (tokens,), generator=g)
    cache = torch.from_numpy(R.cos_sin_cache(MAX_POSITION, rot)).to(cache_dtype)
    q = torch.randn(tokens, q_heads * head, generator=g).to(dtype)
    k = torch.randn(tokens, k_heads * head, generator=g).to(dtype)
    return positions, q, k, cache


def expect_rotated(after, before, positions, cache, head, neox):
    want = R.rotary(positions.numpy(), before.reshape(before.shape[0], -1).float().numpy(),
                    cache.float().numpy(), head, neox)
    got = after.reshape(after.shape[0], -1).float().numpy()
    bits = {torch.bfloat16: 8, torch.float16: 11, torch.float32: 24}[after.dtype]
    assert np.max(np.abs(got - want)) <= R.tolerance(want, bits)


@pytest.mark.parametrize("neox", [True, False], ids=["neox", "gptj"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}tok-{c[1]}q{c[2]}k-h{c[3]}r{c[4]}")
def test_rotates_in_place(case, neox):
    tokens, _, _, head, *_ = case
    positions, q, k, cache = inputs(*case)
    q0, k0 = q.clone(), k.clone()
    got_q, got_k = ktile.ops.rotary_embedding(positions, q, k, head, cache, neox)
    assert got_q is q and got_k is k
    expect_rotated(q, q0, positions, cache, head, neox)
    expect_rotated(k, k0, positions, cache, head, neox)
    if case[4] < head:   # partial rotary: the columns past rot_dim are untouched
        assert torch.equal(q.view(tokens, -1, head)[..., case[4]:],
                           q0.view(tokens, -1, head)[..., case[4]:])


@pytest.mark.parametrize("key", [True, False], ids=["qk", "q"])
def test_heads_grouped_a_block(monkeypatch, key):
    """Past GROUP_FROM_TOKENS tokens a block rotates HEADS heads with one gather of cos and sin
    (here from 1 token: 4 q heads and 2 k heads, 2 a block); without key, one head a block."""
    from ktile.ops.rotary import config
    monkeypatch.setattr(config, "GROUP_FROM_TOKENS", 1)
    monkeypatch.setattr(config, "FLAT_TOKENS", 0)       # the gather kernel at 19 tokens
    assert config.neox_constants(64, 3, (4, 2))["HEADS"] == 2
    assert config.neox_constants(64, 3, (4, 1))["HEADS"] == 1
    positions, q, k, cache = inputs(19, 4, 2, 64, 64, torch.bfloat16, torch.float32)
    q0, k0 = q.clone(), k.clone()
    ktile.ops.rotary_embedding(positions, q, k if key else None, 64, cache, True)
    expect_rotated(q, q0, positions, cache, 64, True)
    if key:
        expect_rotated(k, k0, positions, cache, 64, True)
    else:
        assert torch.equal(k, k0)


def test_three_dimensional_heads_int32_positions_and_no_key():
    positions, q, _, cache = inputs(9, 2, 1, 64, 64, torch.bfloat16, torch.float32)
    q3, q0 = q.view(9, 2, 64), q.clone()
    ktile.ops.rotary_embedding(positions.int(), q3, None, 64, cache, True)
    expect_rotated(q, q0, positions, cache, 64, True)


def test_int64_positions_outside_the_cache_read_zeros():
    """int64 positions reach the kernel as their 32-bit words: one whose low word is inside the
    cache but whose high word is not 0 (2^32 + 5) or negative is outside, so its rotated
    columns read a zero cos and sin (the op's documented out-of-range result)."""
    positions, q, k, cache = inputs(18, 2, 1, 64, 64, torch.bfloat16, torch.float32)
    positions[3], positions[17] = 2 ** 32 + 5, -1
    q0, k0 = q.clone(), k.clone()
    ktile.ops.rotary_embedding(positions, q, k, 64, cache, True)
    inside = torch.ones(18, dtype=torch.bool)
    inside[[3, 17]] = False
    expect_rotated(q[inside], q0[inside], positions[inside], cache, 64, True)
    expect_rotated(k[inside], k0[inside], positions[inside], cache, 64, True)
    assert not q[~inside].any() and not k[~inside].any()


def test_compile_fullgraph():
    positions, q, k, cache = inputs(6, 2, 2, 64, 64, torch.bfloat16, torch.float32)
    q_eager, k_eager = q.clone(), k.clone()
    rotary_embedding(positions, q_eager, k_eager, 64, cache, True)

    @torch.compile(fullgraph=True, backend="aot_eager")
    def step(positions, q, k):
        rotary_embedding(positions, q, k, 64, cache, True)
        return q.float().sum()
    step(positions, q, k)
    assert torch.equal(q, q_eager) and torch.equal(k, k_eager)


def bad(**changes):
    positions, q, k, cache = inputs(4, 2, 1, 64, 64, torch.bfloat16, torch.float32)
    args = dict(positions=positions, query=q, key=k, head_size=64, cos_sin_cache=cache,
                is_neox=True)
    args.update(changes)
    return lambda: ktile.ops.rotary_embedding(**args)


BAD = [
    ("positions float", bad(positions=torch.zeros(4)), ("'positions'", "float32", ".long()")),
    ("positions count", bad(positions=torch.zeros(3, dtype=torch.long)),
     ("'query'", "3 tokens", "positions.numel()")),
    ("head_size zero", bad(head_size=0), ("'head_size'", "positive")),
    ("head_size not int", bad(head_size=64.0), ("'head_size'", "positive int")),
    ("query int", bad(query=torch.zeros(4, 128, dtype=torch.int32)), ("'query'", "int32")),
    ("key dtype", bad(key=torch.zeros(4, 64)), ("'key'", "float32", "query.dtype")),
    ("key more heads", bad(key=torch.zeros(4, 256, dtype=torch.bfloat16)), ("'key'", "heads")),
    ("rot too wide", bad(cos_sin_cache=torch.zeros(10, 96)), ("'cos_sin_cache'", "96", "32")),
    ("rot not 32k", bad(cos_sin_cache=torch.zeros(10, 48)), ("'cos_sin_cache'", "multiple of 32")),
    ("cache 1-D", bad(cos_sin_cache=torch.zeros(64)), ("'cos_sin_cache'", "1 dimensions")),
]


@pytest.mark.parametrize("action,words", [(a, w) for _, a, w in BAD], ids=[b[0] for b in BAD])
def test_refusals(action, words):
    refused(action, *words, kind=InputError)
