"""Complete verification of a module at a small cost: xDSL's generic checks compiled once per
op class, plus SSA dominance, which xDSL does not check.

Invariant: `first_failure(module)` is None only if `module.verify()` (xDSL) would pass AND every
operand is defined before its use, in its own block or an enclosing one, and never above an
isolated op (a func). "Complete" means exactly that: for every op, what xDSL checks of it
(no erased operands; terminators where a region needs one; parent pointers; operand, result,
region and successor counts and each one's type constraint; region entry-argument
constraints; required and undeclared properties; attribute constraints; the op's traits; its
own `verify_`, i.e. the kt relations of verifiers.py), and dominance on top.

How it is cheap: an op class's IRDL definition is compiled once into an *acceptor*, a test
that may only say yes when xDSL's definition check would pass: a count per construct, an
isinstance per value of a base type, equality across the values of one type variable, and
for any other constraint the constraint itself, its verdict on an (immutable, hashable)
attribute memoized. Whatever the acceptor does not say yes to runs xDSL's own `verify_()`,
which raises the real error; a class it cannot compile (segment sizes, two variadic groups,
type-variable ranges, an unregistered op) always does. Traits and the op's own verifier
(the kt relations) run as they are.

This module only says *whether* and *where*; the error a user reads is produced by xDSL's
path in `query.verify_module`, so diagnostics are the same as a full `module.verify()`.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from operator import attrgetter

from xdsl.dialects.arith import ConstantOp
from xdsl.ir import Attribute, Block, ErasedSSAValue, Operation, Region, SSAValue
from xdsl.irdl.constraints import (AnyAttr, AnyOf, AnyRange, AttrConstraint, BaseAttr,
                                   EqIntConstraint, RangeLengthConstraint,
                                   RangeOf, VarConstraint, VerificationContext)
from xdsl.irdl.operations import (IRDLOperation, OptionalDef, SingleBlockRegionDef, VariadicDef,
                                  VarSingleBlockRegionDef)
from xdsl.traits import IsolatedFromAbove, IsTerminator, NoTerminator, OpTrait


@dataclass(frozen=True)
class Failure:
    """The first op found that does not verify; `operand` is set when the op is fine by
    xDSL but uses a value whose definition does not dominate it."""
    op: Operation
    operand: int | None = None


class NotCompiled(Exception):
    """A constraint the acceptor has no fast form for: the class takes xDSL's path."""


# ---- one attribute: a test compiled from an xDSL constraint --------------------------------

class Memo:
    """A variable-free constraint, its verdicts memoized: an attribute is immutable, so
    whether it satisfies the constraint never changes."""

    def __init__(self, constraint: AttrConstraint):
        self.constraint = constraint
        self.accepted: set[Attribute] = set()
        # the attribute objects last accepted, by id: an attribute hashes in Python, and one
        # type object is met again and again; holding them keeps their ids theirs
        self.objects: dict[int, Attribute] = {}

    def __call__(self, attr: Attribute) -> bool:
        if self.objects.get(id(attr)) is attr:
            return True
        if attr not in self.accepted:
            try:
                self.constraint.verify(attr, VerificationContext())
            except Exception:  # noqa: BLE001 - a refusal; xDSL's path names it
                return False
            self.accepted.add(attr)
        if len(self.objects) >= MEMO_OBJECTS:
            self.objects.clear()
        self.objects[id(attr)] = attr
        return True


MEMO_OBJECTS = 1024   # attribute objects a Memo holds for its identity check


class BoundMemo:
    """A constraint that reads type variables bound by the op's values (arith.constant's
    value and its result type `T`): memoized per attribute and the variables' types."""

    def __init__(self, constraint: AttrConstraint):
        self.constraint = constraint
        self.names = tuple(sorted(constraint.variables()))
        self.accepted: set[tuple] = set()

    def passes(self, attr: Attribute, bound: dict[str, Attribute]) -> bool:
        if any(name not in bound for name in self.names):
            return False
        key = (attr, *(bound[name] for name in self.names))
        if key in self.accepted:
            return True
        ctx = VerificationContext()
        for name in self.names:
            ctx.set_attr_variable(name, bound[name])
        try:
            self.constraint.verify(attr, ctx)
        except Exception:  # noqa: BLE001 - a refusal; xDSL's path names it
            return False
        self.accepted.add(key)
        return True


