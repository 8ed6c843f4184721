"""waits: every asynchronous result is waited for before it is used, with derived counts.

Invariant established: each kt.wait_for carries `vm` (global→shared kt.copy_async) and `lds`
(shared→register kt.lds_load) counts where it has something of that kind to drain — at most
that many of the kind, issued after the newest one it names, stay in flight — clamped to
what the target's counter encodes; a kind with nothing to drain, or no counter on the target
(NVIDIA shared loads are scoreboarded), gets no property. Every path through the kernel
(loops to a fixpoint, so a copy issued at the end of iteration i may be waited at the start of
i+1) has: no op using, or a loop or branch carrying (which copies), a shared load's
registers before a wait names them (trap 1: a wait binds only the tiles it names); no shared
load from, mma reading (kt.mma_shared, complete when it returns), or store into, a shared tile
a copy is still filling (trap 4 when a barrier came
between: a barrier does not wait for the copy); no copy into a shared tile that a copy is
still filling or a shared load still reading; and no copy in flight when the kernel ends (a
shared load never used is harmless on the hardware; the interpreter reports it at run time).
A TMA copy (one the tensor-maps pass gave a `map`: sm_90a) is a "vm" op like any other, but
completes on its tile's mbarrier, not on the counter: a wait's `vm` counts only the other
copies, and its `arrivals` lists the slots (lds-alloc) of the TMA copies it completes on some
path — those it names and every older one still in flight, as the counter completes the rest.

On a target with a "wgmma" counter (sm_90a) a kt.mma_shared is asynchronous too: its wgmma
group stays in flight (waits_mma.py) until a wait naming its accumulator or one of its shared
operands; `wgmma` is then the number of groups issued after the newest one named (exact per
path, the smallest over paths). Another mma accumulating into it may read its accumulator
(the hardware orders them) and carrying it through a loop or branch is no use; any other read
gets a wait the pass inserts right before it (`wgmma.wait_group` with the derived count).
A copy or shared store into a tile an in-flight wgmma reads is refused at its line, as is one
in a kernel of several warpgroups with no barrier between the wait and it (the wait completes
only this warpgroup's wgmmas). Elsewhere the MMA completes when it returns.

The analysis keeps, per path, the queue of asynchronous ops in flight in issue order. A tile
is named by SSA values; names follow the tile through loop-carried values and branch results.
A tile picked from a list on the device (kt.lds_select, `bufs[i]`) may be any tile of the list:
an access through it is an access to each of them, and a wait naming it or any of them
completes what was issued into any of them (`may_alias`: conservative, never unsafe).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from ..errors import KernelError
from ..ir import ops as kt
from ..ir.ops import constant_int
from ..ir.query import error_at, kernel_func, warps
from ..targets.base import Target
from .common import defined_inside, describe_type, line_of, op_words, target_of
from . import waits_mma

COUNTERS = ("vm", "lds", "wgmma")   # global→shared copies, shared→register loads, wgmma groups
CARRIERS = frozenset([scf.ForOp, scf.WhileOp, scf.YieldOp, scf.ConditionOp])  # pass values on
TERMINATORS = frozenset([scf.YieldOp, scf.ConditionOp])
MAX_ROUNDS = 64            # loop fixpoint rounds before the loads are declared piling up


@dataclass(frozen=True)
class InFlight:
    """One asynchronous op not yet known complete."""
    counter: str                             # "vm", "lds" or "wgmma"; "acc": a wgmma
                                             # completed unbound (waits_mma.unbound)
    op: Operation                            # the kt.copy_async, kt.lds_load or kt.mma_shared
    names: frozenset[SSAValue]               # values naming the tile it writes
    reads: frozenset[SSAValue] = frozenset()  # lds, wgmma: values naming the shared tiles read
    barrier: Operation | None = None         # vm: the first barrier it was in flight at
    completed_by: Operation | None = None    # lds: a wait that completed it without naming
                                             # it, so its registers are not bound there;
                                             # wgmma: the wait that completed it, no barrier
                                             # since (other warpgroups may still read)

    # the entries change by these copies (dataclasses.replace is several times slower)
    def renamed(self, names: frozenset[SSAValue], reads: frozenset[SSAValue]) -> InFlight:
        return InFlight(self.counter, self.op, names, reads, self.barrier, self.completed_by)

    def at_barrier(self, barrier: Operation) -> InFlight:
        return InFlight(self.counter, self.op, self.names, self.reads, barrier,
                        self.completed_by)

    def completed(self, wait: Operation) -> InFlight:
        return InFlight(self.counter, self.op, self.names, self.reads, self.barrier, wait)


Queue = tuple[InFlight, ...]
Paths = frozenset[Queue]


class Waits(ModulePass):
    name = "waits"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = target_of(op)
        fn = kernel_func(op)
        if waits_mma.has_async_mma(fn, target):   # first place the accumulators' waits
            planner = InFlightAnalysis(target, warps(op), plan=True)
            planner.block(fn.body.block, frozenset([()]))
            waits_mma.insert_waits(planner.planned)
        analysis = InFlightAnalysis(target, warps(op))
        analysis.block(fn.body.block, frozenset([()]))
        for wait in analysis.waits:
            set_counts(wait, analysis.counts, target)
            set_arrivals(wait, analysis.completes)


def set_arrivals(wait: kt.WaitForOp, completes: dict[Operation, set[int]]) -> None:
    slots = sorted(completes.get(wait, ()))
    if not slots:
        wait.properties.pop("arrivals", None)
        return
    wait.properties["arrivals"] = ArrayAttr([IntegerAttr(s, i64) for s in slots])


def is_tensor_copy(e: InFlight) -> bool:
    """A TMA copy: completes on its tile's mbarrier, not on the "vm" counter."""
    return e.op.properties.get("map") is not None


