"""The bad-input corpus, kernel-authoring half (issue #9): each case is a mistake a kernel author
makes, refused with a KernelError whose text names the problem and the fix and that points at
the author's line (marked `# <- here`). Cases share shapes, so most are rows of a table: the
kernel body (or a decoration), and the words the message must hold."""
import numpy as np
import pytest

import ktile as hk
from bad_inputs import points_at, refused

GRID = dict(grid=lambda p: (1, 1, 1))


def traced(fn, **decoration):
    """Decorate and trace `fn` for the default target (what the corpus refuses)."""
    return lambda: hk.kernel(**{**GRID, **decoration})(fn).trace()


# ---- annotations: tensors of unknown element types, in every spelling ----------------------

def _tensor_of(spelling):
    def make():
        def k(a: hk.Tensor[spelling]):  # <- here
            pass
        return k
    return make


@pytest.mark.parametrize("spelling", ["fp64", "float64", "f64", "bool", "", np.float64,
                                      np.int64, float, int, None, "bfloat"],
                         ids=lambda s: repr(s))
def test_tensor_of_an_unknown_dtype(spelling):
    err = refused(_tensor_of(spelling), "not a ktile element type", "hk.bf16")
    assert err.loc is not None and err.loc.source_line().strip().startswith("def k(a: hk.Tensor")


def test_tensor_of_torch_float64():
    torch = pytest.importorskip("torch")
    refused(_tensor_of(torch.float64), "torch.float64", "not a ktile element type")


@pytest.mark.parametrize("kind", [list, dict, tuple, type(None), object, np.ndarray],
                         ids=lambda k: k.__name__)
def test_constexpr_of_a_kind_no_constant_has(kind):
    def make():
        def k(a: hk.Tensor[hk.fp32], *, N: hk.Constexpr[kind] = None):  # <- here
            pass
        return k
    err = refused(make, "a constant is an int, float, bool or str", "separate constants")
    assert "hk.Constexpr[" in str(err)


def test_missing_tensor_annotation():
    def k(a: hk.Tensor[hk.fp32],
          o):  # <- here
        pass
    points_at(refused(traced(k), "'o' must be a tensor", "hk.Tensor[hk.bf16]"), k)


def test_constant_without_constexpr():
    def k(a: hk.Tensor[hk.fp32], *,
          N: list = 3):  # <- here  (hk-dsl reads `N: int = 3` as a constant)
        pass
    points_at(refused(traced(k), "'N' must be a constant", "hk.Constexpr[int]"), k)


def test_star_args():
    def k(a: hk.Tensor[hk.fp32],
          *rest):  # <- here
        pass
    points_at(refused(traced(k), "no *args or **kwargs", "keyword-only"), k)


def test_star_star_kwargs():
    def k(a: hk.Tensor[hk.fp32],
          **options):  # <- here
        pass
    points_at(refused(traced(k), "no *args or **kwargs"), k)


def test_tensor_with_a_default():
    def k(a: hk.Tensor[hk.fp32],
          o: hk.Tensor[hk.fp32] = None):  # <- here
        pass
    points_at(refused(traced(k), "'o' has a default", "drop the default"), k)


@pytest.mark.parametrize("kind, default", [(int, "16"), (int, 16.0), (int, True), (float, "x"),
                                           (bool, 1), (str, 3)], ids=str)
def test_constant_default_of_the_wrong_kind(kind, default):
    def k(a: hk.Tensor[hk.fp32], *,
          N: hk.Constexpr[kind] = default):  # <- here
        pass
    points_at(refused(traced(k), f"hk.Constexpr[{kind.__name__}]", "its default is"), k)


# ---- register tile and vector shapes --------------------------------------------------------

@pytest.mark.parametrize("rows, cols, words", [
    (0, 16, "positive Python int"), (-16, 16, "positive Python int"),
    (16, 0, "positive Python int"), (16.0, 16, "positive Python int"),
    (16, "64", "positive Python int"), (True, 16, "positive Python int"),
], ids=["zero-rows", "negative-rows", "zero-cols", "float-rows", "str-cols", "bool-rows"])
def test_tile_shape_that_is_no_size(rows, cols, words):
    def k(a: hk.Tensor[hk.fp32]):
        a[0, 0, 0, 0] = hk.zeros(hk.RT(hk.fp32, rows, cols))  # <- here
    points_at(refused(traced(k), words, "compile-time"), k)


