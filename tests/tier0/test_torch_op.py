"""`ktile.torch_op`: a kernel as a torch.library custom op on the CPU (interpreter backend).

It registers with the kernel's written parameters as mutated arguments, matches the references
eagerly and under `torch.compile(fullgraph=True)`, passes `torch.library.opcheck`, and refuses
bad tensors with a ktile `InputError` naming the parameter and the fix.

torch.compile runs with backend="aot_eager": it exercises what the op has to get right (Dynamo
tracing through the fake implementation, functionalization of the mutation, the real op at run
time); inductor's CPU codegen adds nothing op-specific and costs ~18 s of C++ compilation per
graph on this 2-core machine, over this file's whole budget.
"""
import subprocess
import sys

import pytest

import ktile as hk
from examples_index import ROOT, load
from ktile.ops.elementwise.reference import add as add_reference
from ktile.ops.rmsnorm.reference import rmsnorm as rmsnorm_reference, tolerance

torch = pytest.importorskip("torch")

add = load("01_vector_add").add
rmsnorm = load("02_rmsnorm").rmsnorm


def rand(shape, seed, dtype=torch.bfloat16):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def add_inputs(shape=(2, 1, 37, 100)):
    return rand(shape, 1), rand(shape, 2), torch.full(shape, float("nan"), dtype=torch.bfloat16)


def rmsnorm_inputs(batch=2, rows=21, cols=300):
    x = rand((batch, 1, rows, cols), 3)
    w = rand((1, 1, 1, cols), 4)
    return x, w, torch.full_like(x, float("nan"))


def add_expected(a, b):
    return torch.from_numpy(add_reference(a.float().numpy(), b.float().numpy(), hk.bf16))


def assert_rmsnorm_matches(x, w, o, eps=1e-6):
    want = rmsnorm_reference(x.float().numpy(), w.float().numpy(), eps, hk.bf16)
    err = (o.float() - torch.from_numpy(want)).abs().max().item()
    assert err <= tolerance(want)


@pytest.fixture(scope="module")
def add_op():
    return hk.torch_op(add)


@pytest.fixture(scope="module")
def rmsnorm_op():
    return hk.torch_op(rmsnorm)


# ---- registration ------------------------------------------------------------------------

def test_exported_lazily_without_importing_torch():
    probe = "import sys, ktile; print('torch' in sys.modules, callable(ktile.torch_op))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]


def test_registers_with_written_params_mutated(add_op):
    assert add_op.name == "ktile::add"
    assert add_op.mutated == ("o",)
    assert torch.ops.ktile.add.default is add_op.overload
    schema = str(add_op.overload._schema)
    assert schema.startswith("ktile::add(Tensor a, Tensor b, Tensor(a") and schema.endswith("-> ()")
    assert "!) o)" in schema


def test_same_kernel_and_constants_give_the_same_op(add_op, rmsnorm_op):
    assert hk.torch_op(add) is add_op
    assert hk.torch_op(rmsnorm, constants={"ROWS": 16}) is rmsnorm_op  # ROWS=16 is its default


def test_other_constants_get_their_own_stable_name(rmsnorm_op):
    op = hk.torch_op(rmsnorm, constants={"eps": 1e-5})
    assert op is not rmsnorm_op and op.constants["eps"] == 1e-5
    assert op.name.startswith("ktile::rmsnorm_") and len(op.name) == len("ktile::rmsnorm_") + 8
    assert hk.torch_op(rmsnorm, constants={"eps": 1e-5}) is op
    x, w, o = rmsnorm_inputs(1, 16, 64)
    op(x, w, o)
    assert_rmsnorm_matches(x, w, o, eps=1e-5)


def test_a_name_taken_by_another_kernel_is_refused():
    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
    def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
        o[idx] = a[idx].load(hk.RT(hk.bf16, 16, 64))

    hk.torch_op(load("01_vector_add").add)
    with pytest.raises(hk.InputError, match=r"ktile::add is already taken(.|\n)*fix: .*name="):
        hk.torch_op(add)
    copy = hk.torch_op(add, name="copy_first_for_test")
    assert copy.name == "ktile::copy_first_for_test"
    a, b, o = add_inputs()
    copy(a, b, o)
    assert torch.equal(o, a)


