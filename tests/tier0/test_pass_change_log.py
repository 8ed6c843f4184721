"""After each pass, verification re-checks what the pass changed, and only that (issue #10).

A pass's writes to properties and attributes are logged as it makes them (every op holds
recording dicts while the pipeline runs), retyped values are found in the column of types, and
an op added, removed, moved or rewired, or a dict replaced, sends the whole module back to
verification. Each case below is a "pass" that breaks one op in one of these ways: each is
caught, at the op, and a logged change is caught without verifying the whole module.
Behaviour, not time: benchmarks/trace_times.py measures the time.
"""
import pytest
from test_bad_inputs_ir import bad_module
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FunctionType, IndexType, IntegerAttr, IntegerType, StringAttr

import ktile as hk
import ktile.passes as pipeline
from examples_index import load
from ktile import targets
from ktile.errors import KernelError
from ktile.ir import ops as kt
from ktile.ir.printing import parse_module
from ktile.ir.query import kernel_func
from ktile.ir.types import RegTileType
from ktile.ir.verification import RecordedDict, changed_ops, op_states

# a loop that yields a tile defined before it, and a pick from a list of one shared tile
BODY = """%c1 = arith.constant 1 : index
    %zero = arith.constant 0 : index
    %other = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<16x64xf32, row>
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%carried = %acc64) -> (!kt.rt<16x64xf32, row>) {
      scf.yield %other : !kt.rt<16x64xf32, row>
    }
    %pick = "kt.lds_select"(%zero, %s) : (index, !kt.st<64x64xbf16>) -> !kt.st<64x64xbf16>
    %sum = "kt.binary"(%t, %t) <{fn = "add"}> : (!kt.rt<16x64xbf16, row>, !kt.rt<16x64xbf16, row>) -> !kt.rt<16x64xbf16, row>"""


def module():
    return parse_module(bad_module(BODY), verify=True)


def first(module, cls, where=lambda op: True):
    return next(op for op in module.walk() if type(op) is cls and where(op))


def named(module, cls, name):
    return first(module, cls, lambda op: op.results[0].name_hint == name)


def binary(module):
    return named(module, kt.BinaryOp, "sum")


def constant_zero(module):
    return named(module, arith.ConstantOp, "zero")


def fill_yielded(module):
    return named(module, kt.FillOp, "other")


# (id, the change a pass makes, words of the refusal, whether the whole module is verified)
BROKEN = [
    ("a property set", lambda m: binary(m).properties.__setitem__("fn", StringAttr("bogus")),
     ["bogus"], False),
    ("properties updated", lambda m: binary(m).properties.update(fn=StringAttr("bogus")),
     ["bogus"], False),
    ("properties merged", lambda m: binary(m).properties.__ior__({"fn": StringAttr("bogus")}),
     ["bogus"], False),
    ("a property popped", lambda m: binary(m).properties.pop("fn"), ["fn"], False),
    ("a property deleted", lambda m: binary(m).properties.__delitem__("fn"), ["fn"], False),
    ("properties cleared", lambda m: binary(m).properties.clear(), ["fn"], False),
    ("a property defaulted", lambda m: binary(m).properties.setdefault("x", StringAttr("y")),
     ["x"], False),
    ("the properties replaced",
     lambda m: setattr(binary(m), "properties", {"fn": StringAttr("bogus")}), ["bogus"], True),
    # a kt verifier reads a constant operand's value: the constant's readers are re-checked
    ("a constant's value changed",
     lambda m: constant_zero(m).properties.__setitem__("value", IntegerAttr(4, IndexType())),
     ["kt.lds_select", "index 4 is outside the list of 1 tiles"], False),
    # the yield reads the retyped tile, and the loop that owns the yield checks its type
    ("a yielded value retyped",
     lambda m: setattr(fill_yielded(m).results[0], "_type",
                       RegTileType(16, 32, fill_yielded(m).results[0].type.element,
                                   StringAttr("row"), StringAttr("none"))),
     ["scf", "16x32"], False),
    # a return checks its function's type: the function's terminator is re-checked
    ("a function's type changed",
     lambda m: kernel_func(m).properties.__setitem__(
         "function_type", FunctionType.from_lists(kernel_func(m).function_type.inputs.data,
                                                  [IndexType()])),
     ["func.return", "function output"], False),
    ("an op moved after its readers",
     lambda m: move_before_last(m, first(m, arith.ConstantOp)), ["defined before its use"], True),
    ("an op its readers need removed", lambda m: binary(m).operands[0].owner.detach(),
     ["kt.binary", "%sum"], True),
]


