"""A list of shared tiles indexed by a device value (issue #10, `kt.lds_select`), through the
stack on the CPU: a double-buffered GEMM over K on the interpreter against numpy, the op's IR
text and verifier, lds-alloc's layout of a list (one block, offset + index × stride, aligned
for its strictest use), the waits pass's may-alias rule (an access through `bufs[i]` is an
access to every tile of the list), the C++ with and without the layout, and the interpreter's
range check of an index computed on the device."""
import ast
import sys
from pathlib import Path

import numpy as np
import pytest

import ktile as hk
from ktile.dtypes import bf16
from ktile.errors import KernelError
from ktile.interpret import run_module
from ktile.ir import ops as kt
from ktile.ir.printing import module_text, parse_module
from ktile.lang.shared_ops import select_shared as pick
from ktile.lang.subscripts import HELPER, SubscriptRewriter, reads_subscripts, subscript

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import shared_index_kernels as K  # noqa: E402

TARGETS = ("gfx1100", "gfx1201", "gfx942", "gfx950", "sm_90a")


def _operands(k_cols: int = 160, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = bf16.round(rng.standard_normal((1, 1, 64, k_cols)).astype(np.float32))
    b = bf16.round(rng.standard_normal((1, 1, 32, k_cols)).astype(np.float32))
    return a, b, np.zeros((1, 1, 64, 32), np.float32)


def _selects(module):
    return [o for o in module.walk() if isinstance(o, kt.LdsSelectOp)]


# ---- the interpreter ------------------------------------------------------------------------

@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(K.KERNELS))
def test_double_buffered_gemm_over_k_is_right(target, name):
    kernel, _ = K.KERNELS[name]
    for k_cols in (32, 64, 160):   # one step, two, and an odd number of steps
        a, b, c = _operands(k_cols)
        run_module(kernel.trace(target).module, [a, b, c])
        np.testing.assert_allclose(c, K.gemm_reference(a, b), rtol=1e-5, atol=1e-4)


