"""The wait check: every register a memory load writes is waited for before it is read.

Establishes, per function of a code object: no instruction reads (or overwrites) a register
that a vector, LDS or scalar load may still be writing, given the waits on the paths to it;
and no LDS read meets LDS a global→LDS copy (the `lds` loads of gfx942/gfx950) may still be
writing, unless a vmcnt wait covering the copy and then a barrier came first (trap 4).

The model (docs/cocheck.md says what it approximates):
- each counter keeps, per outstanding operation, how many operations of the same counter were
  issued after it. A wait to N completes the operations with at least N issued after them,
  when the counter completes in order; when it may not (a scalar load or a flat access is
  outstanding on it, or two kinds of operation share it), only a wait to 0 completes anything;
- straight-line within a basic block; where paths meet, an operation outstanding on any path
  is outstanding, with the fewest later operations of any path (a dataflow fixpoint, so loop
  back edges are followed);
- after reporting a hazard the check assumes its fix was applied, so one missing wait is one
  finding, not a cascade.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import findings as kinds
from .archinfo import ArchInfo
from .disasm import Instruction
from .findings import Finding, format_registers
from .isa import Decoded, MemoryAccess, Reg, decode

CAP = 64                    # more later operations than any wait can count: always covered
OUT_OF_ORDER_KINDS = {"smem", "flat"}
ORDER_KIND = {"vmem_load": "vmem", "vmem_store": "vmem", "sample": "vmem", "bvh": "vmem",
              "flat_load": "flat", "flat_store": "flat"}
# The fixpoint terminates (states only grow, in a finite lattice); this bound only turns a bug
# into a refusal instead of a hang.
MAX_PASSES_PER_BLOCK = 10_000


@dataclass(frozen=True)
class Issued:
    """A memory operation of the function, by address."""
    instruction: Instruction
    access: MemoryAccess
    defs: frozenset[Reg]


@dataclass
class Pending:
    """What is outstanding at one point of the function."""
    later: dict[str, dict[int, int]] = field(default_factory=dict)  # counter -> op -> #after
    writers: dict[Reg, frozenset[int]] = field(default_factory=dict)
    dma_landed: frozenset[int] = frozenset()     # copies waited for, no barrier since

    def copy(self) -> "Pending":
        return Pending({c: dict(ops) for c, ops in self.later.items()}, dict(self.writers),
                       self.dma_landed)

    def join(self, other: "Pending") -> bool:
        """Merge another path's state in; True when this one changed."""
        before = (self.later, self.writers, self.dma_landed)
        later = {c: dict(ops) for c, ops in self.later.items()}
        for counter, ops in other.later.items():
            mine = later.setdefault(counter, {})
            for op, count in ops.items():
                mine[op] = min(mine.get(op, count), count)
        writers = dict(self.writers)
        for reg, ops in other.writers.items():
            writers[reg] = writers.get(reg, frozenset()) | ops
        self.later, self.writers = later, writers
        self.dma_landed = self.dma_landed | other.dma_landed
        return (self.later, self.writers, self.dma_landed) != before

    def is_outstanding(self, op: int) -> bool:
        return any(op in ops for ops in self.later.values())


