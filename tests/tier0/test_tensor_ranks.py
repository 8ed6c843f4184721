"""Tensors of 1 to 4 dimensions at every call boundary (issue #10): a tensor of fewer than 4 is
padded on the left with extents of 1 to (batch, depth, rows, cols), as hk-dsl pads, on the
interpreter, the GPU call (with a fake loader here), a torch op (fake tensors included); the
grid, the requirements and the kernel's extents see the padded shape; 0 and 5+ dimensions are
refused. Inside a kernel a global is indexed by 1 to 4 parts, padded on the left with zeros."""
import struct
import sys
import types

import numpy as np
import pytest

import ktile as hk
from ktile.errors import InputError, KernelError
from ktile.runtime import build as build_mod
from ktile.runtime import gpu
from ktile.runtime.arguments import check_arguments, padded_shape
from ktile.runtime.devices import Device
from tests.bad_inputs import points_at, refused
from tests.examples_index import EXAMPLE_NAMES, load, tensor_digest
from tests.tier0.test_seed_add import add   # the seed's add, verbatim

torch = pytest.importorskip("torch")

SENTINEL = 7.0


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add32(a: hk.Tensor[hk.fp32], b: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    """The seed's add on fp32 (which numpy has)."""
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.fp32, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


def bf16(shape, seed):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)


