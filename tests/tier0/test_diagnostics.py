"""Bad kernels and bad calls: each is refused with a message that names the problem and the
fix, pointing at the kernel's own line (marked `# <- here` below)."""
import inspect

import numpy as np
import pytest

import ktile as hk
from ktile.errors import KernelError


def marked_line(fn, marker="# <- here") -> int:
    lines, first = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    for k, line in enumerate(lines):
        if marker in line:
            return first + k
    raise AssertionError("no marker in the test kernel")


def refused(make, *words, marker_fn=None, when="trace"):
    """Run make(), expect a KernelError whose text holds every word and whose location is the
    marked line of the kernel."""
    with pytest.raises(KernelError) as info:
        kernel = make()
        if when == "trace":
            kernel.trace()
    err = info.value
    text = str(err)
    for w in words:
        assert w in text, f"{w!r} not in:\n{text}"
    assert "Traceback" not in text and "internal" not in text.lower()
    return err


def assert_points_at(err, kernel_fn):
    assert err.loc is not None, str(err)
    assert err.loc.line == marked_line(kernel_fn), str(err)
    assert err.loc.source_line().strip() in str(err)


GRID = dict(grid=lambda p: (1, 1, 1))
T = hk.RT(hk.bf16, 16, 64)


def test_load_of_wrong_dtype():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "bf16", "fp32", ".to(")
    assert_points_at(err, k)


def test_store_of_wrong_dtype():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.bf16]):
        t = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 16))
        o[0, 0, 0, 0] = t  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "store", "convert first")
    assert_points_at(err, k)


def test_mismatched_tile_shapes():
    def k(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 64))
        y = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 32))
        o[0, 0, 0, 0] = x + y  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "different shapes", "16x64", "16x32")
    assert_points_at(err, k)


def test_mma_variant_layout_mismatch():
    def k(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        y = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        o[0, 0, 0, 0] = hk.mma(x, y, hk.zeros(hk.RT(hk.fp32, 16, 16)), "AB")  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "mma AB", "col layout", "ABt")
    assert_points_at(err, k)


def test_mma_inner_dimension_mismatch():
    def k(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 32))
        y = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
        acc += x @ y.T  # <- here
        o[0, 0, 0, 0] = acc
    err = refused(lambda: hk.kernel(**GRID)(k), "inner dimensions", "16x32", "16x16")
    assert_points_at(err, k)


def test_mma_accumulator_shape():
    def k(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 32, 16))
        acc += x @ x.T  # <- here
        o[0, 0, 0, 0] = acc
    err = refused(lambda: hk.kernel(**GRID)(k), "accumulator is 32x16", "16x16")
    assert_points_at(err, k)


