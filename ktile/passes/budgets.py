"""budgets: the kernel fits the target's registers, with warnings when it nearly does not.

Invariant established: at no program point do the live register tiles and vectors need more
bytes per lane than the target's vector registers hold (a spill is certain beyond that, and a
spill reorders scratch traffic against the hand-placed waits: trap 2). The kernel function
carries `kt.vgpr_estimate`, the peak in 4-byte registers per lane. Warnings (returned by
`run_pipeline`, never stored in the IR): registers above 75% of the budget, shared memory
(`kt.lds_bytes`, from lds-alloc) above 90% of the target's.

The estimate, the target table's register model: a tile takes rows*cols*element bytes / wave
size per lane, times the lanes that replicate an MMA operand fragment (RDNA3 WMMA holds A and B
twice), rounded up to whole registers (fp32 accumulators count like any other tile); a vector
likewise, times the lanes holding each of its elements (`vector_replication`); a register load
from global adds what it holds while in flight (`load_registers_per_element`), and every point
the target's `register_overhead`. Liveness is the compiler's (budgets_compiler.py): a pure op
computed twice is one value held between its uses, and an elementwise result read only by
another elementwise op or a reduction is never held whole. sm_90a's model is fitted to ptxas
(tests/tier1/test_register_estimates.py; flat-tile kernels: 0.78-1.25x ptxas's count,
test_flat_register_estimates.py: an estimate, not a bound); a target with a `multiprocessor` also warns, once per kernel,
when the estimate leaves fewer resident warps than `occupancy_warn_below`. A kernel with
warpgroup roles (`kt.roles`, a warp-specialised pipeline) is checked against the most
registers a role raises its limit to (setmaxnreg) and is not warned of occupancy: it runs one
block a multiprocessor by design.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from ..errors import KernelWarning
from ..ir import ops as kt
from ..ir.query import error_at, kernel_func, loc_of, warps
from ..ir.query import roles as query_roles
from ..ir.types import RegTileType, RegVecType
from ..targets.base import Target
from .common import describe_type, element_bytes, elements, line_of, op_words
from .common import target_of
from .budgets_compiler import CompilerView

REGISTER_BYTES = 4
REGISTER_WARN = 0.75   # above this share of the registers: warn, a spill is near
SHARED_WARN = 0.90     # above this share of shared memory: warn


@dataclass
class Peak:
    """The program point with the most live register bytes per lane."""
    bytes: int = 0
    op: Operation | None = None
    live: frozenset[SSAValue] = field(default_factory=frozenset)


class Budgets(ModulePass):
    name = "budgets"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = target_of(op)
        fn = kernel_func(op)
        estimate = RegisterEstimate(target, CompilerView(fn))
        estimate.block(fn.body.block, set(), frozenset())
        peak = estimate.peak
        fn.attributes["kt.vgpr_estimate"] = IntegerAttr(registers(peak.bytes), i64)
        roles = query_roles(fn)
        check_registers(peak, target, estimate, role_limit(roles))
        if not roles:   # warpgroup roles: one block a multiprocessor by design
            warn_occupancy(fn, peak, registers(peak.bytes), warps(op), target)
        shared = fn.attributes.get("kt.lds_bytes")
        if shared is not None:
            warn_shared(fn, shared.value.data, target)  # type: ignore[attr-defined]


def registers(nbytes: int) -> int:
    return -(-nbytes // REGISTER_BYTES)


# ---- liveness over structured control flow ---------------------------------------------------

class RegisterEstimate:
    """Liveness of register values over the structured control flow, walked backwards once;
    `peak` is the first point (in that walk) with the most live register bytes per lane.

    The live sets hold the values' ids: an SSA value hashes in Python, an id in C, and the
    walk takes a union or difference at every op."""

    def __init__(self, target: Target, view: CompilerView):
        self.target = target
        self.view = view
        self.peak = Peak()
        self._values: dict[int, SSAValue] = {}   # id -> register value, met in the walk
        self._bytes: dict[int, int] = {}         # id -> its bytes per lane
        self._overhead = target.register_overhead * REGISTER_BYTES

    def value_bytes(self, value: SSAValue) -> int:
        return self._bytes.get(id(value)) or self._value_bytes(value)

    def _value_bytes(self, value: SSAValue) -> int:
        ty = value.type
        per_lane = elements(ty) * element_bytes(ty) / self.target.wave_size
        if isinstance(ty, RegTileType):
            per_lane *= replication(ty.fragment.data, self.target)
        elif isinstance(ty, RegVecType):
            per_lane *= self.target.vector_replication[ty.axis.data == "col"]
        return registers(math.ceil(per_lane)) * REGISTER_BYTES

    def in_registers(self, values) -> set[int]:
        """The ids of the values held in registers (tiles and vectors) among `values`."""
        found = set()
        for value in values:
            if type(value.type) in REGISTER_TYPES:
                key = id(value)
                found.add(key)
                if key not in self._values:
                    self._values[key] = value
                    self._bytes[key] = self._value_bytes(value)
        return found

    def block(self, block: Block, live_out: set[int], outer: frozenset[int]) -> set[int]:
        """Live register values at the block's start, given those live at its end and those
        live across the enclosing ops (`outer`); records the peak inside."""
        live = set(live_out)
        op = block.last_op
        while op is not None:
            results = self.in_registers(self.view.results(op))
            operands = self.in_registers(self.view.operands(op))
            if not (results or operands or op.regions) and op is not block.last_op:
                # index arithmetic: the live set is the one the op after it was considered
                # with, and only a greater total moves the peak
                op = op.prev_op
                continue
            before = (live - results) | operands
            if op.regions:
                free = self.in_registers(free_values(op, self.view))
                before |= free
                self.regions(op, free, outer | (live - results))
            self.consider(op, outer | before)
            self.consider(op, outer | live | results)
            live = before
            op = op.prev_op
        return live

    def regions(self, op: Operation, free: set[int], outer: frozenset[int]) -> None:
        """Each block of `op`'s regions; a loop's body ends with every value the loop reads
        live (the next iteration reads them again)."""
        inner_out = free if type(op) in LOOPS else set()
        for region in op.regions:
            for inner in region.blocks:
                self.block(inner, inner_out, outer)

    def consider(self, op: Operation, live: frozenset[int]) -> None:
        total = self._overhead + sum(map(self._bytes.__getitem__, live))
        if type(op) in GLOBAL_LOADS:
            total += self.in_flight_bytes(op)
        if total > self.peak.bytes:
            self.peak = Peak(total, op, frozenset(map(self._values.__getitem__, live)))

    def in_flight_bytes(self, op: Operation) -> int:
        """What a register load from global holds besides its destination while it runs
        (the target's load_registers_per_element per element per lane)."""
        if type(op) not in GLOBAL_LOADS or not self.target.load_registers_per_element:
            return 0
        per_lane = elements(op.results[0].type) / self.target.wave_size
        return math.ceil(self.target.load_registers_per_element * per_lane) * REGISTER_BYTES


LOOPS = frozenset((scf.ForOp, scf.WhileOp))
GLOBAL_LOADS = frozenset((kt.LoadOp, kt.GatherOp))   # register loads from global
REGISTER_TYPES = frozenset((RegTileType, RegVecType))   # exact classes: never subclassed


def free_values(op: Operation, view: CompilerView) -> list[SSAValue]:
    """Values held in registers inside `op`'s regions but made outside it (as the compiler
    sees them: `view`)."""
    defined: set[SSAValue] = set()
    used: dict[SSAValue, None] = {}
    for inner in op.walk():
        if inner is not op:
            used.update(dict.fromkeys(view.operands(inner)))
            defined.update(view.results(inner))
        for region in inner.regions:
            for block in region.blocks:
                defined.update(block.args)
    return [v for v in used if v not in defined]


def replication(fragment: str, target: Target) -> int:
    """How many lanes hold each element of an MMA fragment (1 outside MMA fragments)."""
    found = next((f for f in target.fragments if f.operand == fragment), None)
    return found.replicated if found else 1


# ---- reports -------------------------------------------------------------------------------

def role_limit(roles: list[tuple[int, int]]) -> int | None:
    """The registers a lane may hold in a kernel with warpgroup roles: the most any role
    raises its limit to (setmaxnreg), None without roles or limits. The estimate is the
    peak over the whole kernel, which is the consumers' (the producer holds no tiles)."""
    limits = [registers for _, registers in roles if registers]
    return max(limits) if limits else None


def check_registers(peak: Peak, target: Target, estimate: RegisterEstimate,
                    raised: int | None = None) -> None:
    lanes = raised or target.vgprs_per_lane
    limit = lanes * REGISTER_BYTES
    if peak.op is None or peak.bytes <= REGISTER_WARN * limit:
        return
    used = registers(peak.bytes)
    live = live_listing(peak, estimate)
    if peak.bytes > limit:
        raise error_at(
            peak.op,
            f"about {used} registers per lane are live at this {op_words(peak.op)}, over the "
            f"{lanes} a lane {'of its role may hold (setmaxnreg)' if raised else 'can address'} "
            f"on {target.name}: a spill is certain, "
            f"and a spill reorders memory traffic around the waits (live here: {live})",
            hint="use smaller tiles, or more warps each holding a smaller share of the work",
            what=op_words(peak.op))
    share = round(100 * peak.bytes / limit)
    warn_at(peak.op, f"about {used} of the {lanes} registers per lane on "
                     f"{target.name} ({share}%) are live at this {op_words(peak.op)}: close to "
                     f"spilling (live here: {live})")


def warn_occupancy(fn: Operation, peak: Peak, used: int, n_warps: int, target: Target) -> None:
    """Warns, once per kernel, when the estimate leaves fewer resident warps per
    multiprocessor than the target's `occupancy_warn_below` share."""
    sm = target.multiprocessor
    if sm is None or not target.occupancy_warn_below:
        return
    resident = sm.register_limited_warps(used, n_warps)
    share = resident / sm.max_warps
    if share >= target.occupancy_warn_below or not first_time(fn, "occupancy"):
        return
    warn_at(peak.op or fn,
            f"about {used} registers per thread are live at this {op_words(peak.op or fn)} "
            f"(estimated): at most {resident} of the {sm.max_warps} warps of a {target.name} "
            f"multiprocessor fit ({round(100 * share)}% occupancy), too few to hide memory "
            f"latency")


# kernels (their definition's file and line) already warned of, per kind: a kernel traced for
# several targets or constants is warned once per process, not at every trace
_WARNED: set[tuple] = set()


def first_time(fn: Operation, kind: str) -> bool:
    key = (str(loc_of(fn)), kernel_name_of(fn), kind)
    if key in _WARNED:
        return False
    _WARNED.add(key)
    return True


def live_listing(peak: Peak, estimate: RegisterEstimate) -> str:
    """What the peak's registers hold: the live values, largest first (in source order among
    equals), then what the target's model adds (a global load's registers in flight, the fixed
    overhead), so that the parts add up to the count the message gives."""
    ranked = sorted(peak.live, key=lambda v: (-estimate.value_bytes(v), _line_number(v)))
    parts = [f"the {describe_type(v.type)} from {where(v)} "
             f"({registers(estimate.value_bytes(v))} registers)" for v in ranked]
    in_flight = registers(estimate.in_flight_bytes(peak.op))
    if in_flight:
        parts.append(f"{in_flight} registers this {op_words(peak.op)} holds while in flight")
    if estimate.target.register_overhead:
        parts.append(f"about {estimate.target.register_overhead} for indices and addresses")
    return ", ".join(parts)


def _line_number(value: SSAValue) -> int:
    digits = "".join(c for c in where(value).rsplit(" ", 1)[-1] if c.isdigit())
    return int(digits) if digits else 0


def where(value: SSAValue) -> str:
    owner = value.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    return line_of(op) if op is not None else "an unknown line"


def warn_shared(fn: Operation, used: int, target: Target) -> None:
    if used <= SHARED_WARN * target.lds_bytes:
        return
    share = round(100 * used / target.lds_bytes)
    warn_at(fn, f"the shared tiles take {used} of the {target.lds_bytes} bytes of shared memory "
                f"per block on {target.name} ({share}%)")


def warn_at(op: Operation, message: str) -> None:
    """A warning in the kernel error's form: file:line: warning: in kernel 'k': message."""
    loc = loc_of(op)
    where_ = f"{loc}: " if loc else ""
    kernel = kernel_name_of(op)
    who = f"in kernel '{kernel}': " if kernel else ""
    warnings.warn(KernelWarning(f"{where_}warning: {who}{message}"), stacklevel=2)


def kernel_name_of(op: Operation) -> str | None:
    module = op.get_toplevel_object()
    if not isinstance(module, ModuleOp):
        return None
    return kernel_func(module).sym_name.data
