"""ktile.ops.dropout on CPU tensors (the interpreter), exact against
ktile/ops/dropout/reference.py (Triton's seeded dropout): 1-4 dimensions, ragged shapes, one
element row, p = 0 and 1, a new seed or p is no new trace, out=, torch.compile(fullgraph=True),
refusals naming the parameter."""
import numpy as np
import pytest
import torch

import ktile
from ktile.errors import InputError
from ktile.ops.dropout import reference as R
from ktile.ops.dropout.kernels import dropout as dropout_kernel
from ktile.ops.dropout.op import dropout
from bad_inputs import refused


@pytest.mark.parametrize("shape,p,seed", [((1, 1000), 0.5, 123), ((37, 90), 0.25, 2024),
                                          ((3, 5, 70), 0.75, 7), ((2, 2, 3, 20), 0.1, -5),
                                          ((100,), 0.5, 0), ((5, 40, 64), 0.3, 99)], ids=str)
def test_matches_reference(shape, p, seed):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(9))
    want, keep = R.dropout4(x.numpy(), p, seed)
    got = ktile.ops.dropout(x, p, seed)
    np.testing.assert_array_equal(got.numpy(), want)
    assert 0 < keep.mean() < 1


def test_bf16_rounds_once():
    x = torch.randn(20, 64).to(torch.bfloat16)
    want, _ = R.dropout4(x.float().numpy(), 0.3, 11)
    assert torch.equal(ktile.ops.dropout(x, 0.3, 11), torch.from_numpy(want).to(torch.bfloat16))


def test_p_zero_and_one():
    x = torch.randn(16, 64)
    assert torch.equal(ktile.ops.dropout(x, 1.0, 3), torch.zeros_like(x))
    np.testing.assert_array_equal(ktile.ops.dropout(x, 0.0, 3).numpy(), R.dropout4(x.numpy(), 0.0, 3)[0])


def test_new_seed_and_p_are_no_new_trace():
    x = torch.randn(8, 64)
    kernel = dropout_kernel("fp32")
    first = ktile.ops.dropout(x, 0.5, 1)
    traces = len(kernel._traces)
    a, b = ktile.ops.dropout(x, 0.5, 2), ktile.ops.dropout(x, 0.2, 2)
    assert not torch.equal(a, first) and not torch.equal(a, b)
    assert len(kernel._traces) == traces


def test_out_and_compile():
    x = torch.randn(12, 80)
    out = torch.empty_like(x)
    assert ktile.ops.dropout(x, 0.4, 5, out=out) is out
    f = torch.compile(lambda x, seed: dropout(x, 0.4, seed) + 1, fullgraph=True,
                      backend="aot_eager")
    assert torch.equal(f(x, 5), out + 1)


X = torch.randn(4, 16)
BAD = [
    ("p above one", lambda: ktile.ops.dropout(X, 1.5, 1), ("'p'", "1.5", "[0, 1]")),
    ("p negative", lambda: ktile.ops.dropout(X, -0.1, 1), ("'p'", "[0, 1]")),
    ("p nan", lambda: ktile.ops.dropout(X, float("nan"), 1), ("'p'", "probability")),
    ("p tensor", lambda: ktile.ops.dropout(X, torch.tensor(0.5), 1), ("'p'", "probability")),
    ("seed float", lambda: ktile.ops.dropout(X, 0.5, 1.5), ("'seed'", "int")),
    ("seed huge", lambda: ktile.ops.dropout(X, 0.5, 2 ** 40), ("'seed'", "2**31")),
    ("seed bool", lambda: ktile.ops.dropout(X, 0.5, True), ("'seed'", "int")),
    ("x int", lambda: ktile.ops.dropout(torch.zeros(4, 4, dtype=torch.int32), 0.5, 1),
     ("'x'", "int32")),
    ("out shape", lambda: ktile.ops.dropout(X, 0.5, 1, out=torch.empty(4, 15)),
     ("'out'", "shape")),
    ("out is x", lambda: ktile.ops.dropout(X, 0.5, 1, out=X), ("'out'", "shares memory")),
]


@pytest.mark.parametrize("action,words", [(a, w) for _, a, w in BAD], ids=[b[0] for b in BAD])
def test_refusals(action, words):
    refused(action, *words, kind=InputError)