# refused while tracing, so the interpreter (which could run them) refuses what no target builds
@pytest.mark.parametrize("rows, cols", [(10, 64), (16, 40), (24, 16), (16, 8)], ids=str)
def test_tile_shape_no_target_builds(rows, cols):
    def k(a: hk.Tensor[hk.bf16]):
        a[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.bf16, rows, cols))  # <- here
    points_at(refused(traced(k), "multiple of 16", "16x16 blocks", "round the shape up"), k)


@pytest.mark.parametrize("length", [8, 20, 1])
def test_vector_length_no_target_builds(length):
    def k(a: hk.Tensor[hk.fp32]):
        a[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RV(hk.fp32, length))  # <- here
    points_at(refused(traced(k), "register vector", f"length {length}", "multiple of 16"), k)


def test_tile_shape_no_target_builds_is_refused_by_the_interpreter():
    torch = pytest.importorskip("torch")

    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32]):
        a[0, 0, 0, 0] = hk.zeros(hk.RT(hk.fp32, 8, 16)) + 1.0  # <- here
    a = torch.zeros(1, 1, 16, 16)
    points_at(refused(lambda: k.interpret(a), "register tile with rows 8"), k)
    assert not a.any(), "the refused call wrote its output"


def test_huge_tile_spills():
    def k(a: hk.Tensor[hk.fp32]):
        t = hk.zeros(hk.RT(hk.fp32, 2048, 2048))
        a[0, 0, 0, 0] = t  # <- here
    points_at(refused(traced(k), "registers per lane", "smaller tiles"), k)


def test_vector_axis_unknown():
    def k(a: hk.Tensor[hk.fp32]):
        a[0, 0, 0, 0] = hk.zeros(hk.RV(hk.fp32, 16, "diagonal"))  # <- here
    points_at(refused(traced(k), "RV axis must be 'row' or 'col'"), k)


def test_tile_layout_unknown():
    def k(a: hk.Tensor[hk.fp32]):
        a[0, 0, 0, 0] = hk.zeros(hk.RT(hk.fp32, 16, 16, "diagonal"))  # <- here
    points_at(refused(traced(k), "RT layout must be 'row', 'col' or 'flat'"), k)


def test_tile_of_an_unknown_dtype():
    def k(a: hk.Tensor[hk.fp32]):
        a[0, 0, 0, 0] = hk.zeros(hk.RT("fp64", 16, 16))  # <- here
    points_at(refused(traced(k), "'fp64' is not a ktile element type"), k)


# ---- loads and stores of mismatched shapes or dtypes ---------------------------------------

def test_register_tile_stored_into_a_larger_shared_tile():
    def k(a: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.fp32, 32, 16))
        s.store(hk.zeros(hk.RT(hk.fp32, 16, 16)))  # <- here
    points_at(refused(traced(k), "16x16", "32x16", "whole shared tile"), k)


def test_register_tile_stored_into_a_shared_tile_of_another_dtype():
    def k(a: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.bf16, 16, 16))
        s.store(hk.zeros(hk.RT(hk.fp32, 16, 16)))  # <- here
    points_at(refused(traced(k), "hk.bf16 shared tile", ".to(hk.bf16)"), k)


def test_vector_stored_into_a_shared_tile():
    def k(a: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.fp32, 16, 16))
        s.store(hk.zeros(hk.RV(hk.fp32, 16)))  # <- here
    points_at(refused(traced(k), "row vector of 16", "16x16 tile", "a vector into a vector"), k)


def test_shared_load_of_another_dtype():
    def k(a: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.fp32, 16, 16))
        t = s.load(hk.RT(hk.bf16, 16, 16))  # <- here
    points_at(refused(traced(k), "share a dtype"), k)


def test_shared_sub_tile_outside():
    def k(a: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.fp32, 32, 32))
        t = s.load(hk.RT(hk.fp32, 16, 16), row=2)  # <- here
    points_at(refused(traced(k), "outside the 32x32 shared tile", "row is in [0, 2)"), k)