def set_counts(wait: kt.WaitForOp, counts: dict[tuple[Operation, str], int],
               target: Target) -> None:
    for name in COUNTERS:
        counter = target.wait_counter(name)
        count = counts.get((wait, name))
        if counter is None or count is None:
            wait.properties.pop(name, None)
        else:
            wait.properties[name] = IntegerAttr(min(count, counter.max_count), i64)


class InFlightAnalysis:
    """Walks the kernel in program order over a set of paths (one queue each), raising the
    first unsafe use and recording, per wait and counter, the smallest count over paths.
    Every block is analysed at least once (the paths reaching it are never none), so `waits`
    ends holding every wait of the kernel.

    Ops are told apart by their exact class through tables: the kt and scf ops are not
    subclassed, and `isinstance` against xDSL's abstract op classes is most of a walk's time."""

    def __init__(self, target: Target, n_warps: int = 4, plan: bool = False):
        self.target = target
        self.async_mma = target.wait_counter("wgmma") is not None
        self.warpgroups = n_warps > 4        # a wait completes this warpgroup's wgmmas only
        self.plan = plan                     # place accumulator waits instead of refusing
        self.planned: dict[Operation, list[SSAValue]] = {}   # op → accumulators it reads
        self.counts: dict[tuple[Operation, str], int] = {}
        self.completes: dict[Operation, set[int]] = {}   # wait → arrival slots of the copies
                                                         # it completes on some path
        self.waits: dict[Operation, None] = {}           # every kt.wait_for, in program order
        self.structured = {scf.ForOp: self.for_loop, scf.IfOp: self.branch,
                           scf.WhileOp: self.while_loop}
        self.steps: dict[type, Callable[[Operation, Queue], Queue]] = {
            kt.CopyAsyncOp: self.copy, kt.LdsLoadOp: self.lds_load, kt.WaitForOp: self.wait,
            kt.BarrierOp: self.barrier, kt.LdsStoreOp: self.lds_store,
            kt.MmaSharedOp: self.mma_shared, func.ReturnOp: self.kernel_end}

    def block(self, block: Block, paths: Paths) -> Paths:
        for op in block.ops:
            paths = self.op(op, paths)
        return paths

    def op(self, op: Operation, paths: Paths) -> Paths:
        kind = type(op)
        if kind in CARRIERS:
            for queue in paths:  # carrying a value copies its registers: a use
                check_uses_waited(op, carried_values(op), queue)
            if kind in TERMINATORS:
                return paths  # the enclosing op passes their values on
        structured = self.structured.get(kind)
        if structured is not None:
            return structured(op, paths)
        step = self.steps.get(kind, self.use)
        return frozenset([step(op, queue) for queue in paths])

    # ---- one op on one path --------------------------------------------------------------

    def use(self, op: Operation, queue: Queue, values: Iterable[SSAValue] | None = None) -> Queue:
        """Any other op: reads its operands (a copy, a shared load, a wait and a barrier read
        no registers a shared load writes or an mma accumulates into)."""
        values = list(op.operands if values is None else values)
        check_uses_waited(op, values, queue)
        hits = waits_mma.accumulators_read(values, queue)
        unbound = waits_mma.unbound_read(values, queue) if self.plan else []
        if not hits and not unbound:
            return queue
        if not self.plan:
            raise waits_mma.read_in_flight(op, hits[0], queue)
        reads = hits + [v for v in unbound if v not in hits]
        self.planned.setdefault(op, []).extend(v for v in reads if v not in self.planned[op])
        return waits_mma.bound(self.complete(queue, "wgmma", set(hits), op), set(reads))

    def complete(self, queue: Queue, counter: str, named: set[SSAValue], wait: Operation) -> Queue:
        """The queue after a wait that names `named`: for `counter`, the newest live entry
        naming one of them completes, with every older one."""
        live = [i for i, e in enumerate(queue) if e.counter == counter and not e.completed_by]
        hits = [i for i in live if entry_names(queue[i]) & named]
        newest = hits[-1] if hits else -1
        if hits and wait in self.waits:
            self.record(wait, counter, queue, live, newest)
        settled = (settle(e, i, counter, newest, named, wait, self.warpgroups)
                   for i, e in enumerate(queue))
        unbound = waits_mma.unbound((queue[i] for i in live if i <= newest), named) \
            if counter == "wgmma" else []
        return waits_mma.dedupe(tuple(e for e in settled if e is not None) + tuple(unbound))

    def copy(self, op: kt.CopyAsyncOp, queue: Queue) -> Queue:
        check_copy_target(op, queue)
        waits_mma.check_not_read_by_mma(op, op.dst, queue)
        return queue + (InFlight("vm", op, may_alias(op.dst)),)

    def lds_load(self, op: kt.LdsLoadOp, queue: Queue) -> Queue:
        check_not_filling(op, op.src, queue, self.target)
        return queue + (InFlight("lds", op, frozenset([op.result]), may_alias(op.src)),)

    def barrier(self, op: kt.BarrierOp, queue: Queue) -> Queue:
        """Copies in flight are marked; completed wgmmas are done in every warpgroup now."""
        return tuple(e.at_barrier(op) if e.counter == "vm" and e.barrier is None else e
                     for e in queue if not (e.counter == "wgmma" and e.completed_by))

    def lds_store(self, op: kt.LdsStoreOp, queue: Queue) -> Queue:
        check_not_filling(op, op.dst, queue, self.target)
        waits_mma.check_not_read_by_mma(op, op.dst, queue)
        return self.use(op, queue)

    def mma_shared(self, op: kt.MmaSharedOp, queue: Queue) -> Queue:
        """Reads its shared operands and a (an accumulator in flight may be its acc: the
        hardware orders wgmmas into the same registers); on sm_90a it stays in flight."""
        check_not_filling(op, op.b, queue, self.target)
        if op.a_shared:
            check_not_filling(op, op.a, queue, self.target)
        queue = self.use(op, queue, [op.a, op.b])
        check_uses_waited(op, [op.acc], queue)
        if not self.async_mma:
            return queue
        reads = may_alias(op.b) | (may_alias(op.a) if op.a_shared else frozenset())
        return waits_mma.issue(queue, InFlight("wgmma", op, frozenset([op.result]), reads))

    def kernel_end(self, op: func.ReturnOp, queue: Queue) -> Queue:
        check_nothing_in_flight(queue)
        return self.use(op, queue)

    def wait(self, op: kt.WaitForOp, queue: Queue) -> Queue:
        """The newest in-flight op of each kind writing a named tile completes, with every
        older one of its kind; the named ones are bound, the others only complete."""
        self.waits[op] = None
        named = set().union(*(may_alias(t) for t in op.tiles))
        for counter in COUNTERS:
            queue = self.complete(queue, counter, named, op)
        return waits_mma.bound(queue, named)

    def record(self, op: kt.WaitForOp, counter: str, queue: Queue, live: list[int],
               newest: int) -> None:
        """On this path the wait completes the live ops of `counter` up to `newest`: the
        counter's count (over the ops that complete on it) and the TMA copies' slots."""
        done = [queue[i] for i in live if i <= newest]
        by_counter = [e for e in done if not is_tensor_copy(e)]
        if by_counter:
            count = sum(1 for i in live if i > newest and not is_tensor_copy(queue[i]))
            key = (op, counter)
            self.counts[key] = min(self.counts.get(key, count), count)
        slots = {e.op.prop_int("arrival") for e in done if is_tensor_copy(e)} - {None}
        if slots:
            self.completes.setdefault(op, set()).update(slots)

    # ---- structured control flow ---------------------------------------------------------

    def for_loop(self, op: scf.ForOp, paths: Paths) -> Paths:
        body = op.body.block
        args, yielded = body.args[1:], body.last_op.operands
        head = rename(paths, zip(op.iter_args, args), keep_all)
        outs = self.fixpoint(op, head, lambda p: self.block(body, p),
                             lambda out: rename(out, zip(yielded, args), outside(op)))
        exits = rename(outs, zip(yielded, op.results), outside(op))
        if may_skip(op):
            exits |= rename(paths, zip(op.iter_args, op.results), keep_all)
        return exits

    def while_loop(self, op: scf.WhileOp, paths: Paths) -> Paths:
        before, after = op.before_region.block, op.after_region.block
        condition, yielded = before.last_op, after.last_op
        head = rename(paths, zip(op.arguments, before.args), keep_all)
        exits: set[Queue] = set()

        def iteration(p: Paths) -> Paths:
            checked = self.block(before, p)
            exits.update(rename(checked, zip(condition.args, op.results), outside(op)))
            return self.block(after, rename(checked, zip(condition.args, after.args),
                                            outside(op)))

        self.fixpoint(op, head, iteration,
                      lambda out: rename(out, zip(yielded.operands, before.args), outside(op)))
        return frozenset(exits)

    def branch(self, op: scf.IfOp, paths: Paths) -> Paths:
        exits: set[Queue] = set()
        for region in (op.true_region, op.false_region):
            if not region.blocks:
                exits |= paths
                continue
            out = self.block(region.block, paths)
            exits |= rename(out, zip(region.block.last_op.operands, op.results), outside(op))
        return frozenset(exits)

    def fixpoint(self, op: Operation, head: Paths, iteration: Callable[[Paths], Paths],
                 back_edge: Callable[[Paths], Paths]) -> Paths:
        """Runs `iteration` on every path that reaches the loop head, until no new one does;
        returns the paths at the end of an iteration."""
        seen: set[Queue] = set()
        outs: set[Queue] = set()
        frontier = head
        for _ in range(MAX_ROUNDS):
            new = frontier - seen
            if not new:
                break
            seen |= new
            out = iteration(frozenset(new))
            outs |= out
            frontier = back_edge(out)
        else:
            raise piling_up(op)
        return frozenset(outs)


