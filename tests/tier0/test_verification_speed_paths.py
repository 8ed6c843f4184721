"""The fast paths of tracing (issue #10) keep their promises: verification stays complete, a
pass re-verifies only what it changed, and the C++ names are the printer's.

Behaviour, not time: benchmarks/trace_times.py measures the time.
"""
import io
import warnings

import pytest
from test_bad_inputs_ir import OP_CASES, bad_module
from xdsl.dialects.builtin import StringAttr
from xdsl.printer import Printer

import ktile as hk
import ktile.passes as pipeline
import ktile.passes.verify as verify_pass
from bad_inputs import marked_line
from examples_index import EXAMPLE_NAMES, load
from ktile import targets
from ktile.codegen.names import value_names
from ktile.errors import KernelError, KernelWarning
from ktile.ir import ops as kt
from ktile.ir.printing import parse_module
from ktile.ir.query import kernel_func, verify_module
from ktile.ir.verification import changed_ops, first_failure, op_states

TRACES = [(name, kernel, constants) for name in EXAMPLE_NAMES
          for kernel, constants in load(name).KERNELS]
IDS = [f"{name}:{kernel.name}" for name, kernel, _ in TRACES]

USE_BEFORE_DEFINITION = """builtin.module attributes {kt.target = "gfx942"} {
  func.func @k(%g: !kt.global<f32>) attributes {kt.kernel = "k", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %y = arith.addi %x, %c0 : index
    %x = arith.constant 1 : index
    func.return
  }
}
"""


def fresh_module(name: str, target: str = "gfx1100"):
    """A trace of the example's first kernel that no other test shares (these tests change
    it; the kernel's trace cache is left empty)."""
    kernel, constants = load(name).KERNELS[0]
    kernel._traces.clear()
    module = kernel.trace(target, **constants).module
    kernel._traces.clear()
    return module


# ---- complete: the fast verifier refuses what xDSL refuses, and more ------------------------

@pytest.mark.parametrize("name,kernel,constants", TRACES, ids=IDS)
def test_every_traced_example_verifies_both_ways(name, kernel, constants):
    module = kernel.trace("sm_90a", **constants).module
    module.verify()
    assert first_failure(module) is None


@pytest.mark.parametrize("body", [c[1] for c in OP_CASES], ids=[c[0] for c in OP_CASES])
def test_the_fast_verifier_refuses_every_op_case_of_the_corpus(body):
    """Each hand-written op that breaks a relation: xDSL's full check finds it (through the
    kt verifier), and so does the compiled one, so verify_module refuses it."""
    module = parse_module(bad_module(body))
    try:
        module.verify()
    except Exception:  # noqa: BLE001 - only whether it is refused matters here
        xdsl_refuses = True
    else:
        xdsl_refuses = False
    assert (first_failure(module) is not None) == xdsl_refuses


def test_a_use_before_its_definition_is_refused_though_xdsl_accepts_it():
    module = parse_module(USE_BEFORE_DEFINITION)
    module.verify()   # xDSL checks no dominance: this check is ktile's own
    with pytest.raises(KernelError) as caught:
        verify_module(module)
    assert "operand 1 of arith.addi" in str(caught.value)
    assert "defined before its use" in str(caught.value)


def test_the_verify_pass_refuses_a_use_before_its_definition():
    module = parse_module(USE_BEFORE_DEFINITION)
    with pytest.raises(KernelError, match="defined before its use"):
        pipeline.run_pipeline(module, targets.get("gfx942"))


# ---- a pass re-verifies only what it changed -------------------------------------------------

@pytest.fixture
def verified_per_pass(monkeypatch):
    """Runs the pipeline on a kernel; returns, per pass, the ops re-verified after it and how
    many times the whole module was verified."""
    record = {"whole": 0, "ops": []}
    real_ops, real_module = pipeline.verify_ops, verify_module

    def count_whole(module):
        record["whole"] += 1
        real_module(module)

    def note_ops(module, ops):
        record["ops"].append(list(ops))
        real_ops(module, ops)
    monkeypatch.setattr(pipeline, "verify_ops", note_ops)
    monkeypatch.setattr(pipeline, "verify_module", count_whole)
    monkeypatch.setattr(verify_pass, "verify_module", count_whole)

    def run(name: str, target: str):
        record.update(whole=0, ops=[])
        return fresh_module(name, target), record
    return run


