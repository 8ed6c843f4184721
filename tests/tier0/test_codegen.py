"""The translation IR → C++: one line per op, the IR's names, `#line` back to the kernel, a bind
of every waited register tile before the next MMA (trap 1), the header per target family, and
an InternalError naming op and target where a lowering is missing."""

import re

import pytest
from xdsl.dialects import math as math_dialect
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.traits import IsTerminator

import ktile as hk
from examples_index import EXAMPLE_NAMES, traces
from ktile.codegen import header_path, translate, translate_lines
from ktile.codegen.lowering import LOWERINGS
from ktile.errors import InternalError, KernelError
from ktile.ir import ops as kt
from ktile.ir.query import kernel_func, loc_of
from ktile.ir.types import RegTileType, RegVecType
from ktile.lang.kernel import Kernel
from ktile.targets import NAMES, get


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y,
                        hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, 32), hk.cdiv(p.c.rows, 32)))
def gemm(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    row, col = hk.arch.block_idx.y, hk.arch.block_idx.x
    sa = hk.shared(hk.ST(hk.bf16, 32, 64))
    sb = hk.shared(hk.ST(hk.bf16, 32, 64))
    acc = hk.zeros(hk.RT(hk.fp32, 32, 32))
    for k in range(a.cols // 64):
        hk.load_async(sa, a[hk.tile_coord(0, 0, row, k)])
        hk.load_async(sb, b[hk.tile_coord(0, 0, col, k)])
        hk.wait_for(sa, sb)
        hk.barrier()
        ta = sa.load(hk.RT(hk.bf16, 32, 64))
        tb = sb.load(hk.RT(hk.bf16, 32, 64))
        hk.wait_for(ta, tb)
        acc += ta @ tb.T  # the MMA line
        hk.barrier()
    c[hk.tile_coord(0, 0, row, col)] = acc


@hk.kernel(grid=lambda p: (p.o.rows,))
def branchy(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    r = hk.arch.block_idx.x
    t = x[hk.tile_coord(0, 0, r, 0)].load(hk.RT(hk.fp32, 16, 64))
    s = hk.sum(hk.row_sum(t))
    if s > 0.0:
        t = hk.exp(t)
    else:
        t = t * 2.0
    n = 0
    while s > 1.0:
        s = s * 0.5
        n = n + 1
    o[hk.tile_coord(0, 0, r, 0)] = t + hk.to_float(n)


@hk.kernel(grid=lambda p: (p.o.rows,))
def swap(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    t = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 64))
    u = t * 2.0
    for _ in range(x.cols):
        t, u = u, t
    o[hk.tile_coord(0, 0, 0, 0)] = t - u


@hk.kernel(grid=lambda p: (p.o.rows,), warps=2)
def assorted(x: hk.Tensor[hk.fp32], idx: hk.Tensor[hk.i32], o: hk.Tensor[hk.fp32]):
    """Every compute lowering at least once."""
    w = hk.arch.warp_id
    t = x[hk.tile_coord(0, 0, w, 0)].load(hk.RT(hk.fp32, 16, 64), pad=float("-inf"))
    col = hk.iota(hk.RT(hk.i32, 16, 64), axis="col")
    masked = hk.causal_mask(t, 0, 0)
    kept = hk.where(hk.rand(7, col) > 0.5, hk.sigmoid(masked), -t)
    m = hk.group.max(hk.row_max(kept))
    rows = idx[hk.tile_coord(0, 0, 0, 0)].load(hk.RV(hk.i32, 16))
    g = hk.gather(x, rows, hk.RT(hk.fp32, 16, 64))
    hk.scatter(o, rows, (g - m).to(hk.fp32))


KERNELS = {"add": add, "gemm": gemm, "branchy": branchy, "swap": swap, "assorted": assorted}
LOOP_TARGET = "gfx950"   # has every counter and the LDS DMA


def _lines(name: str, target: str = LOOP_TARGET):
    trace = KERNELS[name].trace(target)
    return trace, translate_lines(trace.module, trace.target)


def _is_leaf(op: Operation) -> bool:
    return not op.regions and not op.has_trait(IsTerminator)


def _body_ops(fn: FuncOp) -> list[Operation]:
    return [op for op in fn.walk() if op is not fn]


# ---- one statement per op --------------------------------------------------------------------

@pytest.mark.parametrize("target", NAMES)
def test_straight_line_functions_have_one_line_per_op(target):
    trace = add.trace(target)
    text = translate(trace.module, trace.target)
    for fn in trace.module.body.block.ops:
        name = fn.sym_name.data
        body = text.split(f" {name}(", 1)[1].split("\n}\n", 1)[0].splitlines()[1:]
        statements = [line for line in body if not line.startswith("#line")]
        assert len(statements) == len(list(fn.body.block.ops)), "\n".join(statements)
        assert all(line.strip().endswith(";") for line in statements)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_op_is_translated_by_exactly_one_line_in_ir_order(name):
    trace, lines = _lines(name)
    leaf_ops = [op for fn in trace.module.body.block.ops for op in _body_ops(fn) if _is_leaf(op)]
    lines_of = {id(op): [i for i, line in enumerate(lines) if line.op is op] for op in leaf_ops}
    assert all(len(found) == 1 for found in lines_of.values())
    order = [lines_of[id(op)][0] for op in leaf_ops]
    assert order == sorted(order)


def test_a_line_translating_one_op_holds_its_statement_and_declaration():
    _, lines = _lines("gemm")
    mma = next(line for line in lines if isinstance(line.op, kt.MmaOp))
    assert re.fullmatch(r"\s*kt::rt<float, 32, 32, kt::row, kt::frag_acc> (v\d+); "
                        r"kt::mma_ABt\(\1, v\d+, v\d+, v\d+\);", mma.text)


# ---- names -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(KERNELS))
def test_ssa_values_keep_their_ir_names(name):
    trace, lines = _lines(name)
    functions = list(trace.module.body.block.ops)
    printed_functions = trace.dump().split("func.func ")[1:]   # numbering restarts in each
    assert len(printed_functions) == len(functions)
    for fn, printed_fn in zip(functions, printed_functions):
        printed = [n for group in re.findall(r"^\s*(%\w+(?:, %\w+)*) = ", printed_fn, re.M)
                   for n in group.split(", ")]
        results = [(op, r) for op in _body_ops(fn) for r in op.results]
        assert len(printed) == len(results)
        mine = [line for line in lines if line.op is fn or fn.is_ancestor(line.op or fn)]
        text = "".join(line.text + "\n" for line in mine)
        for ir_name, (op, _) in zip(printed, results):
            cpp = "v" + ir_name[1:]
            declared = re.findall(rf"^ *(?:const |__shared__ )?[\w:<>, ]*[\w>&] {cpp}(?: =|;)",
                                  text, re.M)
            assert len(declared) == 1, f"{ir_name} declared {len(declared)} times"
            assert any(re.search(rf"\b{cpp}\b", line.text) for line in mine if line.op is op)


def test_kernel_parameters_are_the_function_block_arguments():
    _, lines = _lines("add")
    signature = next(line.text for line in lines if line.text.startswith('extern "C"'))
    assert signature.endswith("void add(kt::gl<kt::bf16> v0, kt::gl<kt::bf16> v1, "
                              "kt::gl<kt::bf16> v2) {")
    assert "__launch_bounds__(64)" in signature   # 1 warp of 64 lanes on gfx950


# ---- #line -----------------------------------------------------------------------------------

def _compiler_lines(lines) -> list[tuple[str, int] | None]:
    """The (file, line) a C preprocessor assigns each line, as `#line` directives set them."""
    current: tuple[str, int] | None = None
    out = []
    for line in lines:
        match = re.fullmatch(r'#line (\d+)(?: "(.*)")?', line.text)
        if match:
            file = match.group(2) or current[0]
            current = (file, int(match.group(1)))
            out.append(None)
            continue
        out.append(current)
        if current is not None:
            current = (current[0], current[1] + 1)
    return out


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_line_directives_point_each_statement_at_its_python_line(name):
    _, lines = _lines(name)
    for line, where in zip(lines, _compiler_lines(lines)):
        loc = loc_of(line.op) if line.op is not None else None
        if loc is None or line.text.strip().startswith("}"):
            continue
        assert where == (loc.file, loc.line), line.text


def test_the_mma_statement_points_at_the_kernel_line_that_wrote_it():
    _, lines = _lines("gemm")
    index = next(i for i, line in enumerate(lines) if "kt::mma_ABt" in line.text)
    file, line = _compiler_lines(lines)[index]
    assert file == __file__
    with open(file) as f:
        assert "# the MMA line" in f.read().splitlines()[line - 1]


# ---- waits and binds (trap 1) ----------------------------------------------------------------

@pytest.mark.parametrize("target", NAMES)
def test_every_waited_register_tile_is_bound_before_the_next_mma(target):
    _, lines = _lines("gemm", target)
    pending: set[str] = set()
    waits = 0
    for line in lines:
        if isinstance(line.op, kt.WaitForOp):
            waits += 1
            assert line.text.strip().startswith("kt::wait<")
            pending |= _register_operand_names(line, lines)
        pending -= set(re.findall(r"kt::bind\((v\d+)\);", line.text))
        if "kt::mma_" in line.text:
            assert not pending, f"{sorted(pending)} not bound before: {line.text.strip()}"
    assert waits == 2


def _register_operand_names(line, lines) -> set[str]:
    """Names of the register tiles a wait op names, read from the lines that declared them."""
    out = set()
    for value in line.op.tiles:
        if isinstance(value.type, (RegTileType, RegVecType)):
            owner = next(other for other in lines if other.op is value.owner)
            out.add(re.search(r"> (v\d+);", owner.text).group(1))
    return out


@pytest.mark.parametrize("target, tensor_copies, first, second", [
    ("gfx950", True, "kt::wait<0, -1>();", "kt::wait<-1, 0>(); kt::bind(v17); kt::bind(v18);"),
    # sm_90a: the group loads are TMA copies completing on their tiles' mbarriers (slots 0, 1)
    ("sm_90a", True, "kt::wait<-1, -1>(); kt::wait_arrivals<0, 1>(kt_arrivals);",
     "kt::wait<-1, -1>(); kt::bind(v17); kt::bind(v18);"),
    # traced without TMA copies (a call whose tensors have no tensor maps): cp.async groups
    ("sm_90a", False, "kt::wait<0, -1>();", "kt::wait<-1, -1>(); kt::bind(v17); kt::bind(v18);"),
])
def test_waits_carry_the_derived_counts(target, tensor_copies, first, second):
    trace = gemm.trace_copies(target, tensor_copies, {})
    lines = translate_lines(trace.module, trace.target)
    waits = [line.text.strip() for line in lines if isinstance(line.op, kt.WaitForOp)]
    assert waits == [first, second]


def test_an_unchecked_module_translates_with_no_counts_offsets_or_fragments(monkeypatch):
    import ktile.passes
    monkeypatch.setattr(ktile.passes, "run_pipeline", lambda module, target: [])
    unchecked = Kernel(gemm.fn, gemm.grid, gemm.warps, None).trace("gfx950")
    text = translate(unchecked.module, "gfx950")
    assert "kt::wait<-1, -1>();\n" in text
    assert "kt::wait<-1, -1>(); kt::bind(v17); kt::bind(v18);" in text
    assert "__shared__ kt::st<kt::bf16, 32, 64> v5;" in text
    assert "kt::frag_none> v19; kt::mma_ABt(v19, v17, v18, v15);" in text


# ---- the target ------------------------------------------------------------------------------

FAMILY_HEADERS = {"gfx1100": "ktile/amd/rdna3/kernel.hpp", "gfx1201": "ktile/amd/rdna4/kernel.hpp",
                  "gfx942": "ktile/amd/cdna3/kernel.hpp", "gfx950": "ktile/amd/cdna4/kernel.hpp",
                  "sm_90a": "ktile/nvidia/hopper/kernel.hpp"}


@pytest.mark.parametrize("target", NAMES)
def test_the_include_is_the_target_familys_header(target):
    trace = add.trace(target)
    text = translate(trace.module, target)
    includes = re.findall(r'^#include "(.*)"$', text, re.M)
    assert includes == [FAMILY_HEADERS[target]] == [header_path(get(target))]
    assert f"// target {target}: " in text
    assert "#if" not in text


def test_each_family_has_its_own_header():
    assert len(set(FAMILY_HEADERS.values())) == len(NAMES) == len(FAMILY_HEADERS)


def test_the_target_argument_overrides_the_module_attribute():
    trace = add.trace("gfx1100")
    assert FAMILY_HEADERS["sm_90a"] in translate(trace.module, "sm_90a")
    assert FAMILY_HEADERS["gfx1100"] in translate(trace.module)


# ---- control flow ----------------------------------------------------------------------------

def test_if_and_while_carry_values_through_declared_variables():
    trace, lines = _lines("branchy")
    text = "".join(line.text + "\n" for line in lines if not line.is_directive)
    assert re.search(r"kt::rt<float, 16, 64, kt::row, kt::frag_none> (v\d+);\n"
                     r"  if \((v\d+)\) \{\n.*\n    \1 = v\d+;\n"
                     r"  \} else \{\n.*\n.*\n    \1 = v\d+;\n  \}\n", text)
    assert "  while (true) {\n" in text
    assert re.search(r"    v\d+ = v\d+; v\d+ = v\d+; if \(!v\d+\) break;\n", text)
    assert re.search(r"    float& v\d+ = v\d+;\n    kt::index_t& v\d+ = v\d+;\n", text)


def test_a_for_loop_declares_its_carried_values_and_names_its_results():
    _, lines = _lines("gemm")
    text = "".join(line.text + "\n" for line in lines if not line.is_directive)
    loop = re.search(r"  (kt::rt<float, 32, 32, kt::row, kt::frag_acc>) v15 = v7;\n"
                     r"  for \(kt::index_t v14 = v11; v14 < v10; v14 \+= v12\) \{\n"
                     r"(?:    .*\n)*?    v15 = v19;\n  \}\n  \1& v13 = v15;\n", text)
    assert loop is not None, text


def test_a_yield_that_swaps_carried_values_copies_through_temporaries():
    _, lines = _lines("swap")
    yields = [line.text.strip() for line in lines if line.op is not None
              and line.op.name == "scf.yield"]
    assert len(yields) == 1
    assert re.fullmatch(r"\{ (kt::rt<[^>]*>) kt_tmp0 = (v\d+); \1 kt_tmp1 = (v\d+); "
                        r"\3 = kt_tmp0; \2 = kt_tmp1; \}", yields[0])


# ---- coverage and missing lowerings ----------------------------------------------------------

def test_every_kt_op_has_a_lowering():
    assert [op.name for op in kt.OPS if op not in LOWERINGS] == []


@pytest.mark.parametrize("target", NAMES)
def test_every_kernel_translates_for_every_target(target):
    for kernel in KERNELS.values():
        assert kernel.source(target=target).startswith("// kernel ")


def test_a_kt_op_without_a_lowering_is_an_internal_error_naming_op_and_target(monkeypatch):
    monkeypatch.delitem(LOWERINGS, kt.BarrierOp)
    trace = gemm.trace("gfx942")
    with pytest.raises(InternalError) as info:
        translate(trace.module, trace.target)
    text = str(info.value)
    assert "kt.barrier" in text and "gfx942" in text
    assert __file__ in text   # and where the kernel wrote it


def test_a_foreign_op_is_an_internal_error_naming_op_and_target():
    trace = Kernel(add.fn, add.grid, add.warps, None).trace("sm_90a")   # a copy to change
    fn = kernel_func(trace.module)
    stray = math_dialect.AbsFOp(_f32_constant(fn))
    fn.body.block.insert_op_after(stray, stray.operands[0].owner)
    with pytest.raises(InternalError) as info:
        translate(trace.module, "sm_90a")
    assert "math.absf" in str(info.value) and "sm_90a" in str(info.value)


def _f32_constant(fn: FuncOp):
    from xdsl.dialects.arith import ConstantOp
    from xdsl.dialects.builtin import Float32Type, FloatAttr
    const = ConstantOp(FloatAttr(1.0, Float32Type()))
    fn.body.block.insert_op_before(const, fn.body.block.first_op)
    return const.result


def test_a_kernel_named_as_a_cpp_keyword_is_a_user_error():
    def delete(o: hk.Tensor[hk.fp32]):
        o[hk.tile_coord(0, 0, 0, 0)] = hk.zeros(hk.RT(hk.fp32, 16, 16))
    kernel = hk.kernel(grid=(1,))(delete)
    with pytest.raises(KernelError) as info:
        kernel.source(target="gfx1100")
    assert "C++ keyword" in str(info.value) and "rename" in str(info.value)


# ---- the examples ----------------------------------------------------------------------------

@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_every_example_translates_one_line_per_op_for_every_target(example):
    for target in NAMES:
        for trace in traces(example, target):
            lines = translate_lines(trace.module, trace.target)
            mapped = [line.op for line in lines if line.op is not None]
            for op in trace.module.walk():
                if _is_leaf(op):
                    assert mapped.count(op) == 1, f"{example} on {target}: {op.name}"