def test_shared_sub_tile_not_dividing():
    def k(a: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.fp32, 48, 48))
        t = s.load(hk.RT(hk.fp32, 32, 16))  # <- here
    points_at(refused(traced(k), "must divide the shared tile's"), k)


def test_shared_tile_loaded_as_a_vector():
    def k(a: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.fp32, 16, 16))
        v = s.load(hk.RV(hk.fp32, 16))  # <- here
    points_at(refused(traced(k), "shared vectors load into RV"), k)


def test_group_load_of_another_dtype():
    def k(a: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.bf16, 16, 16))
        hk.group.load(s, a[0, 0, 0, 0])  # <- here
    points_at(refused(traced(k), "group load", "hk.fp32", "hk.bf16"), k)


def test_store_of_a_python_number_to_a_global():
    def k(a: hk.Tensor[hk.fp32]):
        a[0, 0, 0, 0] = 1.0  # <- here
    points_at(refused(traced(k), "register tile or vector", "float"), k)


def test_shared_memory_over_the_limit():
    def k(a: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.fp32, 256, 512))  # <- here
    points_at(refused(traced(k), "shared memory per block", "65536"), k)


def test_shared_from_a_register_type():
    def k(a: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.RT(hk.fp32, 16, 16))  # <- here
    points_at(refused(traced(k), "hk.ST(...) or hk.SV(...)"), k)


# ---- recursion, Python that cannot run while tracing ---------------------------------------

@hk.func
def forever(x):
    return forever(x)  # <- here


def test_func_that_calls_itself_without_end():
    def k(a: hk.Tensor[hk.fp32]):
        a[0, 0, 0, 0] = forever(hk.zeros(hk.RT(hk.fp32, 16, 16)))
    points_at(refused(traced(k), "@hk.func 'forever'", "calls itself", "Python int"), forever)


@hk.func
def halves(x, depth):
    """Recursion that stops on a Python value is fine: it unrolls while tracing."""
    return x if depth == 0 else halves(x * 0.5, depth - 1)


def test_func_recursion_that_stops_traces():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32]):
        a[0, 0, 0, 0] = halves(hk.ones(hk.RT(hk.fp32, 16, 16)), 3)
    assert "kt.store" in k.trace().dump()


def plain_recursion(n):
    return plain_recursion(n + 1)  # <- here


def test_plain_python_recursion_without_end():
    def k(a: hk.Tensor[hk.fp32]):
        plain_recursion(0)
    points_at(refused(traced(k), "recurses without end", "depth argument"), plain_recursion)


def reads_a_file():
    with open("/nonexistent/ktile-corpus") as f:  # <- here
        return f.read()


def test_helper_that_opens_a_file():
    def k(a: hk.Tensor[hk.fp32]):
        reads_a_file()
    points_at(refused(traced(k), "FileNotFoundError", "runs as Python while the kernel is "
                                                      "traced"), reads_a_file)


def test_numpy_on_a_tile():
    def k(a: hk.Tensor[hk.fp32]):
        t = hk.zeros(hk.RT(hk.fp32, 16, 16))
        a[0, 0, 0, 0] = np.exp(t)  # <- here
    points_at(refused(traced(k)), k)


def test_func_called_outside_a_kernel():
    refused(lambda: halves(1.0, 0), "can only be called from a kernel")


# ---- Python control flow on device values ---------------------------------------------------

def test_if_on_a_tile():
    def k(a: hk.Tensor[hk.fp32]):
        t = hk.zeros(hk.RT(hk.fp32, 16, 16))
        if t:  # <- here
            pass
    points_at(refused(traced(k), "condition of `if` must be a scalar", "reduce"), k)


def test_while_on_a_tile():
    def k(a: hk.Tensor[hk.fp32]):
        t = hk.zeros(hk.RT(hk.fp32, 16, 16))
        while t > 1.0:  # <- here
            t = t * 0.5
    points_at(refused(traced(k), "condition of `while` must be a scalar"), k)