def entry_names(e: InFlight) -> frozenset[SSAValue]:
    """What a wait may name to complete `e`: the tile it writes; for a wgmma also the shared
    tiles it reads."""
    return e.names | e.reads if e.counter == "wgmma" else e.names


def settle(e: InFlight, index: int, counter: str, newest: int, named: set[SSAValue],
           wait: Operation, warpgroups: bool = False) -> InFlight | None:
    """One entry after a wait that completes `counter` up to `newest`: None once it is done
    and nothing is left to check. A shared load completed without being named stays, marked,
    because the wait binds only the registers it names (trap 1); a completed wgmma stays,
    marked, until a barrier when other warpgroups may still be reading its operands."""
    if e.counter != counter:
        return e
    if counter == "wgmma":
        if index > newest or e.completed_by:
            return e
        return e.completed(wait) if warpgroups else None
    if e.names & named:
        return None
    if index > newest or e.completed_by:
        return e
    return e.completed(wait) if counter == "lds" else None


def may_alias(tile: SSAValue) -> frozenset[SSAValue]:
    """The values that may name the memory `tile` names: itself and, for a tile picked from a
    list on the device, every tile of the list (and what those may name in turn)."""
    owner = tile.owner
    if type(owner) is not kt.LdsSelectOp:
        return frozenset([tile])
    return frozenset([tile]).union(*(may_alias(t) for t in owner.tiles))