def test_mma_operand_dtypes_differ():
    def k(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
        acc += x @ x.to(hk.fp16).T  # <- here
        o[0, 0, 0, 0] = acc
    err = refused(lambda: hk.kernel(**GRID)(k), "differ in dtype")
    assert_points_at(err, k)


def test_unknown_mma_variant():
    def k(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        o[0, 0, 0, 0] = hk.mma(x, x, hk.zeros(hk.RT(hk.fp32, 16, 16)), "BA")  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "unknown MMA variant", "ABt")
    assert_points_at(err, k)


def test_tile_rebound_to_another_type_in_runtime_loop():
    def k(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        for c in range(a.cols // 64):  # <- here
            acc = a[0, 0, 0, c].load(hk.RT(hk.bf16, 16, 64))
        o[0, 0, 0, 0] = acc.to(hk.bf16)
    err = refused(lambda: hk.kernel(**GRID)(k), "`acc`", "runtime loop", "keeps its type")
    assert_points_at(err, k)


def test_value_only_assigned_inside_runtime_loop():
    def k(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        for c in range(a.cols // 64):
            last = a[0, 0, 0, c].load(T)
        o[0, 0, 0, 0] = last + last  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "`last`", "only inside the runtime loop",
                  "before the runtime loop")
    assert_points_at(err, k)


def test_branches_give_different_types():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        x = hk.zeros(hk.RT(hk.fp32, 16, 16))
        if a.rows > 16:  # <- here
            x = hk.zeros(hk.RT(hk.fp32, 16, 32))
        o[0, 0, 0, 0] = x
    err = refused(lambda: hk.kernel(**GRID)(k), "`x`", "branch")
    assert_points_at(err, k)


def test_python_and_on_device_values():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        x = hk.zeros(hk.RT(hk.fp32, 16, 16))
        if a.rows > 16 and a.cols > 16:  # <- here
            x = x + 1.0
        o[0, 0, 0, 0] = x
    err = refused(lambda: hk.kernel(**GRID)(k), "no Python truth value", "`&`")
    assert_points_at(err, k)


def test_break_in_loop_over_device_values():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        for c in range(a.cols):  # <- here
            break
        o[0, 0, 0, 0] = hk.zeros(hk.RT(hk.fp32, 16, 16))
    err = refused(lambda: hk.kernel(**GRID)(k), "break, continue or return")
    assert_points_at(err, k)


def test_vector_broadcast_length():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        t = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))
        v = hk.row_sum(hk.zeros(hk.RT(hk.fp32, 32, 64)))
        o[0, 0, 0, 0] = t * v  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "length 32", "16x64")
    assert_points_at(err, k)


def test_tile_coordinate_with_five_parts():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = a[0, 0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 16))  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "1 to 4 parts", "got 5", "hk.tile_coord")
    assert_points_at(err, k)


def test_row_sum_of_a_vector():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        v = hk.row_sum(hk.zeros(hk.RT(hk.fp32, 16, 16)))
        o[0, 0, 0, 0] = hk.row_sum(v)  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "reduces a register tile", "vector")
    assert_points_at(err, k)


def test_rand_offsets_must_be_i32():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = hk.rand(1, hk.zeros(hk.RT(hk.fp32, 16, 16)))  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "rand offsets", "i32")
    assert_points_at(err, k)


def test_gather_indices_must_be_i32_vector():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        idx = hk.zeros(hk.RV(hk.fp32, 16))
        o[0, 0, 0, 0] = hk.gather(a, idx, hk.RT(hk.fp32, 16, 16))  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "gather row indices", "i32")
    assert_points_at(err, k)


def test_wait_for_nothing():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        hk.wait_for()  # <- here
        o[0, 0, 0, 0] = hk.zeros(hk.RT(hk.fp32, 16, 16))
    err = refused(lambda: hk.kernel(**GRID)(k), "wait_for() needs the tiles")
    assert_points_at(err, k)


def test_not_of_a_float_tile():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = ~hk.zeros(hk.RT(hk.fp32, 16, 16))  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "`~` applies to a mask")
    assert_points_at(err, k)


def test_non_positive_tile_shape():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = hk.zeros(hk.RT(hk.fp32, 0, 16))  # <- here
    err = refused(lambda: hk.kernel(**GRID)(k), "RT rows must be a positive Python int")
    assert_points_at(err, k)


def test_typo_in_an_attribute_points_at_its_line():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        r = hk.arch.block_idx.w  # <- here
        o[0, 0, r, 0] = hk.zeros(hk.RT(hk.fp32, 16, 16))
    err = refused(lambda: hk.kernel(**GRID)(k), "hk.arch.block_idx has no 'w'", "x, y, z")
    assert_points_at(err, k)


def test_kernel_returns_a_value():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        return a
    refused(lambda: hk.kernel(**GRID)(k), "returns nothing", "store results")


def test_grid_names_an_unknown_parameter():
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = hk.zeros(hk.RT(hk.fp32, 16, 16))
    err = refused(lambda: hk.kernel(grid=lambda p: (p.out.rows,))(k), "'out'",
                  "neither a tensor parameter nor a constant")
    assert err.loc is not None


