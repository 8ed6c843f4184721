"""The kt dialect's warp-specialisation ops: warpgroup roles and a pipeline of shared stages.

`hk.pipeline` (ktile/lang/pipeline.py) traces these on a target with warp specialisation
(sm_90a): the block is split into a producer role (warpgroups issuing the stage copies) and a
consumer role (warpgroups issuing MMAs that read the stages). A pipeline of S stages has two
mbarriers per stage: "full" (the stage's copies have landed) and "empty" (every consumer warp
is done reading it). Step k uses stage k % S in round k / S, so the phase a barrier is waited
at follows from k (no per-thread state): full at parity (k / S) & 1, empty at the parity
before it (a fresh barrier counts its previous phase as complete, so round 0 passes).
The author never writes these ops; other targets trace the pipeline as copies, waits and
barriers (every warp plays both roles in turn).
"""
from __future__ import annotations

from xdsl.dialects.builtin import IndexType, IntegerAttr, StringAttr, i1, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def,
                       var_operand_def)

from . import verifiers as check
from .ops import KtOp, LdsSelectOp
from .types import GlobalType, SharedTileType
from .verifiers import IRError

BARRIERS = ("full", "empty")
REGISTER_ACTIONS = ("inc", "dec")
SETMAXNREG_RANGE = (24, 256)   # PTX ISA: setmaxnreg's count, a multiple of 8 in [24, 256]


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


@irdl_op_definition
class PipelineInitOp(KtOp):
    """Declares pipeline `pipeline` of `stages` stages: its 2 × stages mbarriers (lds-alloc
    places them at `offset`), full completing once a step's `copies` stage copies have landed
    (`tma` 1: TMA copies, one arrival each announcing its bytes; 0: cp.async, one arrival per
    producer thread and copy), empty once `readers` consumer warps have released it."""
    name = "kt.pipeline_init"
    pipeline = prop_def(IntegerAttr)
    stages = prop_def(IntegerAttr)
    copies = prop_def(IntegerAttr)
    readers = prop_def(IntegerAttr)
    tma = prop_def(IntegerAttr)
    offset = opt_prop_def(IntegerAttr)

    def __init__(self, pipeline: int, stages: int, copies: int, readers: int, tma: bool):
        super().__init__(properties={"pipeline": _int(pipeline), "stages": _int(stages),
                                     "copies": _int(copies), "readers": _int(readers),
                                     "tma": _int(int(tma))})

    def verify_(self) -> None:
        for name in ("stages", "copies", "readers"):
            if self.prop_int(name) < 1:
                raise IRError(self, f"{name} must be at least 1, got {self.prop_int(name)}")


@irdl_op_definition
class RoleOp(KtOp):
    """Whether this warp plays a role: warps [first_warp, first_warp + warps), whole
    warpgroups. Uniform within a warpgroup, so a role's branch may hold warpgroup MMAs."""
    name = "kt.role"
    role = prop_def(StringAttr)
    first_warp = prop_def(IntegerAttr)
    warps = prop_def(IntegerAttr)
    result = result_def(i1)

    def __init__(self, role: str, first_warp: int, warps: int):
        super().__init__(properties={"role": StringAttr(role), "first_warp": _int(first_warp),
                                     "warps": _int(warps)}, result_types=[i1])

    def verify_(self) -> None:
        first, count = self.prop_int("first_warp"), self.prop_int("warps")
        if first % 4 or count % 4 or count < 4:
            raise IRError(self, f"a role is whole warpgroups: warps [{first}, {first + count})")


@irdl_op_definition
class SetMaxNRegOp(KtOp):
    """`setmaxnreg.{inc,dec}.sync.aligned.u32 registers`: every warp of the warpgroup
    executes it, first thing in its role."""
    name = "kt.setmaxnreg"
    action = prop_def(StringAttr)
    registers = prop_def(IntegerAttr)

    def __init__(self, action: str, registers: int):
        super().__init__(properties={"action": StringAttr(action),
                                     "registers": _int(registers)})

    def verify_(self) -> None:
        check.check_choice(self, "action", self.action.data, REGISTER_ACTIONS)
        count, (low, high) = self.prop_int("registers"), SETMAXNREG_RANGE
        if count % 8 or not low <= count <= high:
            raise IRError(self, f"setmaxnreg takes a multiple of 8 in [{low}, {high}], "
                                f"got {count}")