def carried_values(op: Operation) -> list[SSAValue]:
    """The values a structured op passes on into a region or out of it."""
    if isinstance(op, scf.ForOp):
        return list(op.iter_args)
    if isinstance(op, scf.WhileOp):
        return list(op.arguments)
    if isinstance(op, scf.ConditionOp):
        return list(op.args)
    return list(op.operands)


# ---- renaming tiles across control flow ----------------------------------------------------

def keep_all(value: SSAValue) -> bool:
    return True


def outside(op: Operation) -> Callable[[SSAValue], bool]:
    """Names still visible after leaving `op`'s regions."""
    return lambda value: not defined_inside(value, op)


def rename(paths: Iterable[Queue], pairs: Iterable[tuple[SSAValue, SSAValue]],
           keep: Callable[[SSAValue], bool]) -> Paths:
    """The paths as seen through a control-flow edge that passes `src` on as `dst`."""
    pairs = list(pairs)

    def names(old: frozenset[SSAValue]) -> frozenset[SSAValue]:
        passed = {dst for src, dst in pairs if src in old}
        return frozenset(passed | {v for v in old if keep(v)})

    def moved(q: Queue) -> Queue:
        out = (e.renamed(names(e.names), names(e.reads)) for e in q)
        return tuple(e for e in out if e.names or e.counter == "wgmma"
                     or not (e.completed_by or e.counter == "acc"))

    return frozenset(moved(q) for q in paths)