def test_for_over_a_tile():
    def k(a: hk.Tensor[hk.fp32]):
        for x in hk.zeros(hk.RT(hk.fp32, 16, 16)):  # <- here
            pass
    points_at(refused(traced(k), "cannot be iterated"), k)


def test_for_over_a_global():
    def k(a: hk.Tensor[hk.fp32]):
        for row in a:  # <- here
            pass
    points_at(refused(traced(k), "cannot be iterated", "tile_coord"), k)


def test_not_of_a_device_scalar():
    def k(a: hk.Tensor[hk.fp32]):
        if not a.rows > 16:  # <- here
            pass
    points_at(refused(traced(k), "no Python truth value", "`~`"), k)


def test_python_range_of_a_device_value_with_break():
    def k(a: hk.Tensor[hk.fp32]):
        for i in range(a.rows):  # <- here
            if i > 2:
                break
    points_at(refused(traced(k), "break, continue or return"), k)


def test_return_inside_a_runtime_loop():
    def k(a: hk.Tensor[hk.fp32]):
        for i in hk.range(4):  # <- here
            return
    points_at(refused(traced(k), "cannot use break, continue, return", "`while`"), k)


def test_python_int_of_a_device_value():
    def k(a: hk.Tensor[hk.fp32]):
        t = hk.zeros(hk.RT(hk.fp32, a.rows, 16))  # <- here
    points_at(refused(traced(k), "positive Python int"), k)


# ---- unknown names --------------------------------------------------------------------------

@pytest.mark.parametrize("make, words", [
    (lambda: hk.roundup, ("hk has no 'roundup'", "hk.round")),
    (lambda: hk.row_summ, ("hk has no 'row_summ'", "hk.row_sum")),
    (lambda: hk.mma_abt, ("hk.mma_ABt",)),
    (lambda: hk.arch.foo, ("hk.arch has no 'foo'", "warp_id")),
    (lambda: hk.arch.warpid, ("hk.arch.warp_id",)),
    (lambda: hk.math.expp, ("hk.math.exp",)),
    (lambda: hk.group.summ, ("hk.group.sum",)),
    (lambda: hk.lds.aloc, ("hk.lds.alloc",)),
    (lambda: hk.zeros(hk.RT(hk.fp32, 16, 16)).foo, ("register tile has no 'foo'",)),
    (lambda: hk.zeros(hk.RT(hk.fp32, 16, 16)).rowsum, ("row_sum",)),
    (lambda: hk.zeros(hk.RV(hk.fp32, 16)).summ, ("vector", "sum")),
], ids=["hk.roundup", "hk.row_summ", "hk.mma_abt", "arch.foo", "arch.warpid", "math.expp",
        "group.summ", "lds.aloc", "tile.foo", "tile.rowsum", "vector.summ"])
def test_unknown_name(make, words):
    def k(a: hk.Tensor[hk.fp32]):
        make()  # <- here
    err = refused(traced(k), *words)
    assert err.loc is not None and err.loc.line in (make.__code__.co_firstlineno,
                                                    k.__code__.co_firstlineno + 1)


def test_unknown_name_points_at_the_kernel_line():
    def k(a: hk.Tensor[hk.fp32]):
        a[0, 0, 0, 0] = hk.roundup(hk.zeros(hk.RT(hk.fp32, 16, 16)))  # <- here
    points_at(refused(traced(k), "hk has no 'roundup'"), k)


def test_unknown_extent_of_a_global():
    def k(a: hk.Tensor[hk.fp32]):
        n = a.shape  # <- here
    points_at(refused(traced(k), "global 'a' has no 'shape'", "rows"), k)


# ---- builtins called wrongly ----------------------------------------------------------------

@pytest.mark.parametrize("call, words", [
    (lambda t: hk.exp(t, t), ("exp()", "positional argument")),
    (lambda t: hk.zeros(), ("zeros()", "desc")),
    (lambda t: hk.maximum(t), ("maximum()", "'y'")),
    (lambda t: hk.where(t), ("where()",)),
    (lambda t: hk.tile_coord(0, 0, 0, 0, 0), ("tile_coord()", "5 were given")),
    (lambda t: hk.mma(t, t), ("mma()", "'acc'")),
], ids=["exp-2-args", "zeros-0-args", "maximum-1-arg", "where-1-arg", "tile_coord-5-args",
        "mma-2-args"])
