"""Lowerings of structured control flow: scf.for, scf.if, scf.while.

Values carried through a construct become C++ variables declared before it and assigned
where the IR yields; the construct's results then name those variables:

    T v15 = v7;                                  // scf.for iter_arg %15, initial value %7
    for (kt::index_t v14 = v11; v14 < v10; v14 += v12) {
      ...
      v15 = v19;                                 // scf.yield %19
    }
    T& v13 = v15;                                // result %13

    T v20;                                       // scf.if result %20
    if (v12) { ...; v20 = v18; } else { ...; v20 = v19; }

    T v9 = v6;                                   // scf.while before-argument %9
    T v7;                                        // result %7
    while (true) {
      ...                                        // before region
      v7 = v9; if (!v12) break;                  // scf.condition(%12) %9
      T& v13 = v7;                               // after-argument %13
      ...                                        // after region
      v9 = v16;                                  // scf.yield %16
    }

Terminators are lowered here, by their parent, because a yield means something different in
each construct. A yield that changes nothing writes no line.
"""
from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.ir import Block, Operation, SSAValue

from ..ir.query import error_at
from ..ir.types import SharedTileType, SharedVecType
from .emitter import Emitter, missing_lowering


def refuse_carried_shared(op: Operation, values: Sequence[SSAValue]) -> None:
    """A shared tile passed through a loop or branch (swapped double buffers) would be copied
    into a local variable by the C++ below; it is refused until carried tiles are translated
    as references."""
    for value in values:
        if isinstance(value.type, (SharedTileType, SharedVecType)):
            what = "loop" if isinstance(op, (scf.ForOp, scf.WhileOp)) else "branch"
            raise error_at(
                op, f"this {what} carries a shared tile (e.g. double buffers swapped each "
                    f"iteration); compiled kernels cannot carry shared tiles yet (the "
                    f"interpreter can)",
                hint="keep the buffers in a Python list and index it instead of swapping: "
                     "bufs = [hk.shared(hk.ST(...)) for _ in range(2)], then bufs[k % 2] with "
                     "k the loop counter (a device index: docs/language.md, shared memory)",
                what=what)


def assign(e: Emitter, op: Operation, targets: Sequence[SSAValue],
           sources: Sequence[SSAValue]) -> None:
    """`t = s;` for each pair, on one line: the translation of a yield or condition. A yield may
    pass a loop's carried values around (`scf.yield %b, %a`); then the copies go through
    temporaries, as a parallel assignment must."""
    pairs = [(e.name(t), e.name(s)) for t, s in zip(targets, sources, strict=True)]
    pairs = [(t, s) for t, s in pairs if t != s]
    if not pairs:
        return
    written = {t for t, _ in pairs}
    if not any(s in written for _, s in pairs):
        e.statement(op, " ".join(f"{t} = {s};" for t, s in pairs))
        return
    types = {e.name(t): e.type_of(t) for t in targets}
    saves = [f"{types[t]} kt_tmp{i} = {s};" for i, (t, s) in enumerate(pairs)]
    loads = [f"{t} = kt_tmp{i};" for i, (t, _) in enumerate(pairs)]
    e.statement(op, "{ " + " ".join(saves + loads) + " }")


def declare_carried(e: Emitter, op: Operation, variables: Sequence[SSAValue],
                    inits: Sequence[SSAValue]) -> None:
    for variable, init in zip(variables, inits, strict=True):
        e.statement(op, f"{e.type_of(variable)} {e.name(variable)} = {e.name(init)};")


def alias_results(e: Emitter, op: Operation, results: Sequence[SSAValue],
                  variables: Sequence[SSAValue]) -> None:
    """A result names the variable that carried it; a reference, so no tile is copied."""
    for result, variable in zip(results, variables, strict=True):
        e.statement(op, f"{e.type_of(result)}& {e.name(result)} = {e.name(variable)};")


def _body(e: Emitter, op: Operation, block: Block, expected: type[Operation]) -> Operation:
    terminator = e.emit_block(block)
    if not isinstance(terminator, expected):
        raise missing_lowering(op, e.target, f"a region ending in {terminator and terminator.name}")
    return terminator


def lower_for(e: Emitter, op: scf.ForOp) -> None:
    block = op.body.block
    induction, carried = block.args[0], block.args[1:]
    refuse_carried_shared(op, carried)
    declare_carried(e, op, carried, op.iter_args)
    i = e.name(induction)
    e.out.open(f"for ({e.type_of(induction)} {i} = {e.name(op.lb)}; {i} < {e.name(op.ub)}; "
               f"{i} += {e.name(op.step)}) {{", op)
    yield_op = _body(e, op, block, scf.YieldOp)
    assign(e, yield_op, carried, yield_op.operands)
    e.out.close(op)
    alias_results(e, op, op.results, carried)


def lower_if(e: Emitter, op: scf.IfOp) -> None:
    refuse_carried_shared(op, op.results)
    for result in op.results:
        e.statement(op, e.declaration(result))
    e.out.open(f"if ({e.name(op.cond)}) {{", op)
    _branch(e, op, op.true_region.block)
    if _has_else(op):
        e.out.reopen("} else {", op)
        _branch(e, op, op.false_region.block)
    e.out.close(op)


def _branch(e: Emitter, op: scf.IfOp, block: Block) -> None:
    yield_op = _body(e, op, block, scf.YieldOp)
    assign(e, yield_op, op.results, yield_op.operands)


def _has_else(op: scf.IfOp) -> bool:
    if not op.false_region.blocks:
        return False
    ops = list(op.false_region.block.ops)
    return len(ops) > 1 or bool(op.results)


def lower_while(e: Emitter, op: scf.WhileOp) -> None:
    before, after = op.before_region.block, op.after_region.block
    refuse_carried_shared(op, [*before.args, *op.results])
    declare_carried(e, op, before.args, op.arguments)
    for result in op.results:
        e.statement(op, e.declaration(result))
    e.out.open("while (true) {", op)
    condition = _body(e, op, before, scf.ConditionOp)
    _lower_condition(e, condition, op.results)
    alias_results(e, op, after.args, op.results)
    yield_op = _body(e, op, after, scf.YieldOp)
    assign(e, yield_op, before.args, yield_op.operands)
    e.out.close(op)


def _lower_condition(e: Emitter, condition: scf.ConditionOp, results) -> None:
    """The forwarded values become the results (kept if the loop ends) and, through the
    after-arguments' references, the after region's inputs (if it goes on)."""
    copies = [f"{e.name(r)} = {e.name(v)};" for r, v in zip(results, condition.args, strict=True)]
    leave = f"if (!{e.name(condition.condition)}) break;"
    e.statement(condition, " ".join([*copies, leave]))


CONTROL_LOWERINGS = {
    scf.ForOp: lower_for,
    scf.IfOp: lower_if,
    scf.WhileOp: lower_while,
}