def may_skip(op: scf.ForOp) -> bool:
    """Whether the loop may run zero times (bounds not constant, or an empty range)."""
    lb, ub = (constant_int(v) for v in (op.lb, op.ub))
    return lb is None or ub is None or ub <= lb


# ---- checks --------------------------------------------------------------------------------

def check_uses_waited(op: Operation, values: Iterable[SSAValue], queue: Queue) -> None:
    """Trap 1: registers read (or carried, which copies them) before a wait names them."""
    loads = [e for e in queue if e.counter == "lds"]
    if not loads:   # most ops on most paths: nothing to look at
        return
    for value in values:
        for e in loads:
            if value in e.names:
                raise use_before_wait(op, value, e)


def use_before_wait(op: Operation, value: SSAValue, e: InFlight) -> KernelError:
    what, verb = use_words(op)
    tile = f"the {describe_type(value.type)} loaded at {line_of(e.op)}"
    if e.completed_by is not None:
        return error_at(
            op, f"{verb} {tile}, which no wait names: the wait at {line_of(e.completed_by)} "
                f"completes it, but a wait keeps only the tiles it names ahead of their uses",
            hint="name it in that wait: hk.wait_for(..., tile)", what=what)
    hint = ("call hk.wait_for(tile) between the shared load and this use: a wait carries no "
            "register dependence, so nothing else orders them")
    if op.name.startswith("scf."):
        hint = ("carrying a tile into or out of a loop or branch copies its registers: call "
                "hk.wait_for(tile) before it is carried")
    return error_at(op, f"{verb} {tile} before its wait", hint=hint, what=what)