@dataclass(frozen=True)
class Var:
    """A type variable: every value it constrains has one type, which passes `test`."""
    name: str
    test: object


def attribute_test(constr: AttrConstraint):
    """`constr` as a test of one attribute: None (anything), a type or tuple of types (an
    isinstance), or a callable (Memo); a Var at the top. Raises NotCompiled."""
    if isinstance(constr, AnyAttr):
        return None
    if isinstance(constr, BaseAttr):
        return constr.attr
    if isinstance(constr, AnyOf) and all(isinstance(c, BaseAttr) for c in constr.attr_constrs):
        return tuple(c.attr for c in constr.attr_constrs)
    if isinstance(constr, VarConstraint):
        inner = attribute_test(constr.constraint)
        if isinstance(inner, Var):
            raise NotCompiled(constr)
        return Var(constr.name, inner)
    if constr.variables():
        return BoundMemo(constr)
    return Memo(constr)


def passes(test, attr: Attribute, bound: dict[str, Attribute]) -> bool:
    """Whether `attr` passes `test`, type variables as `bound` (never binds one)."""
    if test is None:
        return True
    if isinstance(test, (type, tuple)):
        return isinstance(attr, test)
    if isinstance(test, BoundMemo):
        return test.passes(attr, bound)
    return test(attr)


# ---- one op class: counts and tests per construct ------------------------------------------

@dataclass(frozen=True)
class Slots:
    """The positional definitions of operands or results: one test per definition, at most
    one of them variadic (it takes the values the others leave)."""
    tests: tuple
    variadic: int | None

    @property
    def isinstance_only(self) -> tuple | None:
        """((position, type or types), ...) when the check is a count and isinstance tests
        (no variadic, no type variable, no other constraint), else None."""
        if self.variadic is not None or not all(t is None or isinstance(t, (type, tuple))
                                                for t in self.tests):
            return None
        return tuple((i, t) for i, t in enumerate(self.tests) if t is not None)

    def test_at(self, count: int) -> tuple | None:
        """The test of each of `count` values, None when no split gives that count."""
        n = len(self.tests)
        v = self.variadic
        if v is None:
            return self.tests if count == n else None
        extra = count - (n - 1)
        if extra < 0:
            return None
        return self.tests[:v] + (self.tests[v],) * extra + self.tests[v + 1:]


def compile_slots(defs: list) -> Slots:
    variadic = [i for i, (_, d) in enumerate(defs) if isinstance(d, VariadicDef)]
    if len(variadic) > 1 or any(isinstance(defs[i][1], OptionalDef) for i in variadic):
        raise NotCompiled(defs)
    return Slots(tuple(_value_test(d.constr) for _, d in defs), variadic[0] if variadic else None)


def _value_test(constr):
    """A single value (RangeOf(c) of length 1) or each value of a variadic (RangeOf(c))."""
    if isinstance(constr, RangeLengthConstraint) and constr.length == EqIntConstraint(1):
        constr = constr.constraint
    if not isinstance(constr, RangeOf):
        raise NotCompiled(constr)
    return attribute_test(constr.constr)


@dataclass(frozen=True)
class Acceptor:
    """Says yes only where xDSL's check of the op's definition (counts, types, regions,
    successors, properties, attributes) passes."""
    operands: Slots
    results: Slots
    regions: tuple             # (single block?) per region definition; none variadic
    properties: tuple          # (name, test, optional)
    property_names: frozenset[str]
    attributes: tuple          # (name, test, optional)
    # counts and isinstance tests (Slots.isinstance_only), when both operands and results
    # have that form: most classes, checked without the general machinery
    counts: tuple[int, int] | None = None
    isinstance_tests: tuple[tuple, tuple] = ((), ())

    def accepts(self, op: Operation) -> bool:
        bound: dict[str, Attribute] = {}
        if self.counts is None:
            values_pass = (_values_pass(self.operands, op._operands, bound)  # noqa: SLF001
                           and _values_pass(self.results, op.results, bound))
        else:
            values_pass = self.counted_values_pass(op)
        return (values_pass
                and self.regions_pass(op)
                and not op._successors  # noqa: SLF001 - no compiled class has successors
                and _named_pass(self.properties, op.properties, bound)
                and op.properties.keys() <= self.property_names
                and _named_pass(self.attributes, op.attributes, bound))

    def counted_values_pass(self, op: Operation) -> bool:
        operands, results = op._operands, op.results  # noqa: SLF001 - no view object
        if (len(operands), len(results)) != self.counts:
            return False
        operand_tests, result_tests = self.isinstance_tests
        for i, test in operand_tests:
            if not isinstance(operands[i].type, test):
                return False
        for i, test in result_tests:
            if not isinstance(results[i].type, test):
                return False
        return True

    def regions_pass(self, op: Operation) -> bool:
        if not self.regions or len(op.regions) != len(self.regions):
            return len(op.regions) == len(self.regions)
        return all(len(r.blocks) == 1 for r, single in zip(op.regions, self.regions) if single)