def f32(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---- the seed's add on every rank ----------------------------------------------------------

# a 3-D tensor is (depth, rows, cols): the seed's grid covers batch, not depth, so depth 1
SHAPES = [(64,), (1,), (100,), (16, 64), (37, 100), (1, 37, 100), (1, 5, 70), (3, 1, 5, 70)]


@pytest.mark.parametrize("shape", SHAPES, ids=[f"{len(s)}d-{'x'.join(map(str, s))}"
                                               for s in SHAPES])
def test_seed_add_on_torch_tensors_of_every_rank(shape):
    a, b = bf16(shape, 1), bf16(shape, 2)
    o = torch.full(shape, float("nan"), dtype=torch.bfloat16)
    add(a, b, o)
    assert o.shape == shape
    assert torch.equal(o, (a.float() + b.float()).to(torch.bfloat16))


@pytest.mark.parametrize("shape", SHAPES, ids=[f"{len(s)}d-{'x'.join(map(str, s))}"
                                               for s in SHAPES])
def test_add_on_numpy_arrays_of_every_rank(shape):
    a, b = f32(shape, 1), f32(shape, 2)
    o = np.full(shape, np.nan, np.float32)
    add32(a, b, o)
    np.testing.assert_array_equal(o, a + b)
    assert np.array_equal(o, torch.from_numpy(a).add(torch.from_numpy(b)).numpy())


def test_depths_the_seed_add_never_writes_are_refused_not_left_unwritten():
    """The seed's grid covers batch and its stores name depth 0: a (D, R, C) tensor with
    D > 1 would be computed at depth 0 only. A kernel that covers depth runs it."""
    a, b = bf16((3, 37, 100), 1), bf16((3, 37, 100), 2)
    o = torch.full((3, 37, 100), SENTINEL, dtype=torch.bfloat16)
    with pytest.raises(InputError, match=r"'o' has depth 3 .*writes it at depth 0, so depth 1 "
                                         r"would silently stay unwritten"):
        add(a, b, o)
    assert (o == SENTINEL).all()
    add_depths(a, b, o)
    assert torch.equal(o, (a.float() + b.float()).to(torch.bfloat16))
    o.fill_(SENTINEL)
    add(a.reshape(3, 1, 37, 100), b.reshape(3, 1, 37, 100), o.view(3, 1, 37, 100))  # batches
    assert torch.equal(o, (a.float() + b.float()).to(torch.bfloat16))


@hk.kernel(grid=lambda p: (1, 1, 1))
def two_depths(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    for d in range(2):   # unrolled: stores at depths 0 and 1, both constants
        o[0, d, 0, 0] = x[0, d, 0, 0].load(hk.RT(hk.fp32, 16, 16))


@hk.kernel(grid=lambda p: (1, 1, 1))
def every_depth(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    for d in hk.range(x.depth):   # a device loop: its store may reach any depth
        o[0, d, 0, 0] = x[0, d, 0, 0].load(hk.RT(hk.fp32, 16, 16))


def test_only_depths_no_store_can_reach_are_refused():
    x, o = f32((3, 16, 16), 1), np.zeros((3, 16, 16), np.float32)
    every_depth(x, o)
    np.testing.assert_array_equal(o, x)
    o2 = np.zeros_like(x[:2])
    two_depths(x[:2], o2)
    np.testing.assert_array_equal(o2, x[:2])
    with pytest.raises(InputError, match=r"writes it at depths \[0, 1\], so depth 2"):
        two_depths(x, np.zeros_like(x))


def test_a_one_dimensional_tensor_is_one_row():
    seen = []
    kernel = hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch),
                       requires=[(lambda p: seen.append(p.a.shape) is None, "records")])(
        add32.fn)
    a, b = f32((130,), 1), f32((130,), 2)
    o = np.zeros(130, np.float32)
    kernel(a, b, o)
    assert seen == [(1, 1, 1, 130)]
    np.testing.assert_array_equal(o, a + b)
    assert padded_shape((130,)) == (1, 1, 1, 130)
    assert padded_shape((5, 130)) == (1, 1, 5, 130)
    assert padded_shape((4, 5, 130)) == (1, 4, 5, 130)


@hk.kernel(grid=lambda p: (1, 1, 1))
def extents(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    """o[0, :4] = x's batch, depth, rows and cols as the kernel sees them."""
    v = hk.zeros(hk.RT(hk.fp32, 16, 64))   # rows past o's edge are not written
    o[0, 0] = (v + hk.to_float(x.batch * 1000000 + x.depth * 10000 + x.rows * 100 + x.cols))


@pytest.mark.parametrize("shape, seen", [((7,), (1, 1, 1, 7)), ((3, 7), (1, 1, 3, 7)),
                                         ((2, 3, 7), (1, 2, 3, 7)), ((5, 2, 3, 7), (5, 2, 3, 7))])
def test_the_kernel_sees_the_padded_extents(shape, seen):
    o = np.zeros(64, np.float32)
    extents(np.zeros(shape, np.float32), o)
    b, d, r, c = seen
    assert o[0] == b * 1000000 + d * 10000 + r * 100 + c


def test_writes_reach_the_callers_lower_rank_tensor():
    """The padded tensor is a view, not a copy: an output of 1 to 3 dimensions is written in
    place, and the argument the kernel sees shares its memory."""
    o = np.full((37, 100), SENTINEL, np.float32)
    [argument] = check_arguments(types.SimpleNamespace(name="k", params=add32.params[2:]), (o,))
    assert argument.shape == (1, 1, 37, 100) and np.shares_memory(argument.value, o)
    t = torch.zeros(37, 100)
    [argument] = check_arguments(types.SimpleNamespace(name="k", params=add32.params[2:]), (t,))
    assert argument.value.data_ptr() == t.data_ptr() and argument.value.shape == (1, 1, 37, 100)


def test_a_slice_of_the_last_axis_runs_where_it_lies():
    """Row stride >= cols, unit col stride: read and written in place, at any rank."""
    base_a, base_b = f32((37, 128), 1), f32((37, 128), 2)
    base_o = np.full((37, 128), SENTINEL, np.float32)
    add32(base_a[:, :100], base_b[:, :100], base_o[:, :100])
    np.testing.assert_array_equal(base_o[:, :100], base_a[:, :100] + base_b[:, :100])
    assert (base_o[:, 100:] == SENTINEL).all()   # the gaps between rows untouched


def test_a_lower_rank_input_must_still_lie_in_rows():
    a = torch.zeros(128)
    with pytest.raises(InputError, match="'a' has stride 2 in its last dimension"):
        add32(a[::2], torch.zeros(64), torch.zeros(64))


def test_shapes_used_together_compare_padded():
    """The seed's add reads a, b and o at one coordinate: (R, C) and (1, 1, R, C) agree, (C,)
    and (R, C) do not, and the message shows the shapes the kernel sees."""
    o = torch.zeros(1, 1, 16, 64, dtype=torch.bfloat16)
    add(bf16((16, 64), 1), bf16((1, 16, 64), 2), o)
    with pytest.raises(InputError, match=r"'a' \(1, 1, 1, 64\) and 'b' \(1, 1, 16, 64\)"):
        add(bf16((64,), 1), bf16((16, 64), 2), o)


# ---- refusals: 0 and 5+ dimensions --------------------------------------------------------

RANK_REFUSALS = {
    "0-d-torch": (lambda: (torch.tensor(1.0), torch.zeros(64), torch.zeros(64)), "'a'",
                  ("0-D", "a.reshape(1)")),
    "0-d-numpy-output": (lambda: (np.zeros(64, np.float32), np.zeros(64, np.float32),
                                  np.array(SENTINEL, np.float32)), "'o'", ("0-D",)),
    "5-d-torch": (lambda: (torch.zeros(64), torch.zeros(2, 1, 1, 1, 64), torch.zeros(64)),
                  "'b'", ("5 dimensions", "(2, 1, 1, 1, 64)", "b.reshape(-1, *b.shape[-3:])")),
    "5-d-numpy-output": (lambda: (np.zeros(64, np.float32), np.zeros(64, np.float32),
                                  np.full((1,) * 4 + (64,), SENTINEL, np.float32)), "'o'",
                         ("5 dimensions",)),
    "7-d-torch-output": (lambda: (torch.zeros(64), torch.zeros(64),
                                  torch.full((1,) * 6 + (64,), SENTINEL)), "'o'",
                         ("7 dimensions",)),
}


@pytest.mark.parametrize("case", RANK_REFUSALS.values(), ids=RANK_REFUSALS.keys())
def test_a_rank_outside_one_to_four_is_refused_before_anything_runs(case):
    make, name, words = case
    a, b, o = make()
    refused(lambda: add32(a, b, o), f"parameter {name}", "1 to 4 dimensions", *words, "fix:",
            kind=InputError)
    if o.ndim > 0 and name == "'o'":
        assert (o == SENTINEL).all()


# ---- the examples on lower-rank tensors ----------------------------------------------------

def _lowered(value):
    """`value` without its leading extents of 1 (a view; at least 1 dimension left)."""
    while getattr(value, "ndim", 0) > 1 and value.shape[0] == 1:
        value = value[0]
    return value


def _copy(value):
    return value.clone() if isinstance(value, torch.Tensor) else np.array(value, copy=True)


def _same_bits(x, y) -> bool:
    return tuple(x.shape) == tuple(y.shape) and tensor_digest(x) == tensor_digest(y)


def _twice(call, ranks):
    """A kernel call made on the example's 4-D tensors and again on copies with their leading
    1s dropped (aliasing kept); the two must leave bit-identical tensors."""
    def both(*args, **options):
        copies = {}
        for a in args:
            if hasattr(a, "shape") and id(a) not in copies:
                copies[id(a)] = _copy(a)
        lowered = [_lowered(copies[id(a)]) if id(a) in copies else a for a in args]
        call(*args, **options)
        call(*lowered, **options)
        ranks.extend(len(x.shape) for x in lowered if hasattr(x, "shape"))
        for a in args:
            if id(a) in copies:
                assert _same_bits(copies[id(a)], a), "a lower-rank call computed otherwise"
    return both


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_example_gives_the_same_bits_on_lower_rank_tensors(name):
    module = load(name)
    original, ranks = module.runner, []
    module.runner = lambda kernel, backend, device="cpu": _twice(
        original(kernel, backend, device), ranks)
    try:
        module.run_case(module.CASES[0])
    finally:
        module.runner = original
    assert ranks and min(ranks) < 4, f"{name}: no tensor of fewer than 4 dimensions was passed"


def test_the_examples_add_refuses_a_three_dimensional_tensor_of_several_depths():
    """(D, R, C) is depth D: the example's requirement (its grid covers batch, not depth) sees
    the padded depth and refuses the call rather than leave depths 1.. unwritten."""
    example_add = load("01_vector_add").add
    x = bf16((2, 16, 64), 1)
    refused(lambda: example_add(x, x, torch.zeros_like(x)), "o.depth must be 1",
            "(1, 2, 16, 64)", kind=InputError)


# ---- torch ops ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def add_op():
    return hk.torch_op(add, name="add_of_any_rank")


@pytest.mark.parametrize("shape", [(100,), (37, 100), (1, 37, 100), (2, 1, 37, 100)])
def test_torch_op_on_every_rank(add_op, shape):
    a, b = bf16(shape, 1), bf16(shape, 2)
    o = torch.full(shape, float("nan"), dtype=torch.bfloat16)
    add_op(a, b, o)
    assert torch.equal(o, (a.float() + b.float()).to(torch.bfloat16))
    o.fill_(float("nan"))
    torch.ops.ktile.add_of_any_rank(a, b, o)   # through the dispatcher
    assert torch.equal(o, (a.float() + b.float()).to(torch.bfloat16))


def test_torch_op_on_fake_tensors_of_lower_rank(add_op):
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        a, b = torch.empty(37, 100, dtype=torch.bfloat16), torch.empty(1, 37, 100,
                                                                         dtype=torch.bfloat16)
        torch.ops.ktile.add_of_any_rank(a, b, torch.empty(100 * 37, dtype=torch.bfloat16)
                                        .view(37, 100))
        with pytest.raises(InputError, match="'o' has 5 dimensions"):
            torch.ops.ktile.add_of_any_rank(a, a, torch.empty(1, 1, 1, 37, 100,
                                                              dtype=torch.bfloat16))
        with pytest.raises(InputError, match="'a' is a 0-D tensor"):
            torch.ops.ktile.add_of_any_rank(torch.empty((), dtype=torch.bfloat16), a, a)
        with pytest.raises(InputError, match=r"'a' \(100,\) and 'b' \(37, 100\).*differ"):
            torch.ops.ktile.add_of_any_rank(torch.empty(100, dtype=torch.bfloat16), a, a)


def test_torch_op_on_meta_tensors_of_lower_rank(add_op):
    a = torch.empty(37, 100, dtype=torch.bfloat16, device="meta")
    add_op(a, a, torch.empty_like(a))


def test_torch_compile_of_lower_rank_tensors(add_op):
    def f(a, b, o):
        add_op(a, b, o)
        return o.float() * 2

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    a, b = bf16((37, 100), 1), bf16((37, 100), 2)
    o_eager, o_compiled = torch.zeros_like(a), torch.zeros_like(a)
    assert torch.equal(compiled(a, b, o_compiled), f(a, b, o_eager))
    assert torch.equal(o_compiled, o_eager)


def test_torch_op_refuses_other_ranks_on_a_repeated_cpu_call(add_op):
    """After a first CPU call the op checks layouts itself; a 0-D tensor is refused by rank,
    not by a raw IndexError of its missing last stride."""
    a = bf16((16, 64), 1)
    add_op(a, a, torch.zeros_like(a))
    with pytest.raises(InputError, match="'b' is a 0-D tensor"):
        add_op(a, torch.tensor(1.0, dtype=torch.bfloat16), torch.zeros_like(a))


# ---- the GPU call, with a fake loader --------------------------------------------------------

class FakeKernel:
    def __init__(self, log):
        self.log = log

    def bind(self, grid, pointers):
        import ctypes
        from ktile.runtime.loaders.packing import GLOBAL_ARG_BYTES

        def launch():
            structs = [ctypes.string_at(pointers[i], GLOBAL_ARG_BYTES) for i in range(3)]
            self.log.append((grid, structs))
        return launch


@pytest.fixture
def launches(monkeypatch):
    log = []
    loader = types.ModuleType("fake_rank_loader")
    loader.MAX_GRID = (2**31 - 1, 65535, 65535)
    loader.load = lambda built, index: FakeKernel(log)
    monkeypatch.setitem(sys.modules, "fake_rank_loader", loader)
    monkeypatch.setitem(gpu.LOADERS, "nvidia", "fake_rank_loader")
    monkeypatch.setattr(build_mod, "build_trace", lambda trace: None)
    monkeypatch.setattr(gpu, "device", lambda index: Device(index, "nvidia", "9.0", "fake H200"))
    monkeypatch.setattr(gpu, "_LOADED", {})
    return log


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.depth))
def add_depths(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    """The seed's add gridded over depth, as a 3-D (D, R, C) tensor needs."""
    idx = hk.tile_coord(0, hk.arch.block_idx.z, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


@pytest.mark.parametrize("kernel, shape, padded, strides", [
    (add, (100,), (1, 1, 1, 100), (1, 1, 1, 1)),
    (add, (37, 100), (1, 1, 37, 100), (1, 1, 100, 1)),
    (add_depths, (3, 37, 100), (1, 3, 37, 100), (1, 3700, 100, 1)),
], ids=["1d", "2d", "3d"])
def test_the_gpu_call_passes_the_padded_extents(launches, kernel, shape, padded, strides):
    call = gpu.GpuCall(kernel, None, {})
    a, b, o = (torch.zeros(shape, dtype=torch.bfloat16) for _ in range(3))
    call.fast((a, b, o))
    grid, structs = launches[-1]
    assert grid == (2, 1 if len(shape) == 1 else 3, padded[1])
    assert structs[2][8:] == struct.pack("<8q", *padded, *strides)
    fast = call.fast
    call.fast(tuple(torch.zeros(shape, dtype=torch.bfloat16) for _ in range(3)))
    assert call.fast is fast and len(launches) == 2   # the same signature: the fast path


def test_the_gpu_call_pads_a_slice_of_the_last_axis(launches):
    base = torch.zeros(37, 128, dtype=torch.bfloat16)
    gpu.GpuCall(add, None, {}).fast((base[:, :100], base[:, :100].clone(),
                                     torch.zeros(37, 100, dtype=torch.bfloat16)))
    assert launches[-1][1][0][8:] == struct.pack("<8q", 1, 1, 37, 100, 1, 1, 128, 1)


def test_the_gpu_call_refuses_other_ranks_before_a_launch(launches):
    call = gpu.GpuCall(add, None, {})
    x = torch.zeros(16, 64, dtype=torch.bfloat16)
    with pytest.raises(InputError, match="'a' has 5 dimensions"):
        call.fast((x[None, None, None], x, x))
    call.fast((x, x.clone(), x.clone()))
    with pytest.raises(InputError, match="'o' is a 0-D tensor"):     # from the fast path too
        call.fast((x, x.clone(), torch.tensor(0.0, dtype=torch.bfloat16)))
    assert len(launches) == 1


# ---- indexing a global by 1 to 4 parts -------------------------------------------------------

@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), 1))
def add_2_parts(a: hk.Tensor[hk.fp32], b: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    t = hk.RT(hk.fp32, 16, 64)
    o.tile[r, c] = a[r, c].load(t) + b.tile[0, 0, r, c].load(t)


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), 1, 1))
def add_1_part(a: hk.Tensor[hk.fp32], b: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    c = hk.arch.block_idx.x
    t = hk.RT(hk.fp32, 16, 64)   # one row of it inside a 1-D tensor
    o[c] = a.tile[c].load(t) + b[0, c].load(t)


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.depth))
def add_3_parts(a: hk.Tensor[hk.fp32], b: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    d, r, c = hk.arch.block_idx.z, hk.arch.block_idx.y, hk.arch.block_idx.x
    t = hk.RT(hk.fp32, 16, 64)
    o[d, r, c] = a.tile[d, r, c].load(t) + b[hk.tile_coord(0, d, r, c)].load(t)


@pytest.mark.parametrize("kernel, shape", [(add_2_parts, (40, 130)), (add_1_part, (130,)),
                                           (add_3_parts, (3, 40, 130))],
                         ids=["2-parts", "1-part", "3-parts"])
def test_a_global_indexed_by_fewer_parts_pads_them_with_zeros(kernel, shape):
    a, b = f32(shape, 1), f32(shape, 2)
    o = np.full(shape, np.nan, np.float32)
    kernel(a, b, o)
    np.testing.assert_array_equal(o, a + b)


@pytest.mark.parametrize("target", ["gfx1100", "gfx1201", "gfx942", "gfx950", "sm_90a"])
def test_the_short_index_traces_and_translates(target):
    """`a[r, c]` and `a.tile[r, c]` are loads at (0, 0, r, c): two loads and a store, in C++
    for every target."""
    ir = add_2_parts.trace(target).dump()
    assert ir.count('"kt.load"') == 2 and ir.count('"kt.store"') == 1
    assert add_2_parts.source(target=target)


def _five_parts(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    o[0, 0] = a[0, 0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))  # <- here


def _no_parts(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    o.tile[()] = a[0, 0].load(hk.RT(hk.fp32, 16, 64))  # <- here


@pytest.mark.parametrize("fn, count", [(_five_parts, "got 5"), (_no_parts, "got 0")],
                         ids=["five-parts", "no-parts"])
def test_an_index_of_another_number_of_parts_is_refused_at_its_line(fn, count):
    kernel = hk.kernel(grid=lambda p: (1, 1, 1))(fn)
    err = refused(lambda: kernel.trace(), "1 to 4 parts", count, "g[r, c]")
    points_at(err, fn)
    assert isinstance(err, KernelError)