def use_words(op: Operation) -> tuple[str, str]:
    """(the op, "<op> uses") in the author's words; a carry names its loop or branch."""
    if not op.name.startswith("scf."):
        return op_words(op), f"{op_words(op)} uses"
    construct = op if isinstance(op, (scf.ForOp, scf.WhileOp)) else op.parent_op()
    what = "branch" if isinstance(construct, scf.IfOp) else "loop"
    return what, f"the {what} at {line_of(construct)} carries"


def check_not_filling(op: Operation, shared: SSAValue, queue: Queue, target: Target) -> None:
    """A shared load from, or store into, a shared tile whose copy is still in flight."""
    for e in queue:
        if e.counter != "vm" or not may_alias(shared) & e.names:
            continue
        reads = isinstance(op, (kt.LdsLoadOp, kt.MmaSharedOp))
        if e.barrier is not None and reads:
            raise barrier_error(op, e, target)
        verb = "reads" if reads else "writes"
        raise error_at(
            op, f"{op_words(op)} {verb} the shared tile that the group load at {line_of(e.op)} "
                f"is still filling",
            hint="call hk.wait_for(tile) first (then hk.barrier() if other warps read what "
                 "this one copied)", what=op_words(op))


def barrier_error(op: Operation, e: InFlight, target: Target) -> KernelError:
    """Trap 4: the copy is in flight at a barrier, and its tile is then read unwaited."""
    counter = target.wait_counter("vm")
    isa = counter.isa_name if counter else "its own completion counter"
    if is_tensor_copy(e):
        isa = "its tile's mbarrier (a TMA copy)"
    return error_at(
        op, f"the copy into the shared tile at {line_of(e.op)} is still in flight at the "
            f"barrier at {line_of(e.barrier)}: on {target.name} it completes on {isa}, which a "
            f"barrier does not wait for; wait_for(tile) before the barrier",
        hint="a barrier orders the warps, not the asynchronous copy: hk.wait_for(tile), then "
             "hk.barrier(), then read", what=op_words(op))


def check_copy_target(op: kt.CopyAsyncOp, queue: Queue) -> None:
    """No copy into a shared tile still being filled or read asynchronously."""
    dst = may_alias(op.dst)
    for e in queue:
        if e.counter == "vm" and dst & e.names:
            raise error_at(
                op, f"group load into the shared tile that the group load at {line_of(e.op)} "
                    f"is still filling",
                hint="call hk.wait_for(tile) before loading into it again, or load into "
                     "another buffer", what="group load")
        if e.counter == "lds" and dst & e.reads and not e.completed_by:
            raise error_at(
                op, f"group load into the shared tile that the shared load at {line_of(e.op)} "
                    f"is still reading",
                hint="call hk.wait_for(register tile) on that shared load's result before "
                     "overwriting its source", what="group load")


def check_nothing_in_flight(queue: Queue) -> None:
    for e in queue:
        if e.counter == "vm":
            raise error_at(
                e.op, "this group load is still in flight when the kernel ends: nothing waits "
                      "for its data",
                hint="call hk.wait_for(tile) on its shared tile before the kernel returns, or "
                     "drop the load", what="group load")


def piling_up(op: Operation) -> KernelError:
    return error_at(
        op, "asynchronous loads issued in this loop are never all waited for: more stay in "
            "flight with every iteration",
        hint="hk.wait_for each tile the loop loads, inside the loop", what="loop")
