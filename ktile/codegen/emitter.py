"""The state of one translation and the helpers every lowering uses.

A lowering is a function `(e: Emitter, op) -> None` that writes the op's one C++ statement
(structured ops: their header, body and closing brace) through these helpers. The table of
lowerings lives in `lowering.py`; this module only dispatches through it.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache

from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from ..errors import InternalError
from ..ir.query import loc_of
from ..targets.base import Target
from .cpp_types import cpp_type
from .writer import CppWriter

Lowering = Callable[["Emitter", Operation], None]


class Emitter:
    def __init__(self, target: Target, names: Mapping[SSAValue, str],
                 lowerings: Mapping[type[Operation], Lowering], warps: int) -> None:
        self.target = target
        self.warps = warps          # of the kernel: block reductions size their scratch by it
        self.out = CppWriter()
        self._names = names
        self._lowerings = lowerings

    # ---- names and types ---------------------------------------------------------------------

    def name(self, value: SSAValue) -> str:
        name = self._names.get(value)
        if name is None:
            raise InternalError(f"an SSA value of type {value.type} has no printed name")
        return name

    def names(self, values: Iterable[SSAValue]) -> str:
        return ", ".join(self.name(v) for v in values)

    def type_of(self, value: SSAValue) -> str:
        spelled = cpp_type(value.type)
        if self.target.flat_layout != "flat" and ", kt::flat, " in spelled:
            # a flat tile is held in the target's row layout where its headers have no flat one
            spelled = spelled.replace(", kt::flat, ", f", kt::{self.target.flat_layout}, ")
        return spelled

    def declaration(self, value: SSAValue) -> str:
        """`T vN;`: a destination for a call that writes its first argument."""
        return f"{self.type_of(value)} {self.name(value)};"

    # ---- statements --------------------------------------------------------------------------

    def statement(self, op: Operation, text: str) -> None:
        self.out.statement(text, op)

    def define_by_call(self, op: Operation, result: SSAValue, call: str) -> None:
        """`T vN; kt::fn(vN, ...);`: one line, the declaration and the destination-first call."""
        self.out.statement(f"{self.declaration(result)} {call};", op)

    def define_by_value(self, op: Operation, result: SSAValue, expr: str,
                        qualifier: str = "") -> None:
        """`T vN = expr;` for scalars (arith, hardware indices, extents)."""
        prefix = f"{qualifier} " if qualifier else ""
        self.out.statement(f"{prefix}{self.type_of(result)} {self.name(result)} = {expr};", op)

    # ---- blocks ------------------------------------------------------------------------------

    def emit_block(self, block: Block) -> Operation | None:
        """Lower every op of `block` but its terminator, which the caller lowers (a yield means
        something different in each structured op); returns the terminator."""
        terminator = None
        for op in block.ops:
            if is_terminator(type(op)):
                terminator = op
                continue
            self.lower(op)
        return terminator

    def lower(self, op: Operation) -> None:
        lowering = self._lowerings.get(type(op))
        if lowering is None:
            raise missing_lowering(op, self.target)
        lowering(self, op)


@lru_cache(maxsize=None)
def is_terminator(cls: type[Operation]) -> bool:
    """Whether ops of `cls` end their block: a fact of the class, asked of every op."""
    return cls.has_trait(IsTerminator)


def missing_lowering(op: Operation, target: Target, what: str = "") -> InternalError:
    """Habit 7: a missing lowering names the op and the target."""
    loc = loc_of(op)
    where = f" (from {loc})" if loc else ""
    detail = f": {what}" if what else ""
    return InternalError(f"no C++ lowering of {op.name} for target {target.name} "
                         f"({target.vendor} {target.family}){detail}{where}")
