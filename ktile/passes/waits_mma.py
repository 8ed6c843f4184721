"""The waits pass's asynchronous MMA (sm_90a's wgmma kept in flight), its rules in one place.

A kt.mma_shared on a target with a "wgmma" wait counter issues its wgmma group and returns;
the group completes at a `wgmma.wait_group N`. The waits pass (waits.py) keeps it in its queue
as a "wgmma" entry: `names` its accumulator (the op's result), `reads` the shared tiles it
multiplies. This module holds what is particular to it:

- reading the accumulator (by anything but another mma accumulating into it, or a loop or
  branch carrying it) needs the group complete. The pass does not refuse such a read: a first
  analysis (`plan`) records each op that reads an accumulator still in flight, `insert_waits`
  puts a kt.wait_for naming those accumulators right before it (the op's own line), and the
  second analysis derives that wait's count like any other. So `out[...] = acc.to(bf16)` after
  the K loop gets `wgmma.wait_group 0`, and a read inside the loop drains the pipeline there.
- a wgmma completed by a wait that does not name its accumulator (one naming its shared
  operands: `hk.wait_for(*sa, *sb)` after the K loop) leaves the accumulator's registers
  unbound there: the wait is an `asm volatile` with a memory clobber, so nvcc may read them
  (a bit-cast for the store, a move at the loop's exit) before it, while the wgmma still
  writes them, and ptxas says nothing (skinny_wgmma_nt's rows 16 and up on the H200,
  2026-12-02). Such a group leaves an "acc" entry (`unbound`); a later read of the
  accumulator gets a kt.wait_for naming it right before it, as an in-flight read does, whose
  `kt::bind` ties the registers after the earlier wait.
- a copy or shared store into a tile that an in-flight wgmma reads is refused at its line:
  the author names the tile in a wait first (`hk.wait_for(sb[free])` completes the wgmma that
  read it, leaving the newer ones in flight), and in a kernel of several warpgroups a barrier
  follows that wait (each warpgroup waits only for its own wgmmas).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ..errors import KernelError
from ..ir import ops as kt
from ..ir.query import error_at
from ..targets.base import Target
from .common import describe_type, line_of, op_words

if TYPE_CHECKING:
    from .waits import InFlight, Queue


def has_async_mma(fn: FuncOp, target: Target) -> bool:
    if target.wait_counter("wgmma") is None:
        return False
    return any(type(op) is kt.MmaSharedOp for op in fn.walk())


def accumulators_read(values: Iterable[SSAValue], queue: Queue) -> list[SSAValue]:
    """The values among `values` that an in-flight wgmma's accumulator goes by."""
    pending = [e for e in queue if e.counter == "wgmma" and not e.completed_by]
    if not pending:
        return []
    return [v for v in dict.fromkeys(values) if any(v in e.names for e in pending)]


def unbound(completed: Iterable[InFlight], named: set[SSAValue]) -> list[InFlight]:
    """An "acc" entry for each wgmma group a wait completes without naming its accumulator:
    its registers are not bound at that wait (module docstring)."""
    from .waits import InFlight
    return [InFlight("acc", e.op, e.names) for e in completed if e.names and not e.names & named]


def unbound_read(values: Iterable[SSAValue], queue: Queue) -> list[SSAValue]:
    """The values among `values` that name an accumulator completed but not bound."""
    entries = [e for e in queue if e.counter == "acc"]
    if not entries:
        return []
    return [v for v in dict.fromkeys(values) if any(v in e.names for e in entries)]


def bound(queue: Queue, named: set[SSAValue]) -> Queue:
    """The queue after a wait naming `named`: the "acc" entries of those accumulators go."""
    return tuple(e for e in queue if not (e.counter == "acc" and e.names & named))


def insert_waits(planned: dict[Operation, list[SSAValue]]) -> None:
    """A kt.wait_for naming the accumulators each op reads, right before it, at its line."""
    for op, values in planned.items():
        wait = kt.WaitForOp(values)
        wait.location = op.location
        Rewriter.insert_op(wait, InsertPoint.before(op))


def issue(queue: Queue, entry: InFlight) -> Queue:
    """`entry` appended. Unfinished groups of the same op (a loop's earlier iterations, no
    wait since) stay one entry before it, all of them folded into the newest one's place: a
    wait naming any completes them all, no less than the hardware would (the loop's queue
    stays finite). So the previous iteration's group, carried through the loop and read after
    this one's issue (a lagged promotion), is waited for with this one left in flight
    (`wgmma.wait_group 1`), not with everything (0)."""
    older = [e for e in queue if e.counter == "wgmma" and e.op is entry.op and not e.completed_by]
    if len(older) < 2:
        return queue + (entry,)
    names = frozenset().union(*(e.names for e in older))
    reads = frozenset().union(*(e.reads for e in older))
    folded = older[-1].renamed(names, reads)
    return tuple(folded if e is older[-1] else e for e in queue if e not in older[:-1]) \
        + (entry,)


def dedupe(queue: Queue) -> Queue:
    """One completed entry per wgmma op: a loop without a barrier would otherwise pile them
    up (they only say the op's operands are not free yet for other warpgroups)."""
    seen: set[Operation] = set()
    kept = []
    for e in queue:
        if e.counter == "wgmma" and e.completed_by:
            if e.op in seen:
                continue
            seen.add(e.op)
        kept.append(e)
    return tuple(kept)


def check_not_read_by_mma(op: Operation, shared: SSAValue, queue: Queue) -> None:
    """No copy into, or store to, a shared tile an unfinished wgmma reads."""
    from .waits import may_alias
    tiles = may_alias(shared)
    for e in queue:
        if e.counter != "wgmma" or not e.reads & tiles:
            continue
        raise overwrite_error(op, e)


def overwrite_error(op: Operation, e: InFlight) -> KernelError:
    what = op_words(op)
    if e.completed_by is not None:
        return error_at(
            op, f"{what} into the shared tile that the mma at {line_of(e.op)} reads: the wait "
                f"at {line_of(e.completed_by)} completes this warpgroup's wgmma, but the "
                f"block's other warpgroups may still be reading the tile",
            hint="call hk.barrier() between that wait and this", what=what)
    return error_at(
        op, f"{what} into the shared tile that the mma at {line_of(e.op)} may still be "
            f"reading: on sm_90a its wgmma stays in flight after the op returns",
        hint="call hk.wait_for(tile) first (it waits for the wgmma that read the tile and "
             "leaves newer ones in flight), then hk.barrier() when the block has several "
             "warpgroups", what=what)


def read_in_flight(op: Operation, value: SSAValue, queue: Queue) -> KernelError:
    """Only reached when a read escaped the planned waits: still the author's line."""
    source = next(e.op for e in queue if e.counter == "wgmma" and value in e.names)
    return error_at(
        op, f"{op_words(op)} reads the {describe_type(value.type)} accumulated by the mma at "
            f"{line_of(source)} while its wgmma is still in flight",
        hint="call hk.wait_for(acc) before reading the accumulator", what=op_words(op))