def test_the_module_is_verified_whole_once_then_per_pass_changes(verified_per_pass):
    module, record = verified_per_pass("04_gemm", "gfx1100")
    assert record["whole"] == 1                       # by Verify, before any other check
    assert len(record["ops"]) == len(pipeline.PIPELINE)
    by_pass = dict(zip([p.name for p in pipeline.PIPELINE], record["ops"]))
    assert by_pass["verify"] == []                   # a check changes nothing
    assert by_pass["tensor-maps"] == []              # no tensor maps on gfx1100
    total = sum(1 for _ in module.walk())
    assert all(len(ops) < total for ops in record["ops"])


def test_the_fragments_pass_re_verifies_the_mma_and_its_retyped_operands(verified_per_pass):
    module, record = verified_per_pass("04_gemm", "gfx1100")
    fragments = record["ops"][[p.name for p in pipeline.PIPELINE].index("fragments")]
    assert any(isinstance(op, kt.MmaOp) for op in fragments)
    grid = [op for fn in module.body.block.ops if "kt.grid" in fn.attributes
            for op in fn.walk()]
    assert not set(grid) & {op for ops in record["ops"] for op in ops}  # never touched


def test_a_pass_that_breaks_an_op_is_caught_at_the_op():
    module = fresh_module("01_vector_add")
    before = op_states(module)
    binary = next(op for op in module.walk() if isinstance(op, kt.BinaryOp))
    binary.properties["fn"] = StringAttr("bogus")
    assert changed_ops(before, op_states(module)) is not None   # a local change
    with pytest.raises(KernelError, match="bogus"):
        pipeline.verify_pass_result(module, before)


def test_a_pass_that_moves_an_op_verifies_the_whole_module():
    module = fresh_module("01_vector_add")
    before = op_states(module)
    block = kernel_func(module).body.block
    first = block.first_op
    first.detach()
    block.insert_op_before(first, block.last_op)     # after the ops that read it
    assert changed_ops(before, op_states(module)) is None
    with pytest.raises(KernelError, match="defined before its use"):
        pipeline.verify_pass_result(module, before)


# ---- the C++ names are the printer's -----------------------------------------------------------

def printer_names(module) -> dict:
    printer = Printer(stream=io.StringIO())
    printer.print_op(module)
    return printer._ssa_values  # noqa: SLF001 - what the printer named, in its order


@pytest.mark.parametrize("target", ["gfx1100", "sm_90a"])
@pytest.mark.parametrize("name,kernel,constants", TRACES, ids=IDS)
def test_value_names_are_the_printers(name, kernel, constants, target):
    module = kernel.trace(target, **constants).module
    expected = {v: ("v" + n if n.isdigit() else n) for v, n in printer_names(module).items()}
    mine = value_names(module)
    assert list(mine) == list(expected)
    assert all(mine[v] == expected[v] for v in mine if expected[v].startswith("v"))


def test_hinted_names_count_per_function_as_the_printer_does():
    text = """builtin.module {
  func.func @a(%acc: index) -> index {
    %acc_2 = arith.addi %acc, %acc : index
    %t = arith.addi %acc_2, %acc : index
    %0 = arith.addi %t, %t : index
    func.return %0 : index
  }
  func.func @b(%acc: index) -> index {
    %1 = arith.addi %acc, %acc : index
    func.return %1 : index
  }
}"""
    module = parse_module(text)
    printed = printer_names(module)
    names = value_names(module)
    assert list(names) == list(printed)
    # hints count within a function, numbers restart in each (the printer's scopes)
    assert list(printed.values()) == ["acc", "acc_1", "t", "0", "acc", "0"]
    # the C++ names are those, hinted ones made unique across the file (each function is a
    # C++ scope of its own for the numbered ones)
    assert [names[v] for v in printed] == ["v_acc", "v_acc_1", "v_t", "v0", "v_acc_2", "v0"]


# ---- trace-time register estimates: the occupancy warning, once per kernel -------------------

@hk.kernel(grid=(1,))
def heavy(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, SCALE: hk.Constexpr[float] = 1.0):
    x = a[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 32, 64))
    y = a[hk.tile_coord(0, 0, 2, 0)].load(hk.RT(hk.fp32, 32, 64))  # <- here
    o[hk.tile_coord(0, 0, 0, 0)] = x * y + SCALE


def test_low_occupancy_on_sm_90a_is_warned_once_per_kernel_at_its_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        heavy.trace("sm_90a")
        heavy.trace("sm_90a", SCALE=2.0)      # another trace of the same kernel
        heavy.trace("gfx1100")                # and another target
    found = [str(w.message) for w in caught if issubclass(w.category, KernelWarning)
             and "occupancy" in str(w.message)]
    assert len(found) == 1, found
    assert f"{__file__}:{marked_line(heavy)}: warning: in kernel 'heavy'" in found[0]
    assert "of the 64 warps of a sm_90a multiprocessor fit" in found[0]