def test_builtin_with_the_wrong_number_of_arguments(call, words):
    def k(a: hk.Tensor[hk.fp32]):
        call(hk.zeros(hk.RT(hk.fp32, 16, 16)))  # <- here
    err = refused(traced(k), *words)
    assert err.loc is not None and err.loc.line == call.__code__.co_firstlineno  # the call's line


def test_mixing_dtypes_in_arithmetic():
    def k(a: hk.Tensor[hk.fp32]):
        x = hk.zeros(hk.RT(hk.fp32, 16, 16))
        a[0, 0, 0, 0] = x + hk.zeros(hk.RT(hk.bf16, 16, 16))  # <- here
    points_at(refused(traced(k), "element types differ", ".to(hk.fp32)"), k)


def test_mixing_dtypes_of_a_tile_and_a_vector():
    def k(a: hk.Tensor[hk.fp32]):
        x = hk.zeros(hk.RT(hk.fp32, 16, 16))
        a[0, 0, 0, 0] = x * hk.zeros(hk.RV(hk.i32, 16))  # <- here
    points_at(refused(traced(k), "element types differ"), k)


def test_comparing_vectors_of_different_dtypes():
    def k(a: hk.Tensor[hk.fp32]):
        m = hk.zeros(hk.RV(hk.fp32, 16)) < hk.zeros(hk.RV(hk.i32, 16))  # <- here
    points_at(refused(traced(k), "`<`", "element types differ"), k)


