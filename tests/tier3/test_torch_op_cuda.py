"""`ktile.torch_op` on CUDA tensors (tier 3, skipped without a GPU): eager calls against torch,
`torch.compile(fullgraph=True)` (inductor), CUDA graph capture and replay with new inputs copied
in, and the CUDA-only refusals (misaligned data, a CPU/CUDA mix, a first call inside a capture).
"""
import pytest

import ktile as hk
from examples_index import load
from ktile.ops.rmsnorm.reference import tolerance

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.tier3

add = load("01_vector_add").add
rmsnorm = load("02_rmsnorm").rmsnorm

ADD_SHAPES = [(1, 1, 16, 64), (2, 1, 48, 192), (3, 1, 37, 100)]
RMSNORM_SHAPES = [(1, 16, 64), (2, 40, 256), (3, 21, 1000)]


def rand(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, generator=g, device="cuda").to(torch.bfloat16)


def torch_add(a, b):
    return (a.float() + b.float()).to(torch.bfloat16)


def torch_rmsnorm(x, w, eps=1e-6):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def rmsnorm_inputs(batch, rows, cols, seed=3):
    x = rand((batch, 1, rows, cols), seed)
    w = rand((1, 1, 1, cols), seed + 1)
    return x, w, torch.full_like(x, float("nan"))


def assert_rmsnorm_close(got, want):
    bound = tolerance(want.float().cpu().numpy())
    assert (got.float() - want.float()).abs().max().item() <= bound


@pytest.fixture(scope="module")
def add_op():
    return hk.torch_op(add)


@pytest.fixture(scope="module")
def rmsnorm_op():
    return hk.torch_op(rmsnorm)


# ---- eager -------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", ADD_SHAPES)
def test_add_matches_torch(add_op, shape):
    a, b = rand(shape, 1), rand(shape, 2)
    o = torch.full_like(a, float("nan"))
    add_op(a, b, o)
    assert torch.equal(o, torch_add(a, b))


@pytest.mark.parametrize("shape", RMSNORM_SHAPES)
def test_rmsnorm_matches_torch(rmsnorm_op, shape):
    x, w, o = rmsnorm_inputs(*shape)
    rmsnorm_op(x, w, o)
    assert_rmsnorm_close(o, torch_rmsnorm(x, w))


# ---- torch.compile -----------------------------------------------------------------------

def test_compile_fullgraph_matches_eager(add_op, rmsnorm_op):
    def f(a, b, w, summed, normed):
        add_op(a, b, summed)
        rmsnorm_op(summed, w, normed)
        return normed.float() * 2

    compiled = torch.compile(f, fullgraph=True)
    a, b = rand((2, 1, 40, 256), 1), rand((2, 1, 40, 256), 2)
    w = rand((1, 1, 1, 256), 3)
    eager_out = [torch.empty_like(a) for _ in range(2)]
    compiled_out = [torch.empty_like(a) for _ in range(2)]
    want = f(a, b, w, *eager_out)
    got = compiled(a, b, w, *compiled_out)
    assert torch.equal(got, want)
    assert torch.equal(compiled_out[1], eager_out[1])


# ---- CUDA graphs -------------------------------------------------------------------------

