"""What the C++ compiler makes of a kernel's register values, for the budgets pass's estimate.

The translated kernel computes a tile op as a loop over the tile's elements, which nvcc and
clang unroll and scalarise; two of their rewrites change which registers are live, and the
estimate follows them (measured against ptxas: tests/tier1/test_register_estimates.py and
test_flat_register_estimates.py):

- common subexpressions: a pure op computed twice from the same operands (`x.to(fp32)` in a
  norm's sum of squares and again in its output) is computed once and its result held between
  the uses, in place of its operand: the duplicate is no op, the first one's result lives until
  the duplicate's last use, and the operand dies at the first one when nothing else reads it.
  A `kt.wait_for` naming the operand between the two rebinds it (the translation binds the
  named registers through an asm statement the compiler cannot see through), so the second op
  is computed again, not held: kernels use exactly that to keep a cast's copies from living
  (examples/02_rmsnorm.py, `rmsnorm_persistent`);
- elementwise fusion: an elementwise result (unary, binary, select, cast, iota, fill) whose only
  reader is another elementwise op or a reduction in the same block is never held whole: each
  element is consumed as it is made. It takes no registers; its own operands are read where
  its reader is (they live until then). An iota or a fill (no register operands: an index or a
  constant per element, made again where needed) is never held where all its readers are
  elementwise ops or reductions of its block.

`CompilerView(fn)` computes both once per kernel; the estimate walks `operands(op)` and
`results(op)` instead of the op's own.
"""
from __future__ import annotations

from collections import ChainMap

from xdsl.ir import Block, Operation, SSAValue

from ..ir import ops as kt
from ..ir.types import RegTileType, RegVecType

ELEMENTWISE = frozenset((kt.UnaryOp, kt.BinaryOp, kt.SelectOp, kt.CastOp, kt.IotaOp, kt.FillOp))
READERS = ELEMENTWISE | {kt.ReduceOp}          # ops that read an operand element by element
PURE = ELEMENTWISE | {kt.ReduceOp}             # ops the compiler may compute once for two uses
REGISTER_TYPES = (RegTileType, RegVecType)


class CompilerView:
    """The duplicates of pure ops (`duplicates`: their ids; `canonical`: a duplicate's result
    id -> the first op's result) and the fused values (`fused`: ids) of kernel function `fn`."""

    def __init__(self, fn: Operation):
        self.canonical: dict[int, SSAValue] = {}
        self.duplicates: set[int] = set()
        self.fused: set[int] = set()
        self._readers: dict[int, dict[int, Operation]] = {}   # canonical value id -> readers
        self._bound: dict[int, int] = {}      # value id -> how many waits have rebound it
        for region in fn.regions:
            for block in region.blocks:
                self._common(block, ChainMap())
        for region in fn.regions:
            for block in region.blocks:
                self._fuse(block)

    def value(self, value: SSAValue) -> SSAValue:
        return self.canonical.get(id(value), value)

    def results(self, op: Operation) -> list[SSAValue]:
        """The values `op` makes that the compiler holds (none for a duplicate)."""
        if id(op) in self.duplicates:
            return []
        return [v for v in op.results if id(v) not in self.fused]

    def operands(self, op: Operation) -> list[SSAValue]:
        """The held values `op` reads: a fused operand stands for what it is made from."""
        if id(op) in self.duplicates:
            return []
        return self.expand(op._operands)  # noqa: SLF001 - no view object

    def expand(self, values) -> list[SSAValue]:
        found: list[SSAValue] = []
        pending = [self.value(v) for v in values]
        while pending:
            value = pending.pop()
            if id(value) in self.fused:
                pending.extend(self.value(v) for v in value.owner._operands)  # noqa: SLF001
            else:
                found.append(value)
        return found

    # ---- common subexpressions ---------------------------------------------------------------

    def _common(self, block: Block, seen: ChainMap) -> None:
        """Marks duplicates in `block` (and its nested blocks, which see the ops before them
        in the enclosing blocks), and records each value's readers."""
        for op in block.ops:
            if isinstance(op, kt.WaitForOp):
                for v in op._operands:  # noqa: SLF001 - no view object
                    self._bound[id(self.value(v))] = self._bound.get(id(self.value(v)), 0) + 1
            if type(op) in PURE and not op.regions and _holds_registers(op):
                operands = [self.value(v) for v in op._operands]  # noqa: SLF001
                key = (type(op), tuple((id(v), self._bound.get(id(v), 0)) for v in operands),
                       str(op.properties), tuple(str(r.type) for r in op.results))
                first = seen.get(key)
                if first is not None:
                    self.duplicates.add(id(op))
                    for mine, kept in zip(op.results, first.results):
                        self.canonical[id(mine)] = kept
                    continue
                seen[key] = op
            for operand in op._operands:  # noqa: SLF001 - no view object
                self._readers.setdefault(id(self.value(operand)), {})[id(op)] = op
            for region in op.regions:
                for inner in region.blocks:
                    self._common(inner, seen.new_child())

    # ---- elementwise fusion -----------------------------------------------------------------

    def _fuse(self, block: Block) -> None:
        for op in block.ops:
            for region in op.regions:
                for inner in region.blocks:
                    self._fuse(inner)
            if type(op) not in ELEMENTWISE or id(op) in self.duplicates or len(op.results) != 1:
                continue
            result = op.results[0]
            readers = list(self._readers.get(id(result), {}).values())
            if not readers or not isinstance(result.type, REGISTER_TYPES):
                continue
            local = all(type(r) in READERS and r.parent_block() is block for r in readers)
            if local and (len(readers) == 1 or not _register_operands(op)):
                self.fused.add(id(result))


def _holds_registers(op: Operation) -> bool:
    return any(isinstance(r.type, REGISTER_TYPES) for r in op.results)


def _register_operands(op: Operation) -> bool:
    return any(isinstance(v.type, REGISTER_TYPES) for v in op._operands)  # noqa: SLF001
