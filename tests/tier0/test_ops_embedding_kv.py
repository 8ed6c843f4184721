"""ktile.ops.embedding and ktile.ops.kv_cache_write on CPU tensors (the interpreter), exact
against their references: ragged shapes, one token, ids out of the table, padding slots,
in-place cache writes, torch.compile(fullgraph=True), refusals naming the parameter."""
import numpy as np
import pytest
import torch

import ktile
from ktile.errors import InputError
from ktile.ops.embedding import reference as ER
from ktile.ops.embedding.op import embedding
from ktile.ops.kv_cache.op import kv_cache_write
from bad_inputs import refused


@pytest.mark.parametrize("ids_shape,vocab,hidden", [((1,), 30, 64), ((45,), 100, 96),
                                                    ((3, 7), 50, 200), ((2, 2, 5), 20, 16)],
                         ids=str)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_embedding(ids_shape, vocab, hidden, dtype):
    g = torch.Generator().manual_seed(5)
    ids = torch.randint(-2, vocab + 2, ids_shape, generator=g)
    weight = torch.randn(vocab, hidden, generator=g).to(dtype)
    out = ktile.ops.embedding(ids, weight)
    assert out.shape == (*ids_shape, hidden) and out.dtype == dtype
    want = ER.embedding(ids.numpy(), weight.float().numpy())
    np.testing.assert_array_equal(out.reshape(-1, hidden).float().numpy(), want)
    into = torch.empty_like(out)
    assert ktile.ops.embedding(ids.int(), weight, out=into) is into and torch.equal(into, out)


@pytest.mark.parametrize("hidden,dtype,cols", [(256, torch.float32, 16), (512, torch.bfloat16, 32),
                                               (3072, torch.float16, 64)], ids=str)
def test_embedding_flat_copies(hidden, dtype, cols):
    """Widths a multiple of 16 rows of COLS take the flat kernel (ids read by hk.load_scalar):
    ids outside the table and int64 ids of 2^31 and up give zero rows; 3072 = 3 tiles of
    16 x 64 leaves a block's fourth warp past the token's row (it must write nothing)."""
    from ktile.ops.embedding.op import TABLE
    route = TABLE.choose(15, hidden, None)
    assert (route.kernel, route.constants["COLS"]) == ("embedding_flat", cols)
    g = torch.Generator().manual_seed(8)
    ids = torch.randint(-2, 22, (5, 3), generator=g)
    ids[0, 0], ids[0, 1] = 2 ** 32 + 1, 2 ** 31 + 3
    weight = torch.randn(20, hidden, generator=g).to(dtype)
    want = ER.embedding(ids.numpy(), weight.float().numpy())
    out = torch.full((5, 3, hidden), float("nan"), dtype=dtype)
    ktile.ops.embedding(ids, weight, out=out)
    np.testing.assert_array_equal(out.reshape(-1, hidden).float().numpy(), want)
    np.testing.assert_array_equal(ktile.ops.embedding(ids[1:].int(), weight).reshape(
        -1, hidden).float().numpy(), want[3:])


def test_embedding_int64_ids_read_as_words():
    """int64 ids reach the kernel as a `[tokens, 2]` int32 view of the same memory (no
    conversion); an id whose low word is inside the table but whose high word is not 0 gives a
    zero row, as every id outside the table does."""
    from ktile.ops.embedding.indices import id_words
    ids = torch.tensor([2, 2 ** 32 + 1, 7, -3, 2 ** 40 + 4, 0])
    words = id_words(ids)
    assert words.dtype == torch.int32 and words.shape == (6, 2)
    assert words.data_ptr() == ids.data_ptr()
    assert id_words(ids.int()).shape == (6, 1)
    weight = torch.randn(10, 48)
    out = ktile.ops.embedding(ids, weight)
    np.testing.assert_array_equal(out.numpy(), ER.embedding(ids.numpy(), weight.numpy()))


def cache_case(tokens, heads, head, blocks, block_size, dtype=torch.bfloat16, seed=6):
    g = torch.Generator().manual_seed(seed)
    key = torch.randn(tokens, heads, head, generator=g).to(dtype)
    value = torch.randn(tokens, heads, head, generator=g).to(dtype)
    caches = [torch.randn(blocks, block_size, heads, head, generator=g).to(dtype) for _ in "kv"]
    slots = torch.randperm(blocks * block_size, generator=g)[:tokens]
    slots[::3] = -1
    return key, value, caches, slots


def expected(cache, new, slots):
    want = cache.clone().view(-1, *cache.shape[2:])
    for t, s in enumerate(slots.tolist()):
        if s >= 0:
            want[s] = new[t]
    return want.view(cache.shape)