def test_mma_accumulating_in_bf16():
    def k(a: hk.Tensor[hk.bf16]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        acc = hk.mma(x, x, hk.zeros(hk.RT(hk.bf16, 16, 16)), "ABt")  # <- here
    points_at(refused(traced(k), "accumulates into fp32"), k)


def test_mma_of_a_shared_vector():
    def k(a: hk.Tensor[hk.bf16]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        s = hk.shared(hk.SV(hk.bf16, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
        acc += x @ s.T  # <- here
    points_at(refused(traced(k), "not a shared vector"), k)


def test_mma_of_a_scalar():
    def k(a: hk.Tensor[hk.bf16]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        acc = hk.mma(x, 2.0, hk.zeros(hk.RT(hk.fp32, 16, 16)))  # <- here
    points_at(refused(traced(k), "operand b must be a register tile"), k)


@pytest.mark.parametrize("value", ["a", "1.0", "hk.arch.warp_id"])
def test_wait_on_a_value_nothing_writes_asynchronously(value):
    def k(a: hk.Tensor[hk.fp32]):
        hk.wait_for(eval(value))  # <- here
    points_at(refused(traced(k), "wait_for() waits for tiles"), k)


# ---- the decoration: grid and requires -------------------------------------------------------

def test_grid_reads_an_unknown_parameter():
    def k(a: hk.Tensor[hk.fp32]):
        pass
    refused(traced(k, grid=lambda p: (p.b.rows,)), "'b'", "neither a tensor parameter",
            "known names: a")


def test_grid_reads_an_unknown_extent():
    def k(a: hk.Tensor[hk.fp32]):
        pass
    refused(traced(k, grid=lambda p: (p.a.height,)), "extents batch, depth, rows and cols",
            "'height'")


def test_grid_of_no_argument():
    def k(a: hk.Tensor[hk.fp32]):
        pass
    refused(traced(k, grid=lambda: (1,)), "function of one argument", "grid=lambda p")


@pytest.mark.parametrize("requires", [None, "WIDTH", [lambda p: True], [(lambda p: True,)],
                                      [(lambda: True, "no argument")],
                                      [(lambda p: True, 42)], [("WIDTH > 0", "a string")]],
                         ids=["none", "str", "bare-predicate", "one-tuple", "no-argument",
                              "message-not-str", "predicate-not-callable"])
def test_malformed_requires(requires):
    def k(a: hk.Tensor[hk.fp32]):
        pass
    err = refused(traced(k, requires=requires), "requires takes", "(predicate, message)")
    assert err.loc is not None


def test_requires_reading_an_unknown_name():
    torch = pytest.importorskip("torch")

    @hk.kernel(grid=lambda p: (1, 1, 1), requires=[(lambda p: p.WIDHT > 0, "WIDTH is positive")])
    def k(o: hk.Tensor[hk.fp32], *, WIDTH: hk.Constexpr[int] = 16):
        o[0, 0, 0, 0] = hk.zeros(hk.RT(hk.fp32, 16, 16))
    refused(lambda: k.interpret(torch.zeros(1, 1, 16, 16)), "WIDHT", "WIDTH")


def test_kernel_defined_without_a_source_file():
    source = ("def k(a: hk.Tensor[hk.fp32]):\n"
              "    pass\n")
    namespace = {"hk": hk}
    exec(compile(source, "<string>", "exec"), namespace)
    err = refused(lambda: hk.kernel(**GRID)(namespace["k"]), "source of kernel 'k'",
                  "not available", "<string>", ".py file")
    assert "fix:" in str(err)


@pytest.mark.parametrize("arch, words", [("nope", ("unknown target 'nope'", "sm_90a")),
                                         ("GFX942", ("did you mean 'gfx942'",)),
                                         ("", ("arch=''", "names no target")),
                                         (942, ("string", "int 942"))],
                         ids=["unknown", "misspelt", "empty", "int"])
def test_arch_no_target_is_refused_at_its_decorator(arch, words):
    def k(a: hk.Tensor[hk.fp32]):
        pass
    err = refused(lambda: hk.kernel(**GRID, arch=arch)(k), *words, "fix:")  # not traced
    assert err.loc is not None and err.loc.line == k.__code__.co_firstlineno


# ---- masks: `&` / `|` and where() ------------------------------------------------------------

def _tile(dtype=hk.fp32, rows=16, cols=16):
    return hk.zeros(hk.RT(dtype, rows, cols))


def _vec(length=16, dtype=hk.fp32):
    return hk.zeros(hk.RV(dtype, length))


@pytest.mark.parametrize("expression, words", [
    (lambda: _tile() & _tile(), ("`&`", "16x16 hk.fp32 register tile", "not floats")),
    (lambda: _tile() | 1.0, ("`|`", "float 1.0", "not floats")),
    (lambda: (_tile() > 0) & _tile(), ("`&`", "hk.bool", "not floats")),
    (lambda: _vec() | _vec(), ("`|`", "row vector of 16 hk.fp32", "not floats")),
    (lambda: _tile(hk.bf16) & _tile(hk.bf16), ("`&`", "hk.bf16", "not floats")),
    (lambda: _tile(hk.i32) & 0.5, ("`&`", "float 0.5", "not floats")),
], ids=["float-tiles", "float-tile-or-number", "mask-and-float", "float-vectors", "bf16-tiles",
        "int-tile-and-float"])
def test_bitwise_operator_on_floats(expression, words):
    def k(a: hk.Tensor[hk.fp32]):
        expression()
    err = refused(traced(k), *words, "hk.where(mask, x, y)")
    assert err.loc is not None and err.loc.line == expression.__code__.co_firstlineno


@pytest.mark.parametrize("expression, words", [
    (lambda: hk.where(_tile(cols=32) > 0, _tile(), 0.0),
     ("the mask is a 16x32 hk.bool register tile", "x is a 16x16")),
    (lambda: hk.where(_tile() > 0, 1.0, _tile(rows=32)), ("y is a 32x16", "one shape")),
    (lambda: hk.where(_vec(32) > 0, _vec(), _vec()), ("row vector of 32 hk.bool", "one shape")),
    (lambda: hk.where(_tile() > 0, _tile(), _tile(hk.bf16)),
     ("element types differ", "x.to(hk.fp32)")),
], ids=["mask-wider-than-x", "y-taller-than-mask", "vector-mask-longer", "x-and-y-dtypes"])
def test_where_of_mismatched_operands(expression, words):
    def k(a: hk.Tensor[hk.fp32]):
        expression()
    err = refused(traced(k), "where", *words)
    assert "kt.select" not in str(err)
    assert err.loc is not None and err.loc.line == expression.__code__.co_firstlineno
