"""Property tests of every kernel of every example on the interpreter: shapes drawn by
hypothesis (ragged edges, one row, one column, batch and depth above one where the kernel's grid
covers them), random data of the kernel's dtypes, each compared with its op's reference at the
tolerance the reference states.

Two properties per kernel:
- *right*: a call inside the kernel's documented domain matches the reference;
- *right or refused*: a call from a wider domain (other constants, batch or depth the grid may
  not cover) either matches the reference or is refused with a KernelError before anything is
  written (its outputs still hold their NaN fill). A silent wrong answer fails both.

Bounded for CI: small shapes, `derandomize=True` (the same examples every run), no deadline.
KTILE_FUZZ_PROFILE picks the hypothesis profile: `ci` (the default) or `thorough` (many more
examples, freshly random each run: `KTILE_FUZZ_PROFILE=thorough pytest tests/tier0/
test_fuzz_examples.py`).
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

pytest.importorskip("hypothesis")
torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import ktile as hk  # noqa: E402
from common import max_abs_error  # noqa: E402
from examples_index import load  # noqa: E402

# The one knob of this file (the test tree's own; ktile's knobs live in ktile/config.py).
FUZZ_PROFILE = os.environ.get("KTILE_FUZZ_PROFILE", "ci")
# ci does not shrink a failure (it reports the example it found as drawn): CI's time stays
# bounded when a property fails; thorough shrinks.
settings.register_profile("ci", max_examples=12, deadline=None, derandomize=True, database=None,
                          phases=[Phase.explicit, Phase.reuse, Phase.generate],
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=300, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(FUZZ_PROFILE)

SEEDS = st.integers(0, 2**16)
BATCH = st.integers(1, 3)
ROWS = st.integers(1, 70)        # 1 row, ragged row blocks, more than one block
COLS = st.integers(1, 300)       # 1 column, ragged column tiles, several tiles


@dataclass
class Call:
    """One kernel call, its reference and the tolerance the reference states.

    `outputs` are the tensors the kernel writes, NaN-filled (or, for in-place writes, copies
    of what they held) so that an unwritten element shows; `got` reads them as the arrays
    `want` computes."""
    kernel: object
    args: tuple
    constants: dict
    outputs: tuple
    got: Callable[[], list]
    want: Callable[[], list]
    tolerance: float | Callable[[list], float]


def rand(shape, dtype, g, scale=1.0):
    return (torch.randn(shape, generator=g) * scale).to(dtype)


def nan_like(t):
    return torch.full_like(t, float("nan"))


def generator(seed: int):
    return torch.Generator().manual_seed(seed)


def run(call: Call) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hk.KernelWarning)   # shared-memory budget notes
        call.kernel.interpret(*call.args, **call.constants)


def error_and_tolerance(call: Call) -> tuple[float, float]:
    got, want = call.got(), call.want()
    err = max(max_abs_error(g, w) for g, w in zip(got, want))
    tol = call.tolerance(want) if callable(call.tolerance) else call.tolerance
    return err, tol


def assert_right(call: Call) -> None:
    run(call)
    err, tol = error_and_tolerance(call)
    assert err <= tol, f"{call.kernel.name} {call.constants}: max error {err} > tolerance {tol}"


def assert_right_or_refused(call: Call) -> None:
    """Refused means refused before running: a KernelError and every output as it was."""
    before = [o.clone() for o in call.outputs]
    try:
        run(call)
    except hk.KernelError:
        for was, now in zip(before, call.outputs):
            assert torch.equal(was.view(torch.uint8), now.view(torch.uint8)), \
                f"{call.kernel.name} {call.constants}: refused after writing its outputs"
        return
    err, tol = error_and_tolerance(call)
    assert err <= tol, (f"{call.kernel.name} {call.constants}: a silent wrong answer "
                        f"(max error {err} > tolerance {tol}); refuse it in requires=")


def floats(t) -> np.ndarray:
    return t.float().numpy()


# ---- 01 vector add: bitwise (tolerance 0) ----------------------------------------------------

def add_call(batch, depth, rows, cols, seed) -> Call:
    from ktile.ops.elementwise.reference import add as reference
    g = generator(seed)
    shape = (batch, depth, rows, cols)
    a, b = rand(shape, torch.bfloat16, g), rand(shape, torch.bfloat16, g)
    o = nan_like(a)
    return Call(load("01_vector_add").add, (a, b, o), {}, (o,), lambda: [floats(o)],
                lambda: [reference(floats(a), floats(b), hk.bf16)], 0.0)


@given(batch=BATCH, rows=ROWS, cols=COLS, seed=SEEDS)
def test_add(batch, rows, cols, seed):
    assert_right(add_call(batch, 1, rows, cols, seed))


# ---- 02 RMSNorm: three kernels ---------------------------------------------------------------

RMS_KERNELS = ("rmsnorm", "rmsnorm_staged", "rmsnorm_persistent")


def rmsnorm_call(name, batch, depth, rows, cols, seed, constants) -> Call:
    from ktile.ops.rmsnorm.reference import rmsnorm as reference, tolerance
    g = generator(seed)
    x = rand((batch, depth, rows, cols), torch.bfloat16, g)
    w = rand((1, 1, 1, cols), torch.bfloat16, g)
    o = nan_like(x)
    return Call(getattr(load("02_rmsnorm"), name), (x, w, o), constants, (o,),
                lambda: [floats(o)], lambda: [reference(floats(x), floats(w), 1e-6, hk.bf16)],
                lambda want: tolerance(want[0]))


def rms_constants(name: str, cols: int, blocks: int) -> dict:
    """The documented call: the staged kernels hold `staged_width(cols)` columns."""
    width = load("02_rmsnorm").staged_width(cols)
    return {"rmsnorm": {}, "rmsnorm_staged": {"WIDTH": width},
            "rmsnorm_persistent": {"WIDTH": width, "BLOCKS": blocks}}[name]


@pytest.mark.parametrize("name", RMS_KERNELS)
@given(batch=BATCH, rows=ROWS, cols=st.integers(1, 1100), blocks=st.integers(1, 4), seed=SEEDS)
def test_rmsnorm(name, batch, rows, cols, blocks, seed):
    assert_right(rmsnorm_call(name, batch, 1, rows, cols, seed, rms_constants(name, cols, blocks)))


RMS_WIDE = {
    "rmsnorm": st.fixed_dictionaries({"ROWS": st.sampled_from([16, 32]),
                                      "COLS": st.sampled_from([16, 32, 48, 64, 128])}),
    "rmsnorm_staged": st.fixed_dictionaries({"WIDTH": st.sampled_from([256, 512, 1024, 1536, 2048]),
                                             "COLS": st.sampled_from([16, 32, 48, 64, 128])}),
    "rmsnorm_persistent": st.fixed_dictionaries({
        "WIDTH": st.sampled_from([256, 512, 1024, 1536, 2048]),
        "COLS": st.sampled_from([16, 32, 48, 64, 128]), "BLOCKS": st.integers(1, 3)}),
}


# A staged kernel whose WIDTH is no multiple of COLS x 16 holds fewer columns than WIDTH says
# (WIDTH=256, COLS=32 held none: silent wrong answers until 6dfe022 refused them).
@pytest.mark.parametrize("name", RMS_KERNELS)
@given(data=st.data(), batch=BATCH, rows=st.integers(1, 40), cols=st.integers(1, 2100),
       seed=SEEDS)
def test_rmsnorm_other_constants(name, data, batch, rows, cols, seed):
    constants = data.draw(RMS_WIDE[name], label="constants")
    assert_right_or_refused(rmsnorm_call(name, batch, 1, rows, cols, seed, constants))


# ---- 03 softmax: batch and depth both in the grid -------------------------------------------

def softmax_call(batch, depth, rows, cols, seed, constants) -> Call:
    from ktile.ops.softmax.reference import softmax as reference, tolerance
    g = generator(seed)
    x = rand((batch, depth, rows, cols), torch.float32, g, scale=3.0)
    o = nan_like(x)
    return Call(load("03_softmax").softmax, (x, o), constants, (o,), lambda: [o.numpy()],
                lambda: [reference(x.numpy(), hk.fp32)], tolerance(hk.fp32))


@given(batch=BATCH, depth=st.integers(1, 3), rows=ROWS, cols=COLS, seed=SEEDS)
def test_softmax(batch, depth, rows, cols, seed):
    assert_right(softmax_call(batch, depth, rows, cols, seed, {}))


@given(batch=BATCH, depth=st.integers(1, 2), rows=ROWS, cols=COLS, seed=SEEDS,
       constants=st.fixed_dictionaries({"ROWS": st.sampled_from([16, 32]),
                                        "COLS": st.sampled_from([16, 32, 48, 64, 128])}))
def test_softmax_other_constants(batch, depth, rows, cols, seed, constants):
    assert_right_or_refused(softmax_call(batch, depth, rows, cols, seed, constants))


# ---- 04 GEMM: three kernels ------------------------------------------------------------------

GEMM_KERNELS = ("gemm", "gemm_warps", "gemm_wgmma")


def gemm_call(name, batch, depth, m, n, k, seed, constants) -> Call:
    from ktile.ops.gemm.reference import gemm_abt, tolerance
    g = generator(seed)
    a = rand((batch, depth, m, k), torch.bfloat16, g)
    b = rand((batch, depth, n, k), torch.bfloat16, g)
    c = torch.full((batch, depth, m, n), float("nan"))
    return Call(getattr(load("04_gemm"), name), (a, b, c), constants, (c,), lambda: [c.numpy()],
                lambda: [gemm_abt(floats(a), floats(b))],
                tolerance(floats(a), floats(b)))


@pytest.mark.parametrize("name", GEMM_KERNELS)
@given(batch=st.integers(1, 2), m=ROWS, n=ROWS, k=st.integers(1, 140), seed=SEEDS)
def test_gemm(name, batch, m, n, k, seed):
    assert_right(gemm_call(name, batch, 1, m, n, k, seed, {}))


GEMM_WIDE = {
    "gemm": st.fixed_dictionaries({"BM": st.sampled_from([16, 32]), "BN": st.sampled_from([16, 32]),
                                   "BK": st.sampled_from([16, 32, 64])}),
    "gemm_warps": st.fixed_dictionaries({"BK": st.sampled_from([16, 32, 64])}),
    "gemm_wgmma": st.fixed_dictionaries({"BK": st.sampled_from([0, 32, 64]),
                                         "STAGES": st.sampled_from([2, 3, 4])}),
}


@pytest.mark.parametrize("name", GEMM_KERNELS)
@given(data=st.data(), batch=st.integers(1, 2), m=ROWS, n=ROWS, k=st.integers(1, 140),
       seed=SEEDS)
def test_gemm_other_constants(name, data, batch, m, n, k, seed):
    constants = data.draw(GEMM_WIDE[name], label="constants")
    assert_right_or_refused(gemm_call(name, batch, 1, m, n, k, seed, constants))


# ---- 05 attention: batch, query heads (depth), grouped key/value heads, causal or not --------

def attention_call(batch, kv_heads, group, queries, keys, causal, seed, constants) -> Call:
    from ktile.ops.attention.reference import attention as reference, tolerance
    g = generator(seed)
    d = constants.get("D", 64)
    q = rand((batch, kv_heads * group, queries, d), torch.bfloat16, g)
    k = rand((batch, kv_heads, keys, d), torch.bfloat16, g)
    v = rand((batch, kv_heads, keys, d), torch.bfloat16, g)
    o = nan_like(q)
    return Call(load("05_attention").attention, (q, k, v, o), {**constants, "CAUSAL": causal},
                (o,), lambda: [floats(o)],
                lambda: [reference(floats(q), floats(k), floats(v), causal)],
                tolerance(floats(v)))


@given(batch=st.integers(1, 2), kv_heads=st.integers(1, 2), group=st.integers(1, 3),
       queries=st.integers(1, 80), keys=st.integers(1, 80), causal=st.booleans(), seed=SEEDS)
def test_attention(batch, kv_heads, group, queries, keys, causal, seed):
    assert_right(attention_call(batch, kv_heads, group, queries, keys, causal, seed, {}))


@given(batch=st.integers(1, 2), kv_heads=st.integers(1, 2), group=st.integers(1, 2),
       queries=st.integers(1, 80), keys=st.integers(1, 80), causal=st.booleans(), seed=SEEDS,
       constants=st.fixed_dictionaries({"D": st.sampled_from([32, 64, 128]),
                                        "BK": st.sampled_from([16, 32, 64])}))
def test_attention_other_constants(batch, kv_heads, group, queries, keys, causal, seed, constants):
    assert_right_or_refused(attention_call(batch, kv_heads, group, queries, keys, causal, seed,
                                           constants))


# ---- 06 control flow: the example's own reference ---------------------------------------------

def control_flow_call(batch, depth, rows, cols, seed, constants) -> Call:
    example = load("06_control_flow")
    g = generator(seed)
    x = rand((batch, depth, rows, cols), torch.float32, g, scale=2.0) + 0.3
    sums = torch.full((batch, depth, 1, rows), float("nan"))
    counts = torch.full((batch, depth, 1, rows), float("nan"))
    limits = {"threshold": constants.get("THRESHOLD", 2.5), "limit": constants.get("LIMIT", 4.0)}
    return Call(example.control_flow, (x, sums, counts), constants, (sums, counts),
                lambda: [sums[:, :, 0].numpy(), counts[:, :, 0].numpy()],
                lambda: [np.stack(per_depth, axis=1) for per_depth in zip(
                    *(example.reference(x[:, d:d + 1].numpy(), **limits) for d in range(depth)))],
                1e-3)


@given(batch=BATCH, rows=ROWS, cols=COLS, seed=SEEDS)
def test_control_flow(batch, rows, cols, seed):
    assert_right(control_flow_call(batch, 1, rows, cols, seed, {}))


@given(batch=BATCH, rows=ROWS, cols=COLS, seed=SEEDS,
       constants=st.fixed_dictionaries({"THRESHOLD": st.sampled_from([-1.0, 0.5, 2.5, 8.0]),
                                        "LIMIT": st.sampled_from([0.5, 4.0, 100.0])}))
def test_control_flow_other_constants(batch, rows, cols, seed, constants):
    assert_right_or_refused(control_flow_call(batch, 1, rows, cols, seed, constants))


# ---- 07 dropout: the keep mask bit-exact with Triton's, kept values x / (1 - p) ---------------

def dropout_call(batch, depth, rows, cols, seed, p, dropout_seed) -> Call:
    from ktile.ops.dropout.reference import dropout as reference
    x = rand((batch, depth, rows, cols), torch.float32, generator(seed))
    o = nan_like(x)
    return Call(load("07_dropout").dropout, (x, o), {"P": p, "SEED": dropout_seed}, (o,),
                lambda: [o.numpy().reshape(-1)],
                lambda: [reference(x.numpy().reshape(-1), p, dropout_seed)[0]], 0.0)


DROP_SEED = st.integers(0, 2**31 - 1)
# p whose 1 - p is the same in float32 as in float64 rounded to float32 (see below)
DROP_P = st.sampled_from([0.0, 0.1, 0.125, 0.25, 0.3, 0.5, 0.75, 0.875])


@given(rows=ROWS, cols=COLS, seed=SEEDS, p=DROP_P, dropout_seed=DROP_SEED)
def test_dropout(rows, cols, seed, p, dropout_seed):
    assert_right(dropout_call(1, 1, rows, cols, seed, p, dropout_seed))


@given(rows=st.integers(1, 40), cols=COLS, seed=SEEDS, p=st.floats(0.0, 0.95),
       dropout_seed=DROP_SEED)
def test_dropout_at_any_p(rows, cols, seed, p, dropout_seed):
    assert_right(dropout_call(1, 1, rows, cols, seed, p, dropout_seed))


# ---- 08 embedding: exact rows; ids outside the table give zero rows --------------------------

def embedding_call(batch, depth, tokens, vocab, width, seed) -> Call:
    from ktile.ops.embedding.reference import embedding as reference
    g = generator(seed)
    ids = torch.randint(-2, vocab + 2, (batch, depth, 1, tokens), generator=g, dtype=torch.int32)
    table = rand((1, 1, vocab, width), torch.bfloat16, g)
    out = torch.full((batch, depth, tokens, width), float("nan"), dtype=torch.bfloat16)
    return Call(load("08_embedding").embedding, (ids, table, out), {}, (out,),
                lambda: [floats(out).reshape(-1, width)],
                lambda: [reference(ids.numpy(), floats(table[0, 0]))], 0.0)


@given(tokens=ROWS, vocab=st.integers(1, 200), width=COLS, seed=SEEDS)
def test_embedding(tokens, vocab, width, seed):
    assert_right(embedding_call(1, 1, tokens, vocab, width, seed))


# ---- 09 KV-cache write: exact; padding slots (-1) write nothing ------------------------------

def kv_write_call(batch, heads, tokens, spare_slots, width, seed) -> Call:
    from ktile.ops.kv_cache.reference import kv_write as reference
    g = generator(seed)
    n_slots = tokens + spare_slots
    slots = torch.randperm(n_slots, generator=g)[:tokens].to(torch.int32)
    slots[torch.rand(tokens, generator=g) < 0.25] = -1           # padding tokens
    slots = slots.reshape(1, 1, 1, tokens)
    new = rand((batch, heads, tokens, width), torch.bfloat16, g)
    cache = rand((batch, heads, n_slots, width), torch.bfloat16, g)
    before = cache.clone()
    want = [reference(floats(before[b, h]), floats(new[b, h]), slots.numpy())
            for b in range(batch) for h in range(heads)]
    return Call(load("09_kv_scatter").kv_write, (new, slots, cache), {}, (cache,),
                lambda: [floats(cache[b, h]) for b in range(batch) for h in range(heads)],
                lambda: want, 0.0)


@given(heads=st.integers(1, 3), tokens=ROWS, spare_slots=st.integers(0, 40), width=COLS,
       seed=SEEDS)
def test_kv_write(heads, tokens, spare_slots, width, seed):
    assert_right(kv_write_call(1, heads, tokens, spare_slots, width, seed))


# ---- 10 LayerNorm backward: dx, and dw / db as per-block partials summed in a fixed order ----

def layernorm_dx_call(batch, depth, rows, cols, seed) -> Call:
    from ktile.ops.layernorm.reference import forward_stats, layernorm_backward, tolerance
    g = generator(seed)
    x, dy = (rand((batch, depth, rows, cols), torch.float32, g) for _ in range(2))
    w = rand((1, 1, 1, cols), torch.float32, g)
    mean, rstd = (torch.from_numpy(s).reshape(1, 1, 1, rows)
                  for s in forward_stats(x[0, 0].numpy(), 1e-5))
    blocks = -(-rows // 16)
    dx = nan_like(x)
    dw_part, db_part = (torch.full((batch, depth, blocks, cols), float("nan")) for _ in range(2))

    def want():
        dxs, dws, dbs = zip(*(layernorm_backward(x[b, d].numpy(), dy[b, d].numpy(),
                                                 w[0, 0].numpy(), mean.reshape(-1).numpy(),
                                                 rstd.reshape(-1).numpy())
                              for b in range(batch) for d in range(depth)))
        return [np.stack(dxs), np.stack(dws), np.stack(dbs)]
    return Call(load("10_layernorm_backward").layernorm_dx,
                (x, dy, w, mean, rstd, dx, dw_part, db_part), {}, (dx, dw_part, db_part),
                lambda: [dx.reshape(-1, rows, cols).numpy(),
                         dw_part.reshape(-1, blocks, cols).sum(1, dtype=torch.float64).numpy(),
                         db_part.reshape(-1, blocks, cols).sum(1, dtype=torch.float64).numpy()],
                want, lambda want: tolerance(*want))


def column_sum_call(batch, depth, rows, cols, seed) -> Call:
    from ktile.ops.layernorm.reference import tolerance
    part = rand((batch, depth, rows, cols), torch.float32, generator(seed))
    total = torch.full((batch, depth, 1, cols), float("nan"))
    return Call(load("10_layernorm_backward").column_sum, (part, total), {}, (total,),
                lambda: [total[:, :, 0].numpy()],
                lambda: [part.numpy().astype(np.float64).sum(axis=2)],
                lambda want: tolerance(*want))


@given(rows=ROWS, cols=COLS, seed=SEEDS)
def test_layernorm_dx(rows, cols, seed):
    assert_right(layernorm_dx_call(1, 1, rows, cols, seed))


@given(rows=st.integers(1, 200), cols=COLS, seed=SEEDS)
def test_column_sum(rows, cols, seed):
    assert_right(column_sum_call(1, 1, rows, cols, seed))


# ---- 11 vLLM integration: the user's SiLU-and-mul ---------------------------------------------

def user_silu_call(batch, depth, rows, d, seed) -> Call:
    from ktile.ops.activations.reference import silu_and_mul, tolerance
    x = rand((batch, depth, rows, 2 * d), torch.bfloat16, generator(seed))
    o = torch.full((batch, depth, rows, d), float("nan"), dtype=torch.bfloat16)
    return Call(load("11_vllm_integration").user_silu_and_mul, (x, o), {}, (o,),
                lambda: [floats(o)], lambda: [silu_and_mul(floats(x), hk.bf16)],
                lambda want: tolerance(want[0], hk.bf16))


@given(rows=ROWS, d=st.integers(1, 150), seed=SEEDS)
def test_user_silu_and_mul(rows, d, seed):
    assert_right(user_silu_call(1, 1, rows, d, seed))


# ---- every kernel: batch or depth its grid does not cover -------------------------------------

# kernel -> call builder of (batch, depth, seed). softmax and attention have both dimensions
# in their grids (fuzzed above); each of these lacks one or both, named in UNCOVERED_DIMS.
UNCOVERED = {
    "add": lambda b, d, s: add_call(b, d, 20, 70, s),
    **{name: (lambda b, d, s, name=name: rmsnorm_call(name, b, d, 20, 100, s,
                                                     rms_constants(name, 100, 2)))
       for name in RMS_KERNELS},
    **{name: (lambda b, d, s, name=name: gemm_call(name, b, d, 20, 20, 40, s, {}))
       for name in GEMM_KERNELS},
    "control_flow": lambda b, d, s: control_flow_call(b, d, 20, 70, s, {}),
    "dropout": lambda b, d, s: dropout_call(b, d, 20, 70, s, 0.5, 123),
    "embedding": lambda b, d, s: embedding_call(b, d, 20, 50, 70, s),
    "kv_write": lambda b, d, s: kv_write_call(b, d, 20, 5, 70, s),
    "layernorm_dx": lambda b, d, s: layernorm_dx_call(b, d, 20, 70, s),
    "column_sum": lambda b, d, s: column_sum_call(b, d, 20, 70, s),
    "user_silu_and_mul": lambda b, d, s: user_silu_call(b, d, 20, 70, s),
}
UNCOVERED_DIMS = {**{name: ("depth",) for name in ("add", *RMS_KERNELS, *GEMM_KERNELS,
                                                   "control_flow")},
                  "kv_write": ("batch",),
                  **{name: ("batch", "depth") for name in ("dropout", "embedding",
                                                           "layernorm_dx", "column_sum",
                                                           "user_silu_and_mul")}}


# Every one of these kernels once ignored a batch or depth its grid has no dimension for (found
# by this test at ea31e41): the rest of the output stayed unwritten, with no error. Each now
# refuses it in `requires=`.
@pytest.mark.parametrize("name, dim", [pytest.param(name, dim, id=f"{name}-{dim}")
                                       for name in sorted(UNCOVERED)
                                       for dim in UNCOVERED_DIMS[name]])
def test_a_batch_or_depth_outside_the_grid_is_refused(name, dim):
    """Two batches or depths where the grid launches blocks for one: right, or refused."""
    batch, depth = (2, 1) if dim == "batch" else (1, 2)
    assert_right_or_refused(UNCOVERED[name](batch, depth, 0))


def test_every_example_kernel_is_fuzzed():
    """A kernel added to an example without a property test here fails this."""
    from examples_index import EXAMPLE_NAMES
    fuzzed = {"add", *RMS_KERNELS, "softmax", *GEMM_KERNELS, "attention", "control_flow",
              "dropout", "embedding", "kv_write", "layernorm_dx", "column_sum",
              "user_silu_and_mul"}
    kernels = {kernel.name for name in EXAMPLE_NAMES for kernel, _ in load(name).KERNELS}
    assert kernels <= fuzzed, f"not fuzzed: {sorted(kernels - fuzzed)}"
