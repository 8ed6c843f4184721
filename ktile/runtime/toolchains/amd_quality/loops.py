"""The loops of a kernel's code, and which one is its hot loop.

A loop is a natural loop of the control-flow graph: a branch to a block that dominates it (a
back edge) closes a loop headed by that block, and its body is every block that reaches the
branch without passing the header. Back edges to one header are one loop (clang often ends a
loop in two places, one per path through it). AMDGPU code is reducible (the backend
structurizes control flow), so every cycle has such a header.

A branch to an earlier address is not enough: clang lays cold blocks out after `s_endpgm` and
branches from there back to where they rejoin, which looks like a loop around everything in
between but is none (the rejoin point does not dominate the cold block).

The hot loop is the kernel's main loop, chosen by what the loops hold, nested loops included:
  1. the loops holding the most MMA instructions (where no loop holds one: the most memory
     instructions);
  2. of those, the most deeply nested: an outer loop around the main loop (a loop over output
     tiles) holds the same MMAs but is not where they repeat;
  3. then the one with the fewest sub-32-bit global accesses (a loop that was split into a
     fast copy and an edge-tile copy: the fast one);
  4. then the largest.
A loop that holds no MMA, such as a per-element loop for a ragged edge tile nested in the
main loop, is never picked while another loop holds one. Counts are of the code as laid out:
trip counts are unknown, so "hot" is a structural guess, not a profile.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...cocheck.disasm import Instruction
from ...cocheck.isa import decode
from .mix import GLOBAL_LOAD_PREFIXES, GLOBAL_STORE_PREFIXES, access_bits, is_memory, is_mma

CONTROL_PREFIXES = ("s_branch", "s_cbranch_", "s_endpgm", "s_setpc", "s_rfe")
SCALAR_ELEMENT_BITS = 32    # narrower global accesses are per-element edge-tile copies


@dataclass(frozen=True)
class Loop:
    header: int                   # the block every iteration starts at
    addresses: frozenset[int]     # its instructions, nested loops' included
    back_edges: int               # branches to the header from inside
    depth: int = 1                # loops around it, itself included

    @property
    def size(self) -> int:
        return len(self.addresses)

    @property
    def end(self) -> int:
        """The last address of its instructions (its body need not be contiguous)."""
        return max(self.addresses)

    def contains(self, other: "Loop") -> bool:
        return other.addresses < self.addresses

    def instructions(self, body: list[Instruction]) -> list[Instruction]:
        return [i for i in body if i.address in self.addresses]


@dataclass(frozen=True)
class Block:
    start: int
    addresses: tuple[int, ...]
    successors: tuple[int, ...]


def find_loops(body: list[Instruction], arch) -> list[Loop]:
    """The natural loops of `body` (one function, in address order), outermost first."""
    if not body:
        return []
    blocks = control_flow(body, arch)
    idom = immediate_dominators(body[0].address, blocks)
    predecessors = _predecessors(blocks, idom)
    latches: dict[int, list[int]] = {}
    for start in idom:
        for successor in blocks[start].successors:
            if _dominates(successor, start, idom):
                latches.setdefault(successor, []).append(start)
    plain = [_natural_loop(header, tails, blocks, predecessors)
             for header, tails in latches.items()]
    loops = [Loop(lp.header, lp.addresses, lp.back_edges,
                  1 + sum(other.contains(lp) for other in plain)) for lp in plain]
    return sorted(loops, key=lambda lp: (lp.depth, lp.header))


def hot_loop(loops: list[Loop], body: list[Instruction]) -> Loop | None:
    """The kernel's main loop, by the rule of the module doc; None without a loop."""
    if not loops:
        return None
    mmas = {lp: _count(lp, body, is_mma) for lp in loops}
    work = mmas if any(mmas.values()) else {lp: _count(lp, body, is_memory) for lp in loops}
    most = max(work.values())
    holding = [lp for lp in loops if work[lp] == most]
    return max(holding, key=lambda lp: (lp.depth, -_count(lp, body, is_element_access),
                                        lp.size))


def is_element_access(instruction: Instruction) -> bool:
    """A global load or store of less than 32 bits per lane: one element of a 16- or 8-bit
    tile at a time, the edge-tile path."""
    if not instruction.mnemonic.startswith((*GLOBAL_LOAD_PREFIXES, *GLOBAL_STORE_PREFIXES)):
        return False
    return (access_bits(instruction.mnemonic) or SCALAR_ELEMENT_BITS) < SCALAR_ELEMENT_BITS