def capture(call):
    """torch.cuda.graphs' recipe: a warm-up call on a side stream (it builds the kernel), then
    the capture."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        call()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    return graph


def test_add_graph_replays_with_new_inputs(add_op):
    shape = (2, 1, 48, 192)
    a, b = rand(shape, 1), rand(shape, 2)
    o = torch.empty_like(a)
    graph = capture(lambda: add_op(a, b, o))
    for seed in (10, 20, 30):
        a.copy_(rand(shape, seed))
        b.copy_(rand(shape, seed + 1))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(o, torch_add(a, b))


def test_rmsnorm_graph_replays_with_new_inputs(rmsnorm_op):
    x, w, o = rmsnorm_inputs(2, 40, 256)
    graph = capture(lambda: rmsnorm_op(x, w, o))
    for seed in (10, 20):
        new_x, new_w, _ = rmsnorm_inputs(2, 40, 256, seed)
        x.copy_(new_x)
        w.copy_(new_w)
        graph.replay()
        torch.cuda.synchronize()
        assert_rmsnorm_close(o, torch_rmsnorm(x, w))


def test_first_call_inside_a_capture_is_refused():
    op = hk.torch_op(rmsnorm, constants={"eps": 1e-3})  # its own op, never called before
    x, w, o = rmsnorm_inputs(1, 16, 64)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(hk.InputError, match="first call(.|\n)*fix: call the op once before"):
        with torch.cuda.graph(graph):
            op(x, w, o)


# ---- CUDA-only refusals ------------------------------------------------------------------

def test_misaligned_data_is_refused(add_op):
    n = 16 * 64
    a = torch.empty(n + 1, dtype=torch.bfloat16, device="cuda")[1:].view(1, 1, 16, 64)
    b = rand((1, 1, 16, 64), 2)
    with pytest.raises(hk.InputError, match=r"'a' starts 2 bytes past(.|\n)*a\.clone\(\)"):
        add_op(a, b, torch.empty_like(b))


def test_cpu_cuda_mix_is_refused(add_op):
    a, b = rand((1, 1, 16, 64), 1), rand((1, 1, 16, 64), 2)
    with pytest.raises(hk.InputError, match="different devices: 'a' on cuda:0, 'b' on cpu"):
        add_op(a, b.cpu(), torch.empty_like(a))


def test_kernel_first_call_inside_a_capture_is_refused():
    """The same refusal for a kernel called directly (not through an op): its build and load
    cannot be captured."""
    x, w, o = rmsnorm_inputs(1, 16, 64)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(hk.InputError, match="inside a CUDA graph capture(.|\n)*call it once"):
        with torch.cuda.graph(graph):
            rmsnorm(x, w, o, eps=1e-2)                  # constants never built before


# ---- the eager fast path -----------------------------------------------------------------

def test_repeated_eager_calls_still_check_new_tensors(add_op):
    """After the first call, an eager call goes straight to the kernel's fast path; a call with
    other shapes, dtypes or devices still gets the full checks and their errors."""
    a, b = rand((1, 1, 16, 64), 1), rand((1, 1, 16, 64), 2)
    o = torch.empty_like(a)
    add_op(a, b, o)
    add_op(a, b, o)
    assert torch.equal(o, torch_add(a, b))
    with pytest.raises(hk.InputError, match="differ in shape"):
        add_op(a, rand((1, 1, 32, 64), 3), o)
    with pytest.raises(hk.InputError, match="must hold hk.bf16 elements, got float32"):
        add_op(a.float(), b, o)
    a2, b2 = rand((2, 1, 40, 100), 4), rand((2, 1, 40, 100), 5)
    o2 = torch.empty_like(a2)
    add_op(a2, b2, o2)                                  # a new signature: prepared, then run
    assert torch.equal(o2, torch_add(a2, b2))


def test_a_repeated_call_takes_the_fast_path(add_op, monkeypatch):
    """After its first calls, an eager call of the op on the same tensors goes straight to the
    kernel's prepared fast path: neither the dispatcher nor a new preparation runs. (Its host
    time against torch.add is measured by scripts/gpu_suite.py as `torch_op_ratio`.)"""
    from ktile.runtime import gpu
    a, b = rand((1, 1, 16, 64), 1), rand((1, 1, 16, 64), 2)
    o = torch.empty_like(a)
    add_op(a, b, o)
    add_op(a, b, o)
    monkeypatch.setattr(add_op, "overload", lambda *args: pytest.fail("went through torch"))
    monkeypatch.setattr(gpu.GpuCall, "_prepare", lambda self, args: pytest.fail("prepared"))
    o.fill_(float("nan"))
    add_op(a, b, o)
    assert torch.equal(o, torch_add(a, b))
