"""The tracer's fast paths (issue #10) build and check exactly what the slow ones did.

ktile/ir/emit.py builds ops through xDSL's `Operation.create` with attributes made once per
process, not through the op classes' constructors: each builder method must give the op the
class constructor gives (operands, result types, properties, in xDSL's generic form).
"""
from __future__ import annotations

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, f32, i32
from xdsl.ir import Block
from xdsl.printer import Printer

from ktile import dtypes
from ktile.ir import emit
from ktile.ir import ops as kt
from ktile.ir import types as irt
from ktile.ir.verifiers import IRError

LOC = ("kernel.py", 7, 3)
A16 = irt.rt(dtypes.bf16, 16, 32)
B16 = irt.rt(dtypes.bf16, 32, 32, "col")
ACC = irt.rt(dtypes.fp32, 16, 32)
SHARED = irt.st(dtypes.bf16, 32, 32)
ARGS = [irt.global_(dtypes.bf16), IndexType(), IndexType(), A16, B16, ACC, SHARED, f32, i32,
        irt.rv(dtypes.i32, 16), irt.rt(dtypes.i32, 16, 32)]


def generic(op) -> str:
    """The op in xDSL's generic form, its operands named by their place in the test block."""
    import io
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(op)
    return out.getvalue()


def constructed(block_args, make):
    """The same op from the class constructor, in a block of the same argument types."""
    op = make(block_args)
    op.location = emit.location(LOC)
    return op


g, r, c, a, bt, acc, sh, x, n, rows, ints = range(len(ARGS))
CASES = {
    "load": (lambda v: (v[g], [v[r], v[c], v[r], v[c]], A16, 0.5),
             lambda v: kt.LoadOp(v[g], [v[r], v[c], v[r], v[c]], A16, 0.5)),
    "load_element": (lambda v: (v[g], [v[r], v[c], v[r], v[c]], A16, -0.0, "element"),
                     lambda v: kt.LoadOp(v[g], [v[r], v[c], v[r], v[c]], A16, -0.0, "element")),
    "store": (lambda v: (v[g], [v[r], v[c], v[r], v[c]], v[a]),
              lambda v: kt.StoreOp(v[g], [v[r], v[c], v[r], v[c]], v[a])),
    "copy_async": (lambda v: (v[g], [v[r], v[c], v[r], v[c]], v[sh], "element"),
                   lambda v: kt.CopyAsyncOp(v[g], [v[r], v[c], v[r], v[c]], v[sh], "element")),
    "gather": (lambda v: (v[g], v[r], v[r], v[rows], v[c], A16),
               lambda v: kt.GatherOp(v[g], v[r], v[r], v[rows], v[c], A16)),
    "scatter": (lambda v: (v[g], v[r], v[r], v[rows], v[c], v[a]),
                lambda v: kt.ScatterOp(v[g], v[r], v[r], v[rows], v[c], v[a])),
    "alloc": (lambda v: (SHARED,), lambda v: kt.AllocOp(SHARED)),
    "lds_load": (lambda v: (v[sh], v[r], v[c], A16), lambda v: kt.LdsLoadOp(v[sh], v[r], v[c], A16)),
    "lds_store": (lambda v: (v[sh], v[a], [v[r], v[c]]),
                  lambda v: kt.LdsStoreOp(v[sh], v[a], [v[r], v[c]])),
    "wait_for": (lambda v: ([v[a], v[sh]],), lambda v: kt.WaitForOp([v[a], v[sh]])),
    "barrier": (lambda v: (), lambda v: kt.BarrierOp()),
    "block_idx": (lambda v: (1,), lambda v: kt.BlockIdxOp(1)),
    "warp_id": (lambda v: (), lambda v: kt.WarpIdOp()),
    "extent": (lambda v: (v[g], 3), lambda v: kt.ExtentOp(v[g], 3)),
    "mma": (lambda v: (v[a], v[bt], v[acc], "AB"), lambda v: kt.MmaOp(v[a], v[bt], v[acc], "AB")),
    "mma_shared": (lambda v: (v[a], v[sh], v[acc]), lambda v: kt.MmaSharedOp(v[a], v[sh], v[acc])),
    "unary": (lambda v: ("exp", v[acc]), lambda v: kt.UnaryOp("exp", v[acc])),
    "binary": (lambda v: ("add", v[acc], v[x], ACC), lambda v: kt.BinaryOp("add", v[acc], v[x], ACC)),
    "select": (lambda v: (v[a], v[acc], v[acc]), lambda v: kt.SelectOp(v[a], v[acc], v[acc])),
    "cast": (lambda v: (v[acc], A16), lambda v: kt.CastOp(v[acc], A16)),
    "reduce": (lambda v: ("max", "row", v[acc], irt.rv(dtypes.fp32, 16)),
               lambda v: kt.ReduceOp("max", "row", v[acc], irt.rv(dtypes.fp32, 16))),
    "block_reduce": (lambda v: ("sum", v[acc]), lambda v: kt.BlockReduceOp("sum", v[acc])),
    "fill": (lambda v: (-0.0, ACC), lambda v: kt.FillOp(-0.0, ACC)),
    "iota": (lambda v: ("col", ACC), lambda v: kt.IotaOp("col", ACC)),
    "causal_mask": (lambda v: (v[acc], v[r], v[c], float("-inf")),
                    lambda v: kt.CausalMaskOp(v[acc], v[r], v[c], float("-inf"))),
    "rand": (lambda v: (v[n], v[ints], ACC), lambda v: kt.RandOp(v[n], v[ints], ACC)),
    "scalar_binary": (lambda v: ("floordiv", v[r], v[c]), lambda v: arith.FloorDivSIOp(v[r], v[c])),
    "scalar_binary_float": (lambda v: ("max", v[x], v[x]), lambda v: arith.MaximumfOp(v[x], v[x])),
    "scalar_compare": (lambda v: ("le", v[r], v[c]), lambda v: arith.CmpiOp(v[r], v[c], "sle")),
    "scalar_compare_float": (lambda v: ("ne", v[x], v[x]), lambda v: arith.CmpfOp(v[x], v[x], "une")),
    "int_cast": (lambda v: (v[r], i32), lambda v: arith.IndexCastOp(v[r], i32)),
    "index_to_f32": (lambda v: (v[n],), lambda v: arith.SIToFPOp(v[n], f32)),
    "const_index": (lambda v: (5,), lambda v: arith.ConstantOp(emit.integer_attr(5, IndexType()))),
    "const_f32": (lambda v: (-0.0,), lambda v: arith.ConstantOp(emit.f32_attr(-0.0))),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_builder_op_equals_the_class_constructors(case):
    method = case.removesuffix("_element").removesuffix("_float")
    fast_args, make = CASES[case]
    block = Block(arg_types=ARGS)
    b = emit.Builder(lambda: LOC)
    with b.at_end_of(block):
        getattr(b, method)(*fast_args(block.args))
    fast = block.last_op
    slow = constructed(block.args, make)     # reads the same block arguments
    assert type(fast) is type(slow)
    assert generic(fast) == generic(slow)
    assert fast.location == slow.location


def test_builder_op_is_verified_as_the_constructors_is():
    """A bad op built by the fast path is still refused by the verifier: the fast path skips
    argument building, not checking."""
    block = Block(arg_types=ARGS)
    b = emit.Builder(lambda: LOC)
    with b.at_end_of(block):
        b.mma(block.args[a], block.args[a], block.args[acc], "AB")   # K 32 against rows 16
    with pytest.raises(IRError, match="inner dimensions"):
        block.last_op.verify()