def _values_pass(slots: Slots, values: Sequence[SSAValue], bound: dict) -> bool:
    tests = slots.test_at(len(values))
    if tests is None:
        return False
    for value, test in zip(values, tests):
        if test is None:
            continue
        ty = value.type
        if not isinstance(test, Var):
            if not passes(test, ty, bound):
                return False
            continue
        first = bound.get(test.name)
        if first is None:
            bound[test.name] = ty
            if not passes(test.test, ty, bound):
                return False
        elif first is not ty and first != ty:   # attributes compare in Python: same first
            return False
    return True


def _named_pass(defs: tuple, present: dict, bound: dict) -> bool:
    for name, test, optional in defs:
        value = present.get(name)
        if value is None:
            if not optional:
                return False
        elif not passes(test, value, bound):
            return False
    return True


def compile_acceptor(cls: type[Operation]) -> Acceptor | None:
    """`cls`'s definition check as an Acceptor; None where it takes xDSL's path."""
    op_def = cls.get_irdl_definition()
    if op_def.options or op_def.successors:
        return None
    try:
        named = [tuple((n, attribute_test(d.constr), isinstance(d, OptionalDef))
                       for n, d in defs.items()) for defs in (op_def.properties,
                                                              op_def.attributes)]
        if any(isinstance(t, Var) for defs in named for _, t, _ in defs):
            return None
        operands, results = compile_slots(op_def.operands), compile_slots(op_def.results)
        simple = (operands.isinstance_only, results.isinstance_only)
        counted = None not in simple
        return Acceptor(operands, results, _region_rules(op_def.regions), named[0],
                        frozenset(op_def.properties), named[1],
                        counts=(len(operands.tests), len(results.tests)) if counted else None,
                        isinstance_tests=simple if counted else ((), ()))
    except NotCompiled:
        return None


def _region_rules(defs: list) -> tuple:
    rules = []
    for _, d in defs:
        if isinstance(d, VariadicDef) or not isinstance(d.entry_args, (AnyRange, RangeOf)) \
                or (isinstance(d.entry_args, RangeOf)
                    and attribute_test(d.entry_args.constr) is not None):
            raise NotCompiled(d)
        rules.append(isinstance(d, (SingleBlockRegionDef, VarSingleBlockRegionDef)))
    return tuple(rules)


