"""Tensors of 1 to 4 dimensions on an NVIDIA GPU (issue #10): the seed's add on CUDA tensors of
every rank against torch, through the kernel call and its fast path, a torch op (eager, through
the dispatcher, compiled) and every example; 0-D and 5+-D refused before a launch. The same
checks as tests/tier0/test_tensor_ranks.py, on the device."""
import pytest

import ktile as hk
from ktile.errors import InputError
from tests.examples_index import EXAMPLE_NAMES, load
from tests.tier0.test_seed_add import add   # the seed's add, verbatim
from tests.tier0.test_tensor_ranks import SHAPES, _twice, add_2_parts

pytestmark = pytest.mark.tier3
torch = pytest.importorskip("torch")

IDS = [f"{len(s)}d-{'x'.join(map(str, s))}" for s in SHAPES]


def bf16(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g).to(torch.bfloat16).cuda()


def want(a, b):
    return (a.float() + b.float()).to(torch.bfloat16)


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_seed_add_on_cuda_tensors_of_every_rank(shape):
    a, b = bf16(shape, 1), bf16(shape, 2)
    o = torch.full(shape, float("nan"), dtype=torch.bfloat16, device="cuda")
    add(a, b, o)
    assert torch.equal(o, want(a, b))
    x, y = bf16(shape, 3), bf16(shape, 4)
    add(x, y, o)                                    # the same signature: the fast path
    assert torch.equal(o, want(x, y))


def test_a_slice_of_the_last_axis_on_the_gpu():
    base = bf16((37, 128), 1)
    o = torch.full((37, 128), 7.0, dtype=torch.bfloat16, device="cuda")
    add(base[:, :100], base[:, :100], o[:, :100])
    assert torch.equal(o[:, :100], want(base[:, :100], base[:, :100]))
    assert (o[:, 100:] == 7.0).all()


def test_indices_of_fewer_parts_on_the_gpu():
    a = torch.randn(40, 130, device="cuda")
    b = torch.randn(40, 130, device="cuda")
    o = torch.full_like(a, float("nan"))
    add_2_parts(a, b, o)
    assert torch.equal(o, a + b)


def test_other_ranks_are_refused_before_a_launch():
    x = bf16((16, 64), 1)
    o = torch.full_like(x, 7.0)
    with pytest.raises(InputError, match="'a' has 5 dimensions"):
        add(x[None, None, None], x, o)
    add(x, x, o)                                    # a first call: the fast path exists
    with pytest.raises(InputError, match="'b' is a 0-D tensor"):
        add(x, torch.tensor(1.0, dtype=torch.bfloat16, device="cuda"), o)
    assert torch.equal(o, want(x, x))


@pytest.fixture(scope="module")
def add_op():
    return hk.torch_op(add, name="add_of_any_rank_cuda")


@pytest.mark.parametrize("shape", [(100,), (37, 100), (1, 37, 100)])
def test_torch_op_on_cuda_tensors_of_lower_rank(add_op, shape):
    a, b = bf16(shape, 1), bf16(shape, 2)
    o = torch.full_like(a, float("nan"))
    add_op(a, b, o)
    assert torch.equal(o, want(a, b))
    o.fill_(float("nan"))
    torch.ops.ktile.add_of_any_rank_cuda(a, b, o)
    assert torch.equal(o, want(a, b))
    compiled = torch.compile(lambda a, b, o: add_op(a, b, o), fullgraph=True,
                             backend="aot_eager")
    o.fill_(float("nan"))
    compiled(a, b, o)
    assert torch.equal(o, want(a, b))


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_example_gives_the_same_bits_on_lower_rank_cuda_tensors(name):
    module = load(name)
    original, ranks = module.runner, []
    module.runner = lambda kernel, backend, device="cpu": _twice(
        original(kernel, backend, device), ranks)
    try:
        module.run_case(module.CASES[0], backend="auto", device="cuda")
    finally:
        module.runner = original
    assert ranks and min(ranks) < 4