def _make_scale(factor):
    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
    def scale(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
        o[idx] = x[idx].load(hk.RT(hk.fp32, 16, 64)) * factor
    return scale


def test_a_redefined_kernel_rebinds_its_op():
    """A re-run definition (a notebook cell) keeps its op, which now runs the new kernel."""
    first = hk.torch_op(_make_scale(2.0), name="scale_for_test")
    second = hk.torch_op(_make_scale(3.0), name="scale_for_test")
    assert second is first
    x, o = rand((1, 1, 16, 64), 5, torch.float32), torch.zeros(1, 1, 16, 64)
    first(x, o)
    assert torch.allclose(o, x * 3.0)


def test_a_bad_name_is_refused():
    with pytest.raises(hk.InputError, match="not a Python identifier"):
        hk.torch_op(add, name="ktile::add2")
    with pytest.raises(hk.InputError, match="takes an @hk.kernel"):
        hk.torch_op(lambda a: a)


# ---- eager calls -------------------------------------------------------------------------

def test_add_matches_reference(add_op):
    a, b, o = add_inputs()
    assert add_op(a, b, o) is None
    assert torch.equal(o, add_expected(a, b))


def test_add_through_torch_ops(add_op):
    a, b, o = add_inputs((1, 1, 16, 64))
    torch.ops.ktile.add(a, b, o)
    assert torch.equal(o, add_expected(a, b))


def test_rmsnorm_matches_reference(rmsnorm_op):
    x, w, o = rmsnorm_inputs()
    rmsnorm_op(x, w, o)
    assert_rmsnorm_matches(x, w, o)


def test_meta_tensors_check_shapes_and_do_nothing(add_op):
    a = torch.empty(2, 1, 37, 100, dtype=torch.bfloat16, device="meta")
    add_op(a, a, torch.empty_like(a))


# ---- torch.compile -----------------------------------------------------------------------

@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph_matches_eager(add_op, dynamic):
    def f(a, b, o):
        add_op(a, b, o)
        return o.float() * 2 + 1

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager", dynamic=dynamic)
    for shape in [(2, 1, 37, 100), (1, 1, 20, 70)]:
        a, b, _ = add_inputs(shape)
        o_eager, o_compiled = torch.zeros_like(a), torch.zeros_like(a)
        want = f(a, b, o_eager)
        assert torch.equal(compiled(a, b, o_compiled), want)
        assert torch.equal(o_compiled, o_eager)  # the mutation reaches the caller's tensor


def test_compile_refuses_a_wrong_dtype_at_trace_time(add_op):
    a, b, o = add_inputs((1, 1, 16, 64))
    compiled = torch.compile(lambda a, b, o: add_op(a, b, o), fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match="parameter 'b' must hold hk.bf16"):
        compiled(a, b.float(), o)


# ---- opcheck -----------------------------------------------------------------------------

def test_opcheck_add(add_op):
    results = torch.library.opcheck(add_op.overload, add_inputs((1, 1, 20, 70)))
    assert set(results.values()) == {"SUCCESS"}


def test_opcheck_rmsnorm(rmsnorm_op):
    results = torch.library.opcheck(rmsnorm_op.overload, rmsnorm_inputs(1, 16, 64))
    assert set(results.values()) == {"SUCCESS"}


# ---- bad inputs --------------------------------------------------------------------------

def test_wrong_dtype(add_op):
    a, b, o = add_inputs()
    with pytest.raises(hk.InputError, match=r"parameter 'b' must hold hk.bf16(.|\n)*fix: "):
        add_op(a, b.float(), o)


def test_rank_outside_one_to_four(add_op):
    a, b, o = add_inputs()
    with pytest.raises(hk.InputError, match="parameter 'a' has 5 dimensions"):
        add_op(a[None], b, o)
    with pytest.raises(hk.InputError, match="parameter 'b' is a 0-D tensor"):
        add_op(a, b[0, 0, 0, 0], o)
    # through torch's dispatcher: the op's layout check refuses it as the kernel call does
    with pytest.raises(hk.InputError, match="parameter 'o' is a 0-D tensor"):
        add_op.overload(a, b, o[0, 0, 0, 0])


def test_non_contiguous_last_dim(add_op):
    a, b, o = add_inputs((1, 1, 64, 64))
    with pytest.raises(hk.InputError, match=r"parameter 'b' has stride 64(.|\n)*b\.contiguous\(\)"):
        add_op(a, b.transpose(2, 3), o)
    with pytest.raises(hk.InputError, match=r"parameter 'o' has stride(.|\n)*freshly allocated"):
        add_op(a, b, o.transpose(2, 3))


def test_expanded_output(add_op):
    a, b, _ = add_inputs((1, 1, 16, 64))
    o = torch.zeros(1, 1, 1, 64, dtype=torch.bfloat16).expand(1, 1, 16, 64)
    with pytest.raises(hk.InputError, match=r"parameter 'o' is written but(.|\n)*fix: "):
        add_op(a, b, o)


def test_non_contiguous_last_dim_through_torch_ops(add_op):
    """Checked in the cpu implementation too: the error comes through the dispatcher intact."""
    a, b, o = add_inputs((1, 1, 64, 64))
    with pytest.raises(hk.InputError, match="parameter 'a' has stride 64"):
        torch.ops.ktile.add(a.transpose(2, 3), b, o)


def test_mismatched_shapes(add_op):
    a, b, o = add_inputs()
    with pytest.raises(hk.InputError, match=r"'a' \(2, 1, 37, 100\) and 'b' \(2, 1, 37, 99\)"):
        add_op(a, b[..., :99], o)


def test_mismatched_shapes_in_the_fake_implementation(add_op):
    a = torch.empty(1, 1, 16, 64, dtype=torch.bfloat16, device="meta")
    with pytest.raises(hk.InputError, match=r"'a' \(1, 1, 16, 64\) and 'o' \(1, 1, 16, 32\)"):
        torch.ops.ktile.add(a, a, a[..., :32])


def test_device_mix(add_op):
    a, b, o = add_inputs()
    with pytest.raises(hk.InputError, match="different devices: 'a' on cpu, 'b' on meta"):
        add_op(a, b.to("meta"), o)


def test_not_a_tensor_and_constants_at_the_call(add_op, rmsnorm_op):
    a, b, o = add_inputs()
    with pytest.raises(hk.InputError, match="parameter 'b' must be a torch.Tensor"):
        add_op(a, b.float().numpy(), o)
    x, w, y = rmsnorm_inputs()
    with pytest.raises(hk.InputError, match="constants were bound(.|\n)*constants=\\{"):
        rmsnorm_op(x, w, y, eps=1e-5)


def _shifted_output(rows=0, columns=1):
    """Inputs and an output that is a view of `a`'s buffer, `rows` rows and `columns` columns on."""
    base = rand((1, 1, 16 + rows, 64 + columns), 5)
    return base[..., :16, :64], rand((1, 1, 16, 64), 6), base[..., rows:rows + 16, columns:]


def _expanded_output():
    a, b, _ = add_inputs((1, 1, 16, 64))
    return a, b, torch.zeros(1, 1, 1, 64, dtype=torch.bfloat16).expand(1, 1, 16, 64)


def _overlapping_rows_output():
    a, b, _ = add_inputs((1, 1, 16, 64))
    return a, b, torch.as_strided(torch.zeros(16 * 32 + 64, dtype=torch.bfloat16), (1, 1, 16, 64),
                                  (1024, 1024, 32, 1))


def _transposed_input():
    a, b, o = add_inputs((1, 1, 64, 64))
    return a, b.transpose(2, 3), o


@pytest.mark.parametrize("make", [_transposed_input, _expanded_output, _overlapping_rows_output,
                                  _shifted_output, lambda: _shifted_output(8, 0)],
                         ids=["transposed-input", "expanded-output", "rows-overlap",
                              "output-over-input", "output-rows-over-input"])
def test_an_op_call_is_refused_as_the_kernel_call_is(add_op, make):
    """The op checks layouts, writability and aliasing with the kernel call's own checks, so
    both say the same, through the dispatcher too."""
    a, b, o = make()
    with pytest.raises(hk.InputError) as by_kernel:
        add(a, b, o)
    with pytest.raises(hk.InputError) as by_op:
        torch.ops.ktile.add(a, b, o)
    assert str(by_op.value) == str(by_kernel.value)
    assert "fix:" in str(by_op.value)