class OpRules:
    """What xDSL verifies of one op class: its acceptor, the traits that check something,
    its own verifier, and the structural facts of the class (terminator, isolation)."""

    def __init__(self, cls: type[Operation]):
        self.is_terminator = cls.has_trait(IsTerminator)
        self.no_terminator = cls.has_trait(NoTerminator)
        self.isolated = cls.has_trait(IsolatedFromAbove)
        custom = own_verifier(cls) if issubclass(cls, IRDLOperation) else False
        self.acceptor = compile_acceptor(cls) if custom is not False else None
        self.custom = custom or None
        self.traits = () if self.acceptor is None else tuple(
            t for t in cls.get_irdl_definition().traits
            # IsolatedFromAbove walks the op's whole body; the dominance walk establishes it
            if type(t).verify is not OpTrait.verify and not isinstance(t, IsolatedFromAbove))

    def verifies(self, op: Operation) -> bool:
        """Whether `op` passes xDSL's checks of it alone (nested ops are not looked at)."""
        if not self.structure_holds(op):
            return False
        try:
            if self.acceptor is None or not self.acceptor.accepts(op):
                op.verify_()     # xDSL's definition check, traits and the op's own verifier
                return True
            for trait in self.traits:
                trait.verify(op)
            if self.custom is not None:
                self.custom(op)
        except Exception:  # noqa: BLE001 - any failure is named by xDSL's own path
            return False
        return True

    def structure_holds(self, op: Operation) -> bool:
        """Operation.verify's own checks: no erased operand, no successors (no kt-module op
        branches; one that does is left to xDSL), a terminator where the region needs one."""
        if op._successors:  # noqa: SLF001 - no view object
            return False
        for value in op._operands:  # noqa: SLF001
            if isinstance(value, ErasedSSAValue):
                return False
        block = op.parent
        region = block.parent if block is not None else None
        if region is None or block.last_op is not op or self.is_terminator:
            return True
        if len(region.blocks) > 1:
            return False
        parent = region.parent
        return parent is None or rules_of(type(parent)).no_terminator


@lru_cache(maxsize=None)
def rules_of(cls: type[Operation]) -> OpRules:
    return OpRules(cls)


def own_verifier(cls: type[Operation]) -> Callable | None | bool:
    """The op class's own `verify_` (what irdl_op_definition wraps after the definition's
    checks); None when it has none, False when it cannot be found (then xDSL's path)."""
    try:
        captured = inspect.getclosurevars(cls.verify_).nonlocals
    except (TypeError, ValueError):
        return False
    if "op_def" not in captured:
        return False
    return captured.get("custom_verify")


# ---- the module: structure, ops and dominance in one walk -----------------------------------

def first_failure(root: Operation) -> Failure | None:
    """The first op (in walk order) that fails xDSL's checks of it, else the first use of a
    value its definition does not dominate, else None."""
    walk = _Walk()
    if not rules_of(type(root)).verifies(root):
        return Failure(root)
    walk.regions(root, set())
    return walk.failure or walk.dominance


def failing_ops(ops: Iterable[Operation]) -> Operation | None:
    """The first of `ops` that fails xDSL's checks of it alone."""
    for op in ops:
        if not rules_of(type(op)).verifies(op):
            return op
    return None


class _Walk:
    """Every op below a root, in order, with the values visible at each (dominance). The
    visible values are kept by id: an SSA value hashes in Python, an id in C."""

    def __init__(self):
        self.failure: Failure | None = None
        self.dominance: Failure | None = None

    def regions(self, op: Operation, visible: set[int]) -> None:
        if rules_of(type(op)).isolated:
            visible = set()
        for region in op.regions:
            for block in region.blocks:
                if block.parent is not region:
                    self.failure = self.failure or Failure(op)
                self.block(block, visible)
                if self.failure is not None:
                    return

    def block(self, block: Block, visible: set[int]) -> None:
        if block.first_op is None and not _may_be_empty(block):
            self.failure = Failure(block.parent.parent)
            return
        defined = list(map(id, block._args))  # noqa: SLF001 - no view objects here
        visible.update(defined)
        op = block._first_op  # noqa: SLF001
        while op is not None:
            if op.parent is not block or not rules_of(type(op)).verifies(op):
                self.failure = Failure(op)
                return
            if self.dominance is None and not visible.issuperset(map(id, op._operands)):  # noqa: SLF001
                self.dominance = _undominated(op, visible)
            if op.regions:
                self.regions(op, visible)
                if self.failure is not None:
                    return
            results = list(map(id, op.results))
            visible.update(results)
            defined += results
            op = op._next_op  # noqa: SLF001
        visible.difference_update(defined)


def _undominated(op: Operation, visible: set[int]) -> Failure:
    """The first operand of `op` not visible where it is used."""
    index = next(k for k, value in enumerate(op._operands) if id(value) not in visible)  # noqa: SLF001
    return Failure(op, index)


def _may_be_empty(block: Block) -> bool:
    """Block.verify: an empty block is an error only as the one block of an op's region
    that needs a terminator."""
    region = block.parent
    parent = region.parent if region is not None else None
    return parent is None or len(region.blocks) != 1 or rules_of(type(parent)).no_terminator