def test_no_grid():
    def k(a: hk.Tensor[hk.fp32]):
        pass
    refused(lambda: hk.kernel(k), "needs a grid", "grid=lambda p")


@pytest.mark.parametrize("kind", [str, bool], ids=["str", "bool"])
def test_non_tensor_positional_parameter(kind):
    # `n: int` and `n: float` are runtime scalars; other annotations are refused
    def k(a: hk.Tensor[hk.fp32], n: kind):
        pass
    err = refused(lambda: hk.kernel(**GRID)(k), "positional parameter 'n' must be a tensor",
                  f"got {kind.__name__}", "runtime scalar (`n: float` or `n: int`)", "Constexpr")
    assert err.loc.line == k.__code__.co_firstlineno


def test_keyword_parameter_not_constexpr():
    # `*, n: int = 3` is a constant, as in hk-dsl; a list is no constant kind
    def k(a: hk.Tensor[hk.fp32], *, n: list = [3]):
        pass
    refused(lambda: hk.kernel(**GRID)(k), "'n' must be a constant", "hk.Constexpr[int]")


def test_unknown_constant():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32], *, BLOCK: hk.Constexpr[int] = 16):
        a[0, 0, 0, 0] = hk.zeros(hk.RT(hk.fp32, BLOCK, 16))
    with pytest.raises(KernelError, match="(?s)unknown constant 'BLOK'.*BLOCK"):
        k.trace(BLOK=32)


def test_unknown_target():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32]):
        a[0, 0, 0, 0] = hk.zeros(hk.RT(hk.fp32, 16, 16))
    with pytest.raises(KernelError, match="(?s)unknown target 'gfx9000'.*gfx1100"):
        k.trace(target="gfx9000")


def test_builtin_outside_a_kernel():
    with pytest.raises(KernelError, match="only be used inside a @kernel"):
        hk.zeros(hk.RT(hk.fp32, 16, 16))


# ---- bad calls: refused before anything runs -----------------------------------------------

@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


torch = pytest.importorskip("torch")


def bf16(*shape):
    return torch.zeros(shape, dtype=torch.bfloat16)


def test_call_with_wrong_dtype():
    with pytest.raises(hk.InputError, match=r"(?s)parameter 'b' must hold hk.bf16.*float32.*to\(torch.bfloat16\)"):
        add(bf16(1, 1, 16, 64), torch.zeros(1, 1, 16, 64), bf16(1, 1, 16, 64))


def test_call_with_wrong_rank():
    with pytest.raises(hk.InputError,
                       match=r"(?s)parameter 'a' has 5 dimensions.*\(2, 1, 1, 16, 64\).*reshape"):
        add(bf16(2, 1, 1, 16, 64), bf16(1, 1, 16, 64), bf16(1, 1, 16, 64))


def test_call_with_mismatched_shapes():
    with pytest.raises(hk.InputError, match=r"(?s)'a' \(1, 1, 16, 64\) and 'b' \(1, 1, 16, 65\)"):
        add(bf16(1, 1, 16, 64), bf16(1, 1, 16, 65), bf16(1, 1, 16, 64))


def test_call_with_too_few_tensors():
    with pytest.raises(hk.InputError, match=r"(?s)takes 3 tensors \(a, b, o\), got 2"):
        add(bf16(1, 1, 16, 64), bf16(1, 1, 16, 64))


def test_call_with_a_non_tensor():
    with pytest.raises(hk.InputError, match=r"(?s)parameter 'o' must be a tensor.*got list"):
        add(bf16(1, 1, 16, 64), bf16(1, 1, 16, 64), [1, 2])


def test_bf16_from_numpy_is_refused_with_the_fix():
    x = np.zeros((1, 1, 16, 64), np.float32)
    with pytest.raises(hk.InputError, match="(?s)numpy has no dtype.*torch.bfloat16"):
        add(x, x, x)