# ---- the control-flow graph ------------------------------------------------------------------

def control_flow(body: list[Instruction], arch) -> dict[int, Block]:
    """Basic blocks by start address: a block ends at a branch or an end of the program."""
    code = {i.address: i for i in body}
    control = {i.address: decode(i, arch) for i in body
               if i.mnemonic.startswith(CONTROL_PREFIXES)}
    leaders = {body[0].address}
    for position, instruction in enumerate(body):
        decoded = control.get(instruction.address)
        if decoded is None:
            continue
        if decoded.branch_target in code:
            leaders.add(decoded.branch_target)
        if (decoded.branch_target is not None or decoded.ends) and position + 1 < len(body):
            leaders.add(body[position + 1].address)
    runs: dict[int, list[int]] = {}
    current: list[int] = []
    for instruction in body:
        if instruction.address in leaders:
            current = runs.setdefault(instruction.address, [])
        current.append(instruction.address)
    return {start: Block(start, tuple(run), _successors(code[run[-1]], control, code))
            for start, run in runs.items()}


def _successors(last: Instruction, control: dict, code: dict) -> tuple[int, ...]:
    decoded = control.get(last.address)
    following = last.address + last.size
    falls = [following] if following in code else []
    if decoded is None or (decoded.branch_target is None and not decoded.ends):
        return tuple(falls)
    if decoded.ends:
        return ()
    taken = [decoded.branch_target] if decoded.branch_target in code else []
    return tuple(taken + (falls if decoded.conditional else []))


def immediate_dominators(entry: int, blocks: dict[int, Block]) -> dict[int, int]:
    """Each block reachable from `entry` → its immediate dominator (the entry's is itself);
    Cooper, Harvey and Kennedy's iteration over reverse postorder."""
    order = _reverse_postorder(entry, blocks)
    rank = {block: n for n, block in enumerate(order)}
    predecessors = {block: [] for block in order}
    for block in order:
        for successor in blocks[block].successors:
            predecessors[successor].append(block)
    idom = {entry: entry}
    changed = True
    while changed:
        changed = False
        for block in order[1:]:
            done = [p for p in predecessors[block] if p in idom]
            new = done[0]     # the block's parent in the depth-first tree comes earlier
            for other in done[1:]:
                new = _common_dominator(other, new, idom, rank)
            if idom.get(block) != new:
                idom[block], changed = new, True
    return idom


def _reverse_postorder(entry: int, blocks: dict[int, Block]) -> list[int]:
    seen, postorder = {entry}, []
    stack = [(entry, iter(blocks[entry].successors))]
    while stack:
        block, successors = stack[-1]
        following = next((s for s in successors if s not in seen), None)
        if following is None:
            postorder.append(block)
            stack.pop()
            continue
        seen.add(following)
        stack.append((following, iter(blocks[following].successors)))
    return postorder[::-1]


def _common_dominator(a: int, b: int, idom: dict[int, int], rank: dict[int, int]) -> int:
    while a != b:
        while rank[a] > rank[b]:
            a = idom[a]
        while rank[b] > rank[a]:
            b = idom[b]
    return a


def _dominates(a: int, b: int, idom: dict[int, int]) -> bool:
    while b != a:
        if idom[b] == b:
            return False
        b = idom[b]
    return True


def _predecessors(blocks: dict[int, Block], reachable: dict[int, int]) -> dict[int, list[int]]:
    found: dict[int, list[int]] = {block: [] for block in reachable}
    for block in reachable:
        for successor in blocks[block].successors:
            found[successor].append(block)
    return found


def _natural_loop(header: int, tails: list[int], blocks: dict[int, Block],
                  predecessors: dict[int, list[int]]) -> Loop:
    """The header and every block reaching one of its back edges without passing it."""
    inside, work = {header}, list(tails)
    while work:
        block = work.pop()
        if block not in inside:
            inside.add(block)
            work.extend(predecessors[block])
    addresses = frozenset(a for block in inside for a in blocks[block].addresses)
    return Loop(header, addresses, len(tails))


def _count(loop: Loop, body: list[Instruction], kind) -> int:
    return sum(kind(i) for i in body if i.address in loop.addresses)
