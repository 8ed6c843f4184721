"""What every pass asks of a kt module: its target, the kernel's words for an op and a value,
the element size of a type, and which SSA values the structured control flow ties together.
"""
from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from .. import targets
from ..errors import KernelError
from ..ir.query import loc_of, target_name, user_op_name
from ..ir.types import RegTileType, RegVecType, SharedTileType, SharedVecType
from ..targets.base import Target


def target_of(module: ModuleOp) -> Target:
    """The target named by the module attribute `kt.target`."""
    name = target_name(module)
    if name is None:
        raise KernelError("the module names no target",
                          hint='add the module attribute kt.target = "gfx942" (or another arch)')
    return targets.get(name)


def line_of(op: Operation) -> str:
    """The kernel line an op came from, as a message says it ("line 12", "an unknown line")."""
    loc = loc_of(op)
    return f"line {loc.line}" if loc else "an unknown line"


def op_words(op: Operation) -> str:
    """An op in the kernel author's words: "mma", "shared load", "exp", "store"."""
    fn = op.properties.get("fn")
    if op.name in ("kt.unary", "kt.binary") and fn is not None:
        return fn.data  # type: ignore[attr-defined]
    return user_op_name(op)


def element_bytes(ty: Attribute) -> int:
    """Bytes one element of a tile or vector takes (a mask element takes a byte)."""
    return max(ty.dtype.bits // 8, 1)  # type: ignore[attr-defined]


def elements(ty: Attribute) -> int:
    if isinstance(ty, (RegTileType, SharedTileType)):
        return ty.rows.data * ty.cols.data
    if isinstance(ty, (RegVecType, SharedVecType)):
        return ty.length.data
    return 0


def describe_type(ty: Attribute) -> str:
    """A tile or vector type as the author declared it: "32x32 bf16 tile"."""
    if isinstance(ty, (RegTileType, SharedTileType)):
        kind = "shared tile" if isinstance(ty, SharedTileType) else "tile"
        return f"{ty.rows.data}x{ty.cols.data} {ty.dtype.name} {kind}"
    if isinstance(ty, (RegVecType, SharedVecType)):
        kind = "shared vector" if isinstance(ty, SharedVecType) else "vector"
        return f"{ty.length.data}-element {ty.dtype.name} {kind}"
    return str(ty)


def defined_inside(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined within one of `op`'s regions."""
    owner = value.owner
    block = owner if isinstance(owner, Block) else owner.parent_block()
    while block is not None:
        parent = block.parent_op()
        if parent is op:
            return True
        if parent is None:
            return False
        block = parent.parent_block()
    return False


def terminator(block: Block) -> Operation | None:
    return block.last_op


def tied_groups(op: Operation) -> Iterator[list[SSAValue]]:
    """The values a structured op forces to one type: scf.for init, block argument, yield
    operand and result; scf.if yields and result; scf.while's two carried chains."""
    if isinstance(op, scf.ForOp):
        yielded = terminator(op.body.block)
        for k, init in enumerate(op.iter_args):
            yield [init, op.body.block.args[k + 1], yielded.operands[k], op.results[k]]
    elif isinstance(op, scf.IfOp):
        for region in (op.true_region, op.false_region):
            if region.blocks:
                yielded = terminator(region.block)
                for k, result in enumerate(op.results):
                    yield [result, yielded.operands[k]]
    elif isinstance(op, scf.WhileOp):
        before, after = op.before_region.block, op.after_region.block
        condition, yielded = terminator(before), terminator(after)
        for k, init in enumerate(op.arguments):
            yield [init, before.args[k], yielded.operands[k]]
        for k, result in enumerate(op.results):
            yield [condition.args[k], after.args[k], result]


STRUCTURED = (scf.ForOp, scf.IfOp, scf.WhileOp)   # the ops that tie values together


class OpIndex:
    """Every op nested in a root, in walk order, found by one walk: a pass asks it for the
    ops of a class instead of walking the module once per question. Ops are told apart by
    their exact class (the kt and scf ops are not subclassed; `isinstance` against xDSL's
    abstract op classes costs more than the walk)."""

    def __init__(self, root: Operation):
        self.ops: list[Operation] = [root]
        self._by_class: dict[type, list[Operation]] = {type(root): [root]}
        self._collect_regions(root)

    def _collect_regions(self, op: Operation) -> None:
        """The ops nested in `op`, in walk order (a call per block, not per op)."""
        for region in op.regions:
            for block in region.blocks:
                inner = block._first_op  # noqa: SLF001 - no view objects
                while inner is not None:
                    self.ops.append(inner)
                    self._by_class.setdefault(type(inner), []).append(inner)
                    if inner.regions:
                        self._collect_regions(inner)
                    inner = inner._next_op  # noqa: SLF001

    def of(self, *classes: type) -> list[Operation]:
        """The ops of these classes, in walk order."""
        if len(classes) == 1:
            return list(self._by_class.get(classes[0], ()))
        wanted = frozenset(classes)
        return [op for op in self.ops if type(op) in wanted]


class TiedValues:
    """Union-find over SSA values: two values in one class must keep one type. `index`: the
    root's OpIndex where the caller has one (saves a walk)."""

    def __init__(self, root: Operation, index: OpIndex | None = None):
        self._parent: dict[SSAValue, SSAValue] = {}
        for op in (index or OpIndex(root)).of(*STRUCTURED):
            for group in tied_groups(op):
                for value in group[1:]:
                    self._union(group[0], value)

    def find(self, value: SSAValue) -> SSAValue:
        parent = self._parent.get(value, value)
        if parent is value:
            return value
        root = self.find(parent)
        self._parent[value] = root
        return root

    def _union(self, x: SSAValue, y: SSAValue) -> None:
        rx, ry = self.find(x), self.find(y)
        if rx is not ry:
            self._parent[ry] = rx

    def members(self) -> dict[SSAValue, list[SSAValue]]:
        classes: dict[SSAValue, list[SSAValue]] = {}
        for value in list(self._parent):
            classes.setdefault(self.find(value), []).append(value)
        for root, values in classes.items():
            if root not in values:
                values.append(root)
        return classes

    def class_of(self, value: SSAValue, classes: dict[SSAValue, list[SSAValue]]) -> list[SSAValue]:
        return classes.get(self.find(value), [value])