def move_before_last(module, op):
    block = op.parent
    op.detach()
    block.insert_op_before(op, block.last_op)


@pytest.fixture
def whole_verifications(monkeypatch):
    """Counts the whole-module verifications `verify_pass_result` asks for."""
    count = {"whole": 0}
    real = pipeline.verify_module

    def counted(module):
        count["whole"] += 1
        real(module)
    monkeypatch.setattr(pipeline, "verify_module", counted)
    return count


@pytest.mark.parametrize("change,words,whole", [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN])
def test_a_pass_that_breaks_an_op_is_caught(change, words, whole, whole_verifications):
    mod = module()
    before = op_states(mod)
    change(mod)
    with pytest.raises(KernelError) as caught:
        pipeline.verify_pass_result(mod, before)
    text = str(caught.value)
    assert all(word in text for word in words), text
    assert whole_verifications["whole"] == int(whole)


def test_an_inserted_op_is_verified():
    mod = module()
    before = op_states(mod)
    ref = binary(mod)
    bad = kt.BinaryOp("add", ref.operands[0], ref.operands[1], ref.results[0].type)
    bad.properties["fn"] = StringAttr("bogus")        # a dict the log never saw
    ref.parent.insert_op_after(bad, ref)
    with pytest.raises(KernelError, match="bogus"):
        pipeline.verify_pass_result(mod, before)


def test_a_replaced_dict_is_recorded_again_for_the_next_pass():
    mod = module()
    state = op_states(mod)
    op = binary(mod)
    op.properties = {"fn": StringAttr("mul")}          # still valid: the whole module passes
    state = pipeline.verify_pass_result(mod, state)
    assert type(op.properties) is RecordedDict
    op.properties["fn"] = StringAttr("bogus")          # the next pass's write is logged
    with pytest.raises(KernelError, match="bogus"):
        pipeline.verify_pass_result(mod, state)


def test_a_dict_replaced_by_an_equal_one_and_written_later_is_caught():
    mod = module()
    state = op_states(mod)
    op = binary(mod)
    op.properties = dict(op.properties)                # equal: nothing to verify yet
    state = pipeline.verify_pass_result(mod, state)
    op.properties["fn"] = StringAttr("bogus")          # a write the log cannot see
    with pytest.raises(KernelError, match="bogus"):
        pipeline.verify_pass_result(mod, state)


def test_an_unchanged_module_re_verifies_nothing(monkeypatch):
    checked = []
    monkeypatch.setattr(pipeline, "verify_ops", lambda module, ops: checked.append(list(ops)))
    mod = module()
    state = op_states(mod)
    pipeline.verify_pass_result(mod, state)
    assert checked == [[]]


def test_the_pipeline_leaves_plain_dicts():
    mod = module()
    pipeline.run_pipeline(mod, targets.get("gfx942"))
    assert all(type(op.properties) is dict and type(op.attributes) is dict
               for op in mod.walk())


def test_a_refused_pipeline_leaves_plain_dicts_too():
    mod = parse_module(bad_module('"kt.barrier"() : () -> ()'))
    kernel_func(mod).attributes["kt.warps"] = IntegerAttr(4096, 64)  # more threads than fit
    with pytest.raises(KernelError):
        pipeline.run_pipeline(mod, targets.get("gfx942"))
    assert all(type(op.properties) is dict for op in mod.walk())


# ---- exactly what each pass changed ------------------------------------------------------------