# ---- what a pass changed ----------------------------------------------------------------------
#
# A pass changes a verified module in three ways: it writes an op's properties or attributes
# (lds-alloc's offsets, waits' counts), it retypes values (fragments), or, in principle, it adds,
# removes, moves or rewires ops. The first is logged as it happens: while a ModuleState is
# current, every op's two dicts are RecordedDicts that note the op on each write. The second
# is a diff of one column of immutable types. The third is a comparison of pointer columns
# (each op's block, neighbours, operands, regions and dicts; each block's and region's links),
# and sends the whole module back to verification. No column copies a dict, and no step
# after the first walks the module.

class RecordedDict(dict):
    """An op's properties or attributes that note the op in a change log on every write, so
    that no pass can annotate an op without the log knowing."""
    __slots__ = ("op", "log")   # set by `_record`; dict's own constructor is the fast one

    def __setitem__(self, key, value) -> None:
        self.log.append(self.op)
        super().__setitem__(key, value)

    def __delitem__(self, key) -> None:
        self.log.append(self.op)
        super().__delitem__(key)

    def __ior__(self, other):
        self.log.append(self.op)
        return super().__ior__(other)

    def pop(self, *args):
        self.log.append(self.op)
        return super().pop(*args)

    def popitem(self):
        self.log.append(self.op)
        return super().popitem()

    def setdefault(self, key, default=None):
        self.log.append(self.op)
        return super().setdefault(key, default)

    def update(self, *args, **kwargs) -> None:
        self.log.append(self.op)
        super().update(*args, **kwargs)

    def clear(self) -> None:
        self.log.append(self.op)
        super().clear()


# what verification reads of the module's shape; all are plain xDSL fields (no view objects).
# An op's place holds its two dicts too: the same objects compare at once; a dict a pass
# replaced compares by content, against the recorded one it replaced (which keeps the content
# it had), so a replaced dict written later is a changed place.
OP_PLACE = attrgetter("parent", "_prev_op", "_next_op", "_operands", "regions", "properties",
                      "attributes")
BLOCK_PLACE = attrgetter("parent", "_first_op", "_last_op", "_next_block", "_args")
REGION_PLACE = attrgetter("parent", "_first_block", "_last_block")
VALUE_TYPE = attrgetter("_type")
RESULTS, ARGUMENTS = attrgetter("results"), attrgetter("_args")


class ModuleState:
    """A module as verification last saw it: its ops, blocks and regions in walk order, where
    each sits (`places`, as of the walk), the type of every value the ops define, and the log
    of ops whose properties or attributes were written since (`log[mark:]`). The walk gave
    every op RecordedDicts; `release` gives them back as dicts."""

    def __init__(self, root: Operation):
        self.root = root
        self.ops, self.blocks, self.regions = _structure(root)
        self.values = _defined_values(self.ops, self.blocks)
        self.log: list[Operation] = []
        self.mark = 0
        _record(self.ops, self.log)
        self.places = _places(self.ops, self.blocks, self.regions)
        self.types = list(map(VALUE_TYPE, self.values))

    def advanced(self) -> ModuleState:
        """The module's state now: this state's walk again when no op was added, removed,
        moved or rewired and no op's dicts were replaced by others; else a new walk."""
        if _places(self.ops, self.blocks, self.regions) != self.places:
            return ModuleState(self.root)
        after = object.__new__(ModuleState)
        after.__dict__.update(self.__dict__)   # the same walk, log and places (as walked)
        after.mark = len(self.log)
        after.types = list(map(VALUE_TYPE, self.values))
        return after

    def same_structure(self, other: ModuleState) -> bool:
        if self.places is other.places:   # one was advanced from the other, which compared them
            return True
        return (self.ops == other.ops and self.blocks == other.blocks
                and self.regions == other.regions and self.places == other.places)

    def written_before(self, later: ModuleState) -> list[Operation]:
        """The ops whose properties or attributes were written between this state and
        `later` (all writes logged since this state when `later` keeps another log)."""
        end = later.mark if later.log is self.log else len(self.log)
        return self.log[self.mark:end]

    def release(self) -> None:
        """Gives every op of the module plain dicts again (the module leaves the pipeline; a
        new walk, since a pass refused mid-way may have left ops this state never saw)."""
        for op in _structure(self.root)[0]:
            if type(op.properties) is RecordedDict:
                op.properties = dict(op.properties)
            if type(op.attributes) is RecordedDict:
                op.attributes = dict(op.attributes)