@pytest.mark.parametrize("case", [(1, 1, 64, 2, 16), (30, 2, 40, 8, 4), (19, 4, 128, 3, 16)],
                         ids=str)
def test_kv_cache_write(case):
    key, value, (kc, vc), slots = cache_case(*case)
    want_k, want_v = expected(kc, key, slots), expected(vc, value, slots)
    assert ktile.ops.kv_cache_write(key, value, kc, vc, slots) is None
    assert torch.equal(kc, want_k) and torch.equal(vc, want_v)


def test_kv_cache_write_compiled_flat_heads_int32_slots():
    key, value, (kc, vc), slots = cache_case(10, 2, 64, 4, 8)
    want_k = expected(kc, key, slots)

    @torch.compile(fullgraph=True, backend="aot_eager")
    def step(key, value, kc, vc, slots):
        kv_cache_write(key.flatten(1), value.flatten(1), kc, vc, slots)
        return kc.float().sum()
    step(key, value, kc, vc, slots.int())
    assert torch.equal(kc, want_k)


def test_embedding_compiled():
    ids, weight = torch.tensor([[3, 1, 4]]), torch.randn(10, 32)
    f = torch.compile(lambda i: embedding(i, weight) * 2, fullgraph=True, backend="aot_eager")
    assert torch.equal(f(ids), weight[ids] * 2)


def kv_bad(**changes):
    key, value, (kc, vc), slots = cache_case(4, 2, 32, 2, 4)
    args = dict(key=key, value=value, key_cache=kc, value_cache=vc, slot_mapping=slots)
    args.update(changes)
    return lambda: ktile.ops.kv_cache_write(**args)


W = torch.randn(10, 32)
BAD = [
    ("ids float", lambda: ktile.ops.embedding(torch.zeros(3), W), ("'ids'", "float32", ".long()")),
    ("ids 4-D", lambda: ktile.ops.embedding(torch.zeros(1, 1, 1, 3, dtype=torch.long), W),
     ("'ids'", "4 dimensions")),
    ("weight 3-D", lambda: ktile.ops.embedding(torch.tensor([1]), torch.zeros(1, 10, 32)),
     ("'weight'", "3 dimensions")),
    ("weight int", lambda: ktile.ops.embedding(torch.tensor([1]), torch.zeros(10, 4, dtype=torch.int8)),
     ("'weight'", "int8")),
    ("out shape", lambda: ktile.ops.embedding(torch.tensor([1, 2]), W, out=torch.empty(3, 32)),
     ("'out'", "(2, 32)")),
    ("out dtype", lambda: ktile.ops.embedding(torch.tensor([1, 2]), W,
                                              out=torch.empty(2, 32, dtype=torch.bfloat16)),
     ("'out'", "bfloat16", "weight")),
    ("ids empty", lambda: ktile.ops.embedding(torch.zeros(0, dtype=torch.long), W), ("'ids'", "empty")),
    ("slots float", kv_bad(slot_mapping=torch.zeros(4)), ("'slot_mapping'", "float32")),
    ("slots count", kv_bad(slot_mapping=torch.zeros(3, dtype=torch.long)),
     ("'slot_mapping'", "3 slots", "one slot per token")),
    ("value shape", kv_bad(value=torch.zeros(4, 2, 16, dtype=torch.bfloat16)),
     ("'value'", "'key'", "equal")),
    ("cache 3-D", kv_bad(key_cache=torch.zeros(2, 4, 64, dtype=torch.bfloat16),
                         value_cache=torch.zeros(2, 4, 64, dtype=torch.bfloat16)),
     ("'key_cache'", "3 dimensions")),
    ("cache dtype", kv_bad(key_cache=torch.zeros(2, 4, 2, 32), value_cache=torch.zeros(2, 4, 2, 32)),
     ("'key_cache'", "float32", "unquantised")),
    ("cache heads", kv_bad(key_cache=torch.zeros(2, 4, 1, 32, dtype=torch.bfloat16),
                           value_cache=torch.zeros(2, 4, 1, 32, dtype=torch.bfloat16)),
     ("'key'", "heads and head_size")),
    ("cache strided", kv_bad(key_cache=torch.zeros(2, 4, 2, 64, dtype=torch.bfloat16)[..., :32],
                             value_cache=torch.zeros(2, 4, 2, 64, dtype=torch.bfloat16)[..., :32]),
     ("'key_cache'", "contiguous")),
]


@pytest.mark.parametrize("action,words", [(a, w) for _, a, w in BAD], ids=[b[0] for b in BAD])
def test_refusals(action, words):
    refused(action, *words, kind=InputError)