@pytest.fixture
def reverified(monkeypatch):
    """The ops re-verified after each pass of a pipeline run, by pass name."""
    record: list[list] = []
    real = pipeline.verify_ops

    def note(module, ops):
        record.append(list(ops))
        real(module, ops)
    monkeypatch.setattr(pipeline, "verify_ops", note)

    def run(name: str, kernel_name: str, target: str):
        kernel, constants = next((k, c) for k, c in load(name).KERNELS if k.name == kernel_name)
        kernel._traces.clear()
        trace = kernel.trace(target, **constants)
        kernel._traces.clear()
        return trace.module, dict(zip([p.name for p in pipeline.PIPELINE], record))
    return run


def test_budgets_re_verifies_the_kernel_function_its_module_and_return_only(reverified):
    module, by_pass = reverified("04_gemm", "gemm_wgmma", "gfx1100")
    fn = kernel_func(module)
    assert set(by_pass["budgets"]) == {fn, module, fn.body.block.last_op}


def test_waits_re_verifies_the_waits_it_annotated_and_their_owners(reverified):
    module, by_pass = reverified("04_gemm", "gemm_wgmma", "gfx1100")
    waits = [op for op in by_pass["waits"] if type(op) is kt.WaitForOp]
    # a wait naming only what an MMA reads or makes (its buffers, its accumulator) drains
    # nothing on gfx1100 (the MMA completes at once there; on sm_90a it is a
    # wgmma.wait_group): the pass clears its counts
    counted = [op for op in waits if "vm" in op.properties or "lds" in op.properties]
    read = {v for op in module.walk() if type(op) is kt.MmaSharedOp
            for v in (op.a, op.b, *op.results)}
    assert counted and all(set(op.tiles) <= read for op in set(waits) - set(counted))
    owners = {op.parent_op() for op in waits}
    assert set(by_pass["waits"]) == set(waits) | owners
    assert len(by_pass["waits"]) < sum(1 for _ in module.walk()) // 4


def test_lds_alloc_re_verifies_what_it_placed_and_their_owners(reverified):
    module, by_pass = reverified("04_gemm", "gemm_wgmma", "gfx1100")
    placed = [op for op in by_pass["lds-alloc"] if "offset" in op.properties
              or "arrival" in op.properties]
    assert any(type(op) is kt.AllocOp for op in placed)
    rest = set(by_pass["lds-alloc"]) - set(placed)
    fn = kernel_func(module)   # its attributes are written too (kt.lds_bytes)
    assert rest <= {op.parent_op() for op in placed} | {fn, module, fn.body.block.last_op}
    assert not any(type(op) in (kt.LdsLoadOp, kt.MmaSharedOp) for op in by_pass["lds-alloc"])


def test_fragments_re_verifies_the_retyped_tiles_their_readers_and_loops(reverified):
    module, by_pass = reverified("04_gemm", "gemm_wgmma", "gfx1100")
    ops = by_pass["fragments"]
    assert any(type(op) is kt.MmaSharedOp for op in ops)
    assert any(type(op) is scf.ForOp for op in ops)     # the loop carries the accumulator
    assert not any(type(op) is arith.AddiOp for op in ops)   # index arithmetic is untouched


@hk.kernel(grid=(1, 1, 1))
def counts_up(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    k = 0
    m = hk.arch.warp_id + 3
    while k < m:   # a device condition: an scf.while
        k = k + 1
    o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64)) * hk.to_float(k)


def test_only_ops_of_the_module_are_re_verified():
    """The while rewrite leaves a dropped block whose op reads the loop's step: retyping the
    step re-verifies its readers in the module, not the dropped one."""
    mod = counts_up.trace("gfx1100").module
    inside = set(mod.walk())
    step = next(v for op in mod.walk() for v in op.results
                if any(use.operation not in inside for use in v.uses))
    before = op_states(mod)
    step._type = IntegerType(32)
    changed = changed_ops(before, before.advanced())
    assert changed and all(op in inside for op in changed)
