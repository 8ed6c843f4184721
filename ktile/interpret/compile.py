"""Compiling a function's IR once into Python closures, so running it does no dispatch.

Every SSA value gets a register slot (an index into the warp's register list). Every op
becomes a handler `h(regs, warp)` made by the factory its class maps to in `HANDLERS`.
A handler of an op that meets the other warps (kt.barrier, kt.block_reduce, or a loop or
branch holding one) is a generator: it yields the meeting to the block's scheduler.
A block becomes one runner that calls its handlers in order.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import func, scf
from xdsl.ir import Block, Operation, OpResult, SSAValue

from ..errors import InternalError
from ..ir.ops import LdsLoadOp, WaitForOp
from .memory import read_before_wait

Handler = Callable  # (regs: list, warp) -> None, or a generator of meetings
TERMINATORS = (scf.YieldOp, scf.ConditionOp, func.ReturnOp)


@dataclass(frozen=True)
class Body:
    """A compiled block: `run(regs, warp)`, whether it is a generator, and the slots its
    terminator passes on (yielded values, a condition and its values, returned values)."""
    run: Handler
    is_gen: bool
    results: tuple[int, ...]


class Compiler:
    """Slots and handlers of one function."""

    def __init__(self, warps: int, target=None):
        self.warps = warps
        self.target = target  # ktile.targets.Target, None when the module names none
        self.slots: dict[SSAValue, int] = {}
        self.constants: dict[int, object] = {}  # slot → value, set once in the registers

    def slot(self, value: SSAValue) -> int:
        found = self.slots.get(value)
        if found is None:
            found = self.slots[value] = len(self.slots)
        return found

    def slots_of(self, values) -> tuple[int, ...]:
        return tuple(self.slot(v) for v in values)

    def constant(self, value: SSAValue, data) -> None:
        """`value` is `data` for the whole run: stored in the initial registers, no handler."""
        self.constants[self.slot(value)] = data

    def registers(self) -> list:
        """The initial register list: constants in place, everything else unset."""
        regs = [None] * len(self.slots)
        for slot, data in self.constants.items():
            regs[slot] = data
        return regs

    # ---- blocks and ops ------------------------------------------------------------------

    def block(self, block: Block | None) -> Body:
        """Compile a block; a missing block (an `scf.if` without else) does nothing."""
        if block is None:
            return Body(_nothing, False, ())
        steps: list[tuple[Handler, bool]] = []
        results: tuple[int, ...] = ()
        for arg in block.args:
            self.slot(arg)
        for op in block.ops:
            steps.extend(self._guard(op))
            if isinstance(op, TERMINATORS):
                results = self.slots_of(op.operands)
                break
            handler = self.op(op)
            if handler is not None:
                steps.append((handler, inspect.isgeneratorfunction(handler)))
        run, is_gen = _runner(steps)
        return Body(run, is_gen, results)

    def op(self, op: Operation) -> Handler | None:
        from .handlers import HANDLERS
        factory = HANDLERS.get(type(op))
        if factory is None:
            raise InternalError(f"the interpreter has no handler for op '{op.name}'")
        return factory(op, self)

    def _guard(self, op: Operation) -> list[tuple[Handler, bool]]:
        """A check before `op` that none of its operands is a shared load still in flight.
        Only an lds_load's own result can be: passing it on (yield, loop init) is a use."""
        if isinstance(op, WaitForOp):
            return []
        watched = tuple(self.slot(v) for v in op.operands
                        if isinstance(v, OpResult) and isinstance(v.owner, LdsLoadOp))
        if not watched:
            return []

        def check(regs, warp):
            pending = warp.pending
            if not pending:
                return
            for slot in watched:
                if slot in pending:
                    raise read_before_wait(op, pending[slot][1])
        return [(check, False)]


def _nothing(regs, warp) -> None:
    return None


def _runner(steps: list[tuple[Handler, bool]]) -> tuple[Handler, bool]:
    """One function running the steps in order; a generator if any step is one."""
    handlers = tuple(h for h, _ in steps)
    if not any(g for _, g in steps):
        def run(regs, warp):
            for h in handlers:
                h(regs, warp)
        return run, False
    tagged = tuple(steps)

    def run_meeting(regs, warp):
        for h, is_gen in tagged:
            if is_gen:
                yield from h(regs, warp)
            else:
                h(regs, warp)
    return run_meeting, True
