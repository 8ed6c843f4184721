"""Control flow: scf.for (with iter_args), scf.if (with results), scf.while.

Block arguments and results are register slots; carrying a value is copying it between
slots. Each op has a plain handler and, when its body meets the other warps, a generator
one that passes the meeting up to the scheduler.
"""
from __future__ import annotations

from xdsl.dialects import scf

from ..ir.query import error_at


def _move(r, dst: tuple[int, ...], src: tuple[int, ...]) -> None:
    """Parallel copy: all sources are read before any destination is written."""
    values = [r[s] for s in src]
    for d, v in zip(dst, values):
        r[d] = v


def _for(op: scf.ForOp, c):
    body = c.block(op.body.block)
    lb, ub, step = c.slot(op.lb), c.slot(op.ub), c.slot(op.step)
    inits = c.slots_of(op.iter_args)
    iv, args = c.slot(op.body.block.args[0]), c.slots_of(op.body.block.args[1:])
    yields, results, run = body.results, c.slots_of(op.results), body.run

    def bounds(r):
        if r[step] <= 0:
            raise error_at(op, f"a runtime loop needs a positive step, got {r[step]} (a "
                               f"step of 0 never ends; a negative one is not counted down)",
                           hint="compute the step so it is at least 1 for every block, or "
                                "count up and index from the end")
        return range(r[lb], r[ub], r[step])

    def h(r, w):
        _move(r, args, inits)
        for i in bounds(r):
            r[iv] = i
            run(r, w)
            _move(r, args, yields)
        _move(r, results, args)

    def h_meeting(r, w):
        _move(r, args, inits)
        for i in bounds(r):
            r[iv] = i
            yield from run(r, w)
            _move(r, args, yields)
        _move(r, results, args)
    return h_meeting if body.is_gen else h


def _if(op: scf.IfOp, c):
    then = c.block(op.true_region.blocks[0])
    other = c.block(op.false_region.blocks[0] if op.false_region.blocks else None)
    cond, results = c.slot(op.cond), c.slots_of(op.results)

    def h(r, w):
        taken = then if r[cond] else other
        taken.run(r, w)
        _move(r, results, taken.results)

    def h_meeting(r, w):
        taken = then if r[cond] else other
        yield from _run_maybe_meeting(taken, r, w)
        _move(r, results, taken.results)
    return h_meeting if then.is_gen or other.is_gen else h


def _while(op: scf.WhileOp, c):
    before = c.block(op.before_region.blocks[0])
    after = c.block(op.after_region.blocks[0])
    inits, results = c.slots_of(op.arguments), c.slots_of(op.results)
    before_args = c.slots_of(op.before_region.blocks[0].args)
    after_args = c.slots_of(op.after_region.blocks[0].args)
    cond, passed = before.results[0], before.results[1:]

    def h(r, w):
        _move(r, before_args, inits)
        while True:
            before.run(r, w)
            if not r[cond]:
                break
            _move(r, after_args, passed)
            after.run(r, w)
            _move(r, before_args, after.results)
        _move(r, results, passed)

    def h_meeting(r, w):
        _move(r, before_args, inits)
        while True:
            yield from _run_maybe_meeting(before, r, w)
            if not r[cond]:
                break
            _move(r, after_args, passed)
            yield from _run_maybe_meeting(after, r, w)
            _move(r, before_args, after.results)
        _move(r, results, passed)
    return h_meeting if before.is_gen or after.is_gen else h


def _run_maybe_meeting(body, r, w):
    if body.is_gen:
        yield from body.run(r, w)
    else:
        body.run(r, w)


HANDLERS = {scf.ForOp: _for, scf.IfOp: _if, scf.WhileOp: _while}