class FunctionCheck:
    """The wait check of one function: blocks, the fixpoint, then the findings."""

    def __init__(self, name: str, instructions: list[Instruction], arch: ArchInfo):
        self.name, self.arch = name, arch
        self.code = {i.address: i for i in instructions}
        self.decoded = {i.address: decode(i, arch) for i in instructions}
        self.issued = {a: Issued(self.code[a], d.memory, d.defs)
                       for a, d in self.decoded.items() if d.memory is not None}
        self.order = [i.address for i in instructions]
        self.dma_ops = [a for a, op in self.issued.items() if op.access.lds_dma]
        self.findings: dict[tuple, Finding] = {}
        self.reached = 0

    def run(self) -> list[Finding]:
        if not self.order:
            return []
        blocks = self._blocks()
        entry_states, converged = self._fixpoint(blocks)
        if not converged:
            return [self._not_converged()]
        for start, state in entry_states.items():
            self._walk(blocks[start], state.copy(), report=True)
        self.reached = sum(len(blocks[s]) for s in entry_states)
        return list(self.findings.values())

    # -- control flow ------------------------------------------------------------------------

    def _blocks(self) -> dict[int, list[int]]:
        leaders = {self.order[0]}
        for position, address in enumerate(self.order):
            decoded = self.decoded[address]
            if decoded.branch_target in self.code:
                leaders.add(decoded.branch_target)
            ends_block = decoded.branch_target is not None or decoded.ends
            if ends_block and position + 1 < len(self.order):
                leaders.add(self.order[position + 1])
        blocks, current = {}, None
        for address in self.order:
            if address in leaders:
                current = blocks.setdefault(address, [])
            current.append(address)
        return blocks

    def _successors(self, block: list[int]) -> list[int]:
        last = self.decoded[block[-1]]
        if last.ends:
            return []
        following = self._next_address(block[-1])
        if last.branch_target is None:
            return [following] if following is not None else []
        taken = [last.branch_target] if last.branch_target in self.code else []
        if last.conditional and following is not None:
            taken.append(following)
        return taken

    def _next_address(self, address: int) -> int | None:
        instruction = self.code[address]
        following = address + instruction.size
        return following if following in self.code else None

    def _fixpoint(self, blocks: dict[int, list[int]]) -> tuple[dict[int, Pending], bool]:
        entry = self.order[0]
        states, work = {entry: Pending()}, [entry]
        budget = MAX_PASSES_PER_BLOCK * len(blocks)
        while work and budget > 0:
            budget -= 1
            start = work.pop()
            out = self._walk(blocks[start], states[start].copy(), report=False)
            for successor in self._successors(blocks[start]):
                if successor not in states:
                    states[successor] = out.copy()
                    work.append(successor)
                elif states[successor].join(out) and successor not in work:
                    work.append(successor)
        return states, not work

    # -- the transfer function ----------------------------------------------------------------

    def _walk(self, block: list[int], state: Pending, report: bool) -> Pending:
        for address in block:
            self._step(address, self.decoded[address], state, report)
        return state

    def _step(self, address: int, decoded: Decoded, state: Pending, report: bool) -> None:
        if decoded.call:
            self._complete_all(state)       # a callee waits for everything on entry
        if decoded.wait:
            for counter, count in decoded.wait.items():
                self._wait(state, counter, count)
        if decoded.legacy_wait_on_split and report:
            self._legacy_wait(address)
        if decoded.barrier:
            state.dma_landed = frozenset()
        self._check_registers(address, decoded, state, report)
        if decoded.memory is not None and decoded.memory.reads_lds:
            self._check_lds_dma(address, state, report)
        if decoded.memory is not None:
            self._issue(address, decoded, state)

    def _issue(self, address: int, decoded: Decoded, state: Pending) -> None:
        for counter in decoded.memory.counters:
            ops = state.later.setdefault(counter, {})
            for op in ops:
                ops[op] = min(CAP, ops[op] + 1)
            ops[address] = 0
        if decoded.memory.writes_registers:
            for reg in decoded.defs:
                state.writers[reg] = frozenset({address})

    def _wait(self, state: Pending, counter: str, count: int) -> None:
        ops = state.later.get(counter)
        if not ops:
            return
        if count != 0 and self._out_of_order(state, counter):
            return
        for op in [op for op, later in ops.items() if later >= count]:
            self._complete_on(state, op, counter)

    def _out_of_order(self, state: Pending, counter: str) -> bool:
        order_kinds = {_order_kind(self.issued[op].access) for op in state.later[counter]}
        return bool(order_kinds & OUT_OF_ORDER_KINDS) or len(order_kinds) > 1

    def _complete_on(self, state: Pending, op: int, counter: str) -> None:
        del state.later[counter][op]
        if state.is_outstanding(op):
            return                          # a flat access waits on two counters
        issued = self.issued[op]
        for reg in issued.defs:
            remaining = state.writers.get(reg, frozenset()) - {op}
            if remaining:
                state.writers[reg] = remaining
            else:
                state.writers.pop(reg, None)
        if issued.access.lds_dma:
            state.dma_landed = state.dma_landed | {op}

    def _complete_all(self, state: Pending) -> None:
        for counter in list(state.later):
            self._wait(state, counter, 0)

    # -- the checks ---------------------------------------------------------------------------

    def _check_registers(self, address: int, decoded: Decoded, state: Pending,
                         report: bool) -> None:
        touched: dict[int, set[Reg]] = {}
        for reg in decoded.uses | decoded.defs:
            for op in state.writers.get(reg, ()):
                if not self._ordered_after(decoded, op, reg):
                    touched.setdefault(op, set()).add(reg)
        for op, regs in sorted(touched.items()):
            fix = self._fix_for(state, op)
            if report:
                why = [self._why_count(state, op, c, n) for c, n in fix.items()]
                self._wait_hazard(address, decoded, op, regs, fix, why)
            for counter, count in fix.items():
                self._wait(state, counter, count)

    def _ordered_after(self, decoded: Decoded, op: int, reg: Reg) -> bool:
        """A load overwriting a register that an earlier load of the same in-order counter
        writes: the earlier one lands first, so no wait is needed."""
        mine, theirs = decoded.memory, self.issued[op].access
        if reg in decoded.uses or mine is None or not mine.writes_registers:
            return False
        same_order = _order_kind(mine) == _order_kind(theirs)
        return same_order and mine.counters == theirs.counters and \
            _order_kind(theirs) not in OUT_OF_ORDER_KINDS

    def _fix_for(self, state: Pending, op: int) -> dict[str, int]:
        """The count each of the op's counters must be waited to for it to complete."""
        fix = {}
        for counter, ops in state.later.items():
            if op not in ops:
                continue
            count = 0 if self._out_of_order(state, counter) else ops[op]
            fix[counter] = min(count, self.arch.waits.max_count[counter])
        return fix

    def _why_count(self, state: Pending, op: int, counter: str, count: int) -> str:
        if count:
            return f"{count} later {counter} operations may stay in flight"
        if not self._out_of_order(state, counter):
            return f"it is the last {counter} operation issued"
        order_kinds = {_order_kind(self.issued[o].access) for o in state.later[counter]}
        if "smem" in order_kinds:
            return f"scalar loads return out of order, so only {counter} 0 covers one"
        if "flat" in order_kinds:
            return f"a flat access may go to memory or LDS, so only {counter} 0 covers it"
        return (f"{' and '.join(sorted(order_kinds))} operations share {counter} and complete "
                f"out of order, so only a count of 0 covers one")

    def _check_lds_dma(self, address: int, state: Pending, report: bool) -> None:
        in_flight = [op for op in self.dma_ops if state.is_outstanding(op)]
        if not in_flight and not state.dma_landed:
            return
        fix, why = {}, []
        if in_flight:
            # in order, the newest copy is the last to land: the wait that covers it covers all
            newest = min(in_flight, key=lambda op: sum(self._fix_for(state, op).values()))
            fix = self._fix_for(state, newest)
            why = [self._why_count(state, newest, c, n) for c, n in fix.items()]
        if report:
            blamed = newest if in_flight else max(state.dma_landed)
            self._lds_dma_hazard(address, blamed, fix, why)
        for counter, count in fix.items():
            self._wait(state, counter, count)
        state.dma_landed = frozenset()

    # -- findings -----------------------------------------------------------------------------

    def _wait_hazard(self, address: int, decoded: Decoded, op: int, regs: set[Reg],
                     fix: dict[str, int], why: list[str]) -> None:
        reader, load = self.code[address], self.issued[op]
        names = format_registers(regs)
        reads = bool(set(regs) & decoded.uses)
        counters = " and ".join(fix)
        verb = "reads" if reads else "overwrites"
        consequence = ("" if reads else ", and the load would land after it and undo the new "
                       "value")
        message = (f"`{reader.text}` at 0x{address:x} {verb} {names} while the load that "
                   f"writes {'it' if len(regs) == 1 else 'them'}, `{load.instruction.text}` at "
                   f"{load.instruction.where()}, may still be in flight: it counts on "
                   f"{counters}, and no wait on the paths since covers it{consequence}")
        self.findings[(address, op)] = Finding(
            kind=kinds.WAIT_HAZARD, kernel=self.name, message=message,
            fix=self._fix_text(fix, why, "before this instruction"),
            address=address, source=reader.source,
            details=self._details(reader, load, regs, fix, verb))

    def _lds_dma_hazard(self, address: int, op: int, fix: dict[str, int],
                        why: list[str]) -> None:
        reader, copy = self.code[address], self.issued[op]
        barrier, counter = self.arch.waits.barrier_spelling, copy.access.counters[0]
        if fix:
            reason = (f"it counts on {counter}, and no wait on the paths since covers it; a "
                      f"wave's wait covers only its own copies, so a barrier must follow it")
            fix_text = self._fix_text(fix, why, f"then `{barrier}` before this read")
        else:
            reason = (f"its {counter} wait came, but no barrier since: the wait covers this "
                      f"wave's copies only, and other waves' copies may still be landing")
            fix_text = f"insert `{barrier}` after the {counter} wait, before this read"
        message = (f"`{reader.text}` at 0x{address:x} reads LDS that the global→LDS copy "
                   f"`{copy.instruction.text}` at {copy.instruction.where()} may still be "
                   f"writing: {reason}")
        self.findings[(address, op)] = Finding(
            kind=kinds.LDS_DMA_HAZARD, kernel=self.name, message=message, fix=fix_text,
            address=address, source=reader.source,
            details=self._details(reader, copy, set(), fix, "reads LDS"))

    def _not_converged(self) -> Finding:
        return Finding(kind=kinds.NOT_CONVERGED, kernel=self.name,
                       message=f"the wait check did not settle within its bound on this "
                               f"function's {len(self.order)} instructions, so it proves nothing",
                       fix="report this kernel to ktile: it is a bug in the check")

    def _legacy_wait(self, address: int) -> None:
        wait = self.code[address]
        self.findings[(address, "legacy")] = Finding(
            kind=kinds.LEGACY_WAIT, kernel=self.name, failing=False, address=address,
            source=wait.source,
            message=(f"`{wait.text}` at 0x{address:x} is the gfx9-gfx11 wait: it assembles "
                     f"for {self.arch.name}, but gfx12 waits on split counters, so the check "
                     f"does not count it as a wait"),
            fix="use s_wait_loadcnt / s_wait_dscnt / s_wait_kmcnt / s_wait_storecnt")

    def _fix_text(self, fix: dict[str, int], why: list[str], where: str) -> str:
        spelled = " and ".join(f"`{self.arch.waits.spelling(c, n)}`" for c, n in fix.items())
        return f"insert {spelled} {where} ({'; '.join(why)})"

    def _details(self, reader: Instruction, load: Issued, regs, fix, access: str) -> dict:
        return {"instruction": reader.text, "access": access,
                "registers": format_registers(regs) if regs else None,
                "load": {"instruction": load.instruction.text,
                         "address": load.instruction.address, "source": load.instruction.source},
                "counters": list(fix),
                "wait": [self.arch.waits.spelling(c, n) for c, n in fix.items()]}


def _order_kind(access: MemoryAccess) -> str:
    return ORDER_KIND.get(access.kind, access.kind)


def check_function(name: str, instructions: list[Instruction], arch: ArchInfo):
    """(findings, instructions reached) of one function's wait check."""
    check = FunctionCheck(name, instructions, arch)
    found = check.run()
    return found, check.reached
