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
the target's `register_overhead`. sm_90a's model is fitted to ptxas (tests/tier1/
test_register_estimates.py); a target with a `multiprocessor` also warns, once per kernel,
when the estimate leaves fewer resident warps than `occupancy_warn_below`.
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
from ..ir.types import RegTileType, RegVecType
from ..targets.base import Target
from .common import defined_inside, describe_type, element_bytes, elements, line_of, op_words
from .common import target_of

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
        estimate = RegisterEstimate(target)
        estimate.block(fn.body.block, set(), frozenset())
        peak = estimate.peak
        fn.attributes["kt.vgpr_estimate"] = IntegerAttr(registers(peak.bytes), i64)
        check_registers(peak, target, estimate)
        warn_occupancy(fn, peak, registers(peak.bytes), warps(op), target)
        shared = fn.attributes.get("kt.lds_bytes")
        if shared is not None:
            warn_shared(fn, shared.value.data, target)  # type: ignore[attr-defined]


def registers(nbytes: int) -> int:
    return -(-nbytes // REGISTER_BYTES)


# ---- liveness over structured control flow ---------------------------------------------------

class RegisterEstimate:
    def __init__(self, target: Target):
        self.target = target
        self.peak = Peak()
        self._bytes: dict[SSAValue, int] = {}   # a value's size is asked at every point it lives

    def value_bytes(self, value: SSAValue) -> int:
        found = self._bytes.get(value)
        if found is None:
            found = self._bytes[value] = self._value_bytes(value)
        return found

    def _value_bytes(self, value: SSAValue) -> int:
        ty = value.type
        per_lane = elements(ty) * element_bytes(ty) / self.target.wave_size
        if isinstance(ty, RegTileType):
            per_lane *= replication(ty.fragment.data, self.target)
        elif isinstance(ty, RegVecType):
            per_lane *= self.target.vector_replication[ty.axis.data == "col"]
        return registers(math.ceil(per_lane)) * REGISTER_BYTES

    def block(self, block: Block, live_out: set[SSAValue], outer: frozenset[SSAValue]) -> set:
        """Live register values at the block's start, given those live at its end and those
        live across the enclosing ops (`outer`); records the peak inside."""
        live = set(live_out)
        for op in reversed(list(block.ops)):
            results = set(in_registers(op.results))
            free = set(in_registers(free_values(op))) if op.regions else set()
            before = (live - results) | set(in_registers(op.operands)) | free
            across = frozenset(live - results)
            for region in op.regions:
                for inner in region.blocks:
                    inner_out = free if isinstance(op, (scf.ForOp, scf.WhileOp)) else set()
                    self.block(inner, inner_out, outer | across)
            self.consider(op, outer | before)
            self.consider(op, outer | live | results)
            live = before
        return live

    def consider(self, op: Operation, live: frozenset[SSAValue]) -> None:
        total = (self.target.register_overhead * REGISTER_BYTES + self.in_flight_bytes(op)
                 + sum(self.value_bytes(v) for v in live))
        if total > self.peak.bytes:
            self.peak = Peak(total, op, frozenset(live))


    def in_flight_bytes(self, op: Operation) -> int:
        """What a register load from global holds besides its destination while it runs
        (the target's load_registers_per_element per element per lane)."""
        if not isinstance(op, (kt.LoadOp, kt.GatherOp)) or not self.target.load_registers_per_element:
            return 0
        per_lane = elements(op.results[0].type) / self.target.wave_size
        return math.ceil(self.target.load_registers_per_element * per_lane) * REGISTER_BYTES


def in_registers(values) -> list[SSAValue]:
    return [v for v in values if isinstance(v.type, (RegTileType, RegVecType))]


def free_values(op: Operation) -> list[SSAValue]:
    """Values used inside `op`'s regions but defined outside it."""
    seen: dict[SSAValue, None] = {}
    for inner in op.walk():
        if inner is op:
            continue
        for operand in inner.operands:
            if operand not in seen and not defined_inside(operand, op):
                seen[operand] = None
    return list(seen)


def replication(fragment: str, target: Target) -> int:
    """How many lanes hold each element of an MMA fragment (1 outside MMA fragments)."""
    found = next((f for f in target.fragments if f.operand == fragment), None)
    return found.replicated if found else 1


# ---- reports -------------------------------------------------------------------------------

def check_registers(peak: Peak, target: Target, estimate: RegisterEstimate) -> None:
    limit = target.vgprs_per_lane * REGISTER_BYTES
    if peak.op is None or peak.bytes <= REGISTER_WARN * limit:
        return
    used = registers(peak.bytes)
    live = live_listing(peak, estimate)
    if peak.bytes > limit:
        raise error_at(
            peak.op,
            f"about {used} registers per lane are live at this {op_words(peak.op)}, over the "
            f"{target.vgprs_per_lane} a lane can address on {target.name}: a spill is certain, "
            f"and a spill reorders memory traffic around the waits (live here: {live})",
            hint="use smaller tiles, or more warps each holding a smaller share of the work",
            what=op_words(peak.op))
    share = round(100 * peak.bytes / limit)
    warn_at(peak.op, f"about {used} of the {target.vgprs_per_lane} registers per lane on "
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
    ranked = sorted(peak.live, key=estimate.value_bytes, reverse=True)
    return ", ".join(f"the {describe_type(v.type)} from {where(v)} "
                     f"({registers(estimate.value_bytes(v))} registers)" for v in ranked)


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