@irdl_op_definition
class StageWaitOp(KtOp):
    """Wait until stage `step` % stages of pipeline `pipeline` is `barrier`: "full" (its
    copies have landed: a consumer, before reading it) or "empty" (every consumer warp has
    released it: the producer, before refilling it)."""
    name = "kt.stage_wait"
    step = operand_def(IndexType)
    pipeline = prop_def(IntegerAttr)
    stages = prop_def(IntegerAttr)
    barrier = prop_def(StringAttr)

    def __init__(self, step: SSAValue, pipeline: int, stages: int, barrier: str):
        super().__init__(operands=[step], properties={
            "pipeline": _int(pipeline), "stages": _int(stages), "barrier": StringAttr(barrier)})

    def verify_(self) -> None:
        check.check_choice(self, "barrier", self.barrier.data, BARRIERS)


@irdl_op_definition
class StageReleaseOp(KtOp):
    """A consumer warp at the end of step `step`: once the MMAs of step - 1 have completed
    (all but the `keep` newest wgmma groups, the ones this step issued), it arrives on that
    step's "empty" barrier (nothing at step 0)."""
    name = "kt.stage_release"
    step = operand_def(IndexType)
    pipeline = prop_def(IntegerAttr)
    stages = prop_def(IntegerAttr)
    keep = prop_def(IntegerAttr)

    def __init__(self, step: SSAValue, pipeline: int, stages: int, keep: int):
        super().__init__(operands=[step], properties={
            "pipeline": _int(pipeline), "stages": _int(stages), "keep": _int(keep)})


@irdl_op_definition
class ProducerDoneOp(KtOp):
    """The producer after its last step: its own copies have landed (cp.async ones complete,
    and their arrivals happen, before the thread exits; TMA copies need nothing)."""
    name = "kt.producer_done"
    pipeline = prop_def(IntegerAttr)

    def __init__(self, pipeline: int):
        super().__init__(properties={"pipeline": _int(pipeline)})


@irdl_op_definition
class StageCopyOp(KtOp):
    """Global → a stage's shared tile by the producer role, completing on the stage's "full"
    barrier: a TMA copy where tensor-maps gave it `map`, else cp.async by the producer's
    threads, each arriving once its chunks have landed. `dst` is the stage's
    tile, picked from the stages' tiles by `step` % stages (a kt.lds_select). Coordinates as
    kt.copy_async's."""
    name = "kt.stage_copy"
    src = operand_def(GlobalType)
    coords = var_operand_def(IndexType)
    dst = operand_def(SharedTileType)
    step = operand_def(IndexType)
    pipeline = prop_def(IntegerAttr)
    stages = prop_def(IntegerAttr)
    map = opt_prop_def(IntegerAttr)
    unit = opt_prop_def(StringAttr)

    def __init__(self, src: SSAValue, coords, dst: SSAValue, step: SSAValue, pipeline: int,
                 stages: int, unit: str = "tile"):
        props: dict[str, Attribute] = {"pipeline": _int(pipeline), "stages": _int(stages)}
        if unit != "tile":
            props["unit"] = StringAttr(unit)
        super().__init__(operands=[src, list(coords), dst, step], properties=props)

    def verify_(self) -> None:
        check.check_coords(self, self.coords, self.unit)
        check.check_same_element(self, ("the global", self.src.type),
                                 ("the destination", self.dst.type), "a copy does not convert")
        if not isinstance(self.dst.owner, LdsSelectOp):
            raise IRError(self, "a stage copy writes the stage's tile picked by the step "
                                "(a kt.lds_select of the stages' tiles)")


def role_warps(op) -> int | None:
    """The warps of the role `op` runs in (the consumers: a warpgroup MMA's issuing warps),
    None outside any role. The roles are branches on kt.role: a consumer role's true branch
    (in turns), or a producer role's false branch (warp-specialised: the consumers are warps
    0 .. first_warp - 1)."""
    child, parent = op, op.parent_op()
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.if" and isinstance(parent.cond.owner, RoleOp):
            role = parent.cond.owner
            in_then = child.parent_region() is parent.true_region
            if role.role.data == "consumer" and in_then:
                return role.prop_int("warps")
            if role.role.data == "producer" and not in_then:
                return role.prop_int("first_warp")
        child, parent = parent, parent.parent_op()
    return None


PIPELINE_OPS = [PipelineInitOp, RoleOp, SetMaxNRegOp, StageWaitOp, StageReleaseOp, StageCopyOp,
                ProducerDoneOp]