def _structure(root: Operation) -> tuple[list[Operation], list[Block], list[Region]]:
    """Every op (`root` first), block and region under `root`, in walk order."""
    ops: list[Operation] = [root]
    blocks: list[Block] = []
    regions: list[Region] = []
    _collect(root, ops, blocks, regions)
    return ops, blocks, regions


def _collect(op: Operation, ops: list, blocks: list, regions: list) -> None:
    """xDSL's walk of what `op` holds, without its generators (a call per op with regions)."""
    for region in op.regions:
        regions.append(region)
        for block in region.blocks:
            blocks.append(block)
            inner = block._first_op  # noqa: SLF001 - no view objects
            while inner is not None:
                ops.append(inner)
                if inner.regions:
                    _collect(inner, ops, blocks, regions)
                inner = inner._next_op  # noqa: SLF001


def _places(ops: list, blocks: list, regions: list) -> tuple[list, list, list]:
    return (list(map(OP_PLACE, ops)), list(map(BLOCK_PLACE, blocks)),
            list(map(REGION_PLACE, regions)))


def _record(ops: list[Operation], log: list[Operation]) -> None:
    """Makes every op's properties and attributes RecordedDicts that write to `log` (an op
    that has them already keeps them)."""
    for op in ops:
        op.properties = _recorded(op, op.properties, log)
        op.attributes = _recorded(op, op.attributes, log)


def _recorded(op: Operation, items: dict, log: list[Operation]) -> RecordedDict:
    recorded = items if type(items) is RecordedDict else RecordedDict(items)
    recorded.op, recorded.log = op, log
    return recorded


def _defined_values(ops: list[Operation], blocks: list[Block]) -> list[SSAValue]:
    """Every value the module defines: the ops' results, then the blocks' arguments."""
    return [*chain.from_iterable(map(RESULTS, ops)), *chain.from_iterable(map(ARGUMENTS, blocks))]


def op_states(root: Operation) -> ModuleState:
    """The module's state by a new walk; its ops' writes are logged from now on."""
    return ModuleState(root)


def changed_ops(before: ModuleState, after: ModuleState) -> list[Operation] | None:
    """The ops whose verification may have changed between two states of a module, None when
    ops were added, removed, moved or rewired (then the whole module is to be verified):
    - an op whose properties or attributes were written, the op whose region holds it (a
      symbol table checks its symbols' names) and the terminators of its own blocks (a
      return checks its function's type); the readers of a constant too (a kt verifier may
      read a constant operand's value: ops.constant_int);
    - for a retyped value, the op that defines it (a block argument: the region's owner), the
      ops that read it, and the op whose region holds each of these (a terminator's owner
      checks what it yields).
    Only ops of the module count: a value's uses may include ops of a block the tracer built
    and dropped."""
    if not after.same_structure(before):
        return None
    affected: dict[Operation, None] = {}
    for op in before.written_before(after):
        _affect(affected, op)
        for region in op.regions:
            for block in region.blocks:
                if block.last_op is not None:
                    affected[block.last_op] = None
        if type(op) in READ_BY_READERS:
            for use in op.results[0].uses:
                _affect(affected, use.operation)
    if after.types != before.types:
        for value, old, new in zip(after.values, before.types, after.types):
            if old is not new and old != new:
                _affect(affected, _definer(value))
                for use in value.uses:
                    _affect(affected, use.operation)
    if not affected:
        return []
    members = set(after.ops)
    return [op for op in affected if op in members]


# the ops whose properties another op's verifier reads (through its operand)
READ_BY_READERS = frozenset((ConstantOp,))


def _affect(affected: dict[Operation, None], op: Operation) -> None:
    """`op` and the op whose region holds it are to be verified again."""
    affected[op] = None
    parent = op.parent_op()
    if parent is not None:
        affected[parent] = None


def _definer(value: SSAValue) -> Operation:
    """The op that defines `value`: its owner, or for a block argument the block's op."""
    owner = value.owner
    return owner if isinstance(owner, Operation) else owner.parent_op()