def test_device_index_outside_the_list_fails_at_its_line():
    @hk.kernel(grid=(1, 1, 1))
    def bad(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        bufs = [hk.shared(hk.ST(hk.fp32, 16, 16)) for _ in range(2)]
        i = a.cols // 8                      # 2 for a 16-column a
        s = pick(bufs, i)                    # <- here
        s.store(a[0, 0].load(hk.RT(hk.fp32, 16, 16)))
        hk.barrier()
        t = s.load(hk.RT(hk.fp32, 16, 16))
        hk.wait_for(t)
        o[0, 0] = t

    a = np.ones((1, 1, 16, 16), np.float32)
    with pytest.raises(KernelError) as err:
        run_module(bad.trace().module, [a, np.zeros_like(a)])
    assert "index 2 is outside the list of 2 shared tiles" in str(err.value)
    assert err.value.loc.line == bad.fn.__code__.co_firstlineno + 4


def test_a_python_int_picks_the_tile_while_tracing():
    @hk.kernel(grid=(1, 1, 1))
    def static(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        bufs = [hk.shared(hk.ST(hk.fp32, 16, 16)) for _ in range(2)]
        pick(bufs, -1).store(a[0, 0].load(hk.RT(hk.fp32, 16, 16)))
        hk.barrier()
        t = bufs[1].load(hk.RT(hk.fp32, 16, 16))
        hk.wait_for(t)
        o[0, 0] = t

    module = static.trace().module
    assert not _selects(module)
    a = np.arange(256, dtype=np.float32).reshape(1, 1, 16, 16)
    o = np.zeros_like(a)
    run_module(module, [a, o])
    np.testing.assert_array_equal(o, a)


# ---- IR ------------------------------------------------------------------------------------

def test_the_op_reads_back_as_ir_text():
    module = K.pipelined_gemm.trace().module
    text = module_text(module)
    assert '"kt.lds_select"(' in text and "stride = 2048" in text
    assert module_text(parse_module(text, verify=True)) == text


_TWO_TILES = ("(%26, %5, %6) <{offset = 0 : i64, stride = 2048 : i64}> : (index, "
              "!kt.st<32x32xbf16>, !kt.st<32x32xbf16>)")


@pytest.mark.parametrize("edit, words", [
    (lambda t: t.replace("(%26, %5, %6)", "(%26, %5, %5)"), "listed once"),
    (lambda t: t.replace(_TWO_TILES, "(%26) <{offset = 0 : i64, stride = 2048 : i64}> : "
                                      "(index)"), "no tiles"),
    (lambda t: t.replace("(%26, %5, %6)", "(%c5, %5, %6)").replace(
        "%26 = ", "%c5 = arith.constant 5 : index\n    %26 = ", 1), "outside the list"),
])
def test_verifier_refuses_malformed_lists(edit, words):
    text = module_text(K.pipelined_gemm.trace().module)
    assert _TWO_TILES in text
    with pytest.raises(KernelError, match=words):
        parse_module(edit(text), verify=True)


# ---- lds-alloc -------------------------------------------------------------------------------

@pytest.mark.parametrize("target", TARGETS)
def test_a_list_is_laid_out_as_one_block(target):
    module = K.pipelined_gemm_shared_b.trace(target).module
    allocs = [o for o in module.walk() if isinstance(o, kt.AllocOp)]
    select = _selects(module)[0]
    base, stride = select.prop_int("offset"), select.prop_int("stride")
    assert stride >= 32 * 32 * 2
    assert [a.prop_int("offset") for a in allocs] == [base, base + stride]
    assert all(s.prop_int("offset") == base and s.prop_int("stride") == stride
               for s in _selects(module))


def test_a_list_read_by_an_mma_is_aligned_as_the_mma_needs():
    from ktile import targets
    need = targets.get("sm_90a").mma_shared_alignment
    assert need > 16
    select = _selects(K.pipelined_gemm_shared_b.trace("sm_90a").module)[0]
    assert select.prop_int("offset") % need == 0 and select.prop_int("stride") % need == 0


def test_a_tile_in_two_different_lists_is_refused():
    @hk.kernel(grid=(1, 1, 1))
    def two(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        x, y, z = (hk.shared(hk.ST(hk.fp32, 16, 16)) for _ in range(3))
        i = a.cols // 16
        pick([x, y], i).store(a[0, 0].load(hk.RT(hk.fp32, 16, 16)))
        pick([y, z], i).store(a[0, 0].load(hk.RT(hk.fp32, 16, 16)))   # <- here

    with pytest.raises(KernelError, match="can be in only one such list") as err:
        two.trace()
    assert err.value.loc.line == two.fn.__code__.co_firstlineno + 5


# ---- waits: may-alias -----------------------------------------------------------------------

def test_a_missing_wait_through_an_index_is_caught():
    @hk.kernel(grid=(1, 1, 1))
    def unwaited(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        bufs = [hk.shared(hk.ST(hk.fp32, 16, 16)) for _ in range(2)]
        i = a.cols // 32
        hk.group.load(bufs[0], a[0, 0])
        t = pick(bufs, i).load(hk.RT(hk.fp32, 16, 16))   # <- here
        hk.wait_for(t)
        hk.wait_for(bufs[0])
        o[0, 0] = t

    with pytest.raises(KernelError, match="still filling") as err:
        unwaited.trace()
    assert err.value.loc.line == unwaited.fn.__code__.co_firstlineno + 5


def test_a_copy_into_an_index_makes_every_tile_of_the_list_busy():
    @hk.kernel(grid=(1, 1, 1))
    def busy(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        bufs = [hk.shared(hk.ST(hk.fp32, 16, 16)) for _ in range(2)]
        i = a.cols // 32
        hk.group.load(pick(bufs, i), a[0, 0])
        t = bufs[1].load(hk.RT(hk.fp32, 16, 16))   # <- here
        hk.wait_for(t)
        hk.wait_for(bufs[0])
        o[0, 0] = t

    with pytest.raises(KernelError, match="still filling") as err:
        busy.trace()
    assert err.value.loc.line == busy.fn.__code__.co_firstlineno + 5


def test_two_copies_into_the_list_without_a_wait_are_refused():
    @hk.kernel(grid=(1, 1, 1))
    def twice(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        bufs = [hk.shared(hk.ST(hk.fp32, 16, 16)) for _ in range(2)]
        i = a.cols // 32
        hk.group.load(pick(bufs, i), a[0, 0])
        hk.group.load(pick(bufs, i + 1), a[0, 0])   # <- here
        hk.wait_for(bufs[0])

    with pytest.raises(KernelError, match="still filling"):
        twice.trace()


def test_a_wait_naming_any_tile_of_the_list_completes_a_copy_through_it():
    for target in TARGETS:
        module = K.pipelined_gemm.trace(target).module
        waits = [o for o in module.walk() if isinstance(o, kt.WaitForOp)]
        assert waits   # the pass accepted the pipeline: each copy has its wait


# ---- C++ -------------------------------------------------------------------------------------

@pytest.mark.parametrize("target", TARGETS)
def test_the_translation_is_base_plus_index_times_stride(target):
    source = K.pipelined_gemm.trace(target).source()
    assert "kt::shared_index<kt::st<kt::bf16, 32, 32>, 0, 2048>(" in source


def test_without_a_layout_the_translation_picks_among_the_tiles():
    from ktile.codegen import translate
    module = K.pipelined_gemm.trace("gfx1100").module
    for select in _selects(module):
        select.properties.pop("offset")
        select.properties.pop("stride")
    source = translate(module, "gfx1100")
    assert "kt::shared_index" not in source
    assert "= *(v26 == 0 ? &v5 : &v6);" in source


# ---- the subscript spelling ------------------------------------------------------------------

def test_subscripts_read_become_the_helper_and_stores_stay():
    tree = ast.parse("x = bufs[k % 2]\ng[i] = v\ny = t[1:2]")
    text = ast.unparse(SubscriptRewriter().visit(tree))
    assert f"x = {HELPER}(bufs, k % 2)" in text
    assert "g[i] = v" in text and "y = t[1:2]" in text


def test_the_helper_indexes_anything_else_as_python_does():
    assert subscript([10, 20], 1) == 20
    assert subscript({"a": 1}, "a") == 1
    assert subscript((1, 2, 3), -1) == 3


def test_bufs_indexed_by_a_device_value():
    @hk.kernel(grid=(1, 1, 1))
    def syntax(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        bufs = [hk.shared(hk.ST(hk.fp32, 16, 16)) for _ in range(2)]
        k = a.cols // 16
        bufs[k % 2].store(a[0, 0].load(hk.RT(hk.fp32, 16, 16)))
        hk.barrier()
        t = bufs[1].load(hk.RT(hk.fp32, 16, 16))
        hk.wait_for(t)
        o[0, 0] = t

    a = np.arange(256, dtype=np.float32).reshape(1, 1, 16, 16)
    o = np.zeros_like(a)
    run_module(syntax.trace().module, [a, o])
    np.testing.assert_array_equal(o, a)


def _stage_copy(select):
    """A kernel that stores a tile into the buffer a device index picks, then reads it back."""
    @hk.kernel(grid=(1, 1, 1))
    def stage(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        bufs = select.make()
        k = a.cols // 16
        select.pick(bufs, k % 2).store(a[0, 0].load(hk.RT(hk.fp32, 16, 16)))
        hk.barrier()
        t = bufs[1].load(hk.RT(hk.fp32, 16, 16))
        hk.wait_for(t)
        o[0, 0] = t
    return stage


class _LdsSelect:
    make = staticmethod(lambda: [hk.shared(hk.ST(hk.fp32, 16, 16)) for _ in range(2)])
    pick = staticmethod(lambda bufs, i: hk.lds.select(bufs, i))


class _LdsStack:
    make = staticmethod(lambda: hk.lds.alloc(hk.ST(hk.fp32, 16, 16), count=2))
    pick = staticmethod(lambda bufs, i: bufs[i])


@pytest.mark.parametrize("select", [_LdsSelect, _LdsStack], ids=["hk.lds.select", "lds-stack"])
def test_device_picks_through_hk_spellings(select):
    kern = _stage_copy(select)
    module = kern.trace().module
    assert len(_selects(module)) == 1
    a = np.arange(256, dtype=np.float32).reshape(1, 1, 16, 16)
    o = np.zeros_like(a)
    run_module(module, [a, o])
    np.testing.assert_array_equal(o, a)


def test_the_rewrite_leaves_subscripts_no_device_integer_can_index():
    """A tuple or a literal index is never a device integer: `g[0, r]`, `xs[1]` stay Python's
    subscripts (no call per read while tracing); a body without `[` skips the walk."""
    text = ast.unparse(SubscriptRewriter().visit(ast.parse("x = g[0, r]\ny = xs[1]\nz = c[i]")))
    assert "x = g[0, r]" in text and "y = xs[1]" in text and f"z = {HELPER}(c, i)" in text
    assert not reads_subscripts("    t = a.load(hk.RT(hk.fp32, 16, 16))\n")
    assert reads_subscripts("    t = bufs[k % 2]\n")


def test_the_rewrite_leaves_parameter_annotations_and_defaults_alone():
    tree = ast.parse("def k(a: hk.Tensor[hk.bf16], *, n: T[i] = d[i]):\n    return a[i]")
    text = ast.unparse(SubscriptRewriter().visit(tree))
    assert "a: hk.Tensor[hk.bf16]" in text and "n: T[i]=d[i]" in text.replace(" = ", "=")
    assert f"return {HELPER}(a, i)" in text
