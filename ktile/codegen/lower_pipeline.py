"""Lowerings of the warp-specialisation ops (ir/ops_pipeline.py) onto
`ktile/nvidia/hopper/pipeline.hpp`:

    kt::pipeline<STAGES, OFFSET, PRODUCER_WARP> kt_pipe0(copies, readers);   kt.pipeline_init
    const bool vN = kt::warp_id() >= F && kt::warp_id() < F + W;             kt.role
    kt::setmaxnreg_dec<40>();                                                kt.setmaxnreg
    kt_pipe0.wait_empty(k);  kt_pipe0.wait_full(k);                          kt.stage_wait
    kt_pipe0.release<KEEP>(k);                                               kt.stage_release
    kt_pipe0.producer_done();                                                kt.producer_done
    kt::stage_copy(dst, g, coord, kt_pipe0, k[, kt_mapN]);                   kt.stage_copy

kt.role is written with warp_id alone, so the in-turns form (pipeline_forms.py) translates
for every target; the other ops are traced only where the target has warp specialisation.
"""
from __future__ import annotations

from ..ir import ops_pipeline as kp
from ..ir.ops import LdsSelectOp, MmaSharedOp
from .emitter import Emitter, missing_lowering
from .lower_memory import coord
from .names import tensor_map_name


def pipeline_name(op) -> str:
    return f"kt_pipe{op.prop_int('pipeline')}"


def lower_pipeline_init(e: Emitter, op: kp.PipelineInitOp) -> None:
    offset = op.prop_int("offset")
    if offset is None:
        raise missing_lowering(op, e.target, "a pipeline whose mbarriers lds-alloc has not "
                                             "placed")
    producer = _producer_warp(op)
    arrivals = op.prop_int("copies")
    if not op.prop_int("tma"):     # cp.async: every producer thread arrives for every copy
        arrivals *= (e.warps - producer) * e.target.wave_size
    e.statement(op, f"kt::pipeline<{op.prop_int('stages')}, {offset}, {producer}> "
                    f"{pipeline_name(op)}({arrivals}, {op.prop_int('readers')});")


def _producer_warp(op: kp.PipelineInitOp) -> int:
    """The producer role's first warp (it issues the TMA copies): the consumers come first."""
    return op.prop_int("readers")


def lower_role(e: Emitter, op: kp.RoleOp) -> None:
    first, count = op.prop_int("first_warp"), op.prop_int("warps")
    e.define_by_value(op, op.result, f"kt::warp_id() >= {first} && kt::warp_id() < "
                                     f"{first + count}", qualifier="const")


def lower_setmaxnreg(e: Emitter, op: kp.SetMaxNRegOp) -> None:
    e.statement(op, f"kt::setmaxnreg_{op.action.data}<{op.prop_int('registers')}>();")


def lower_stage_wait(e: Emitter, op: kp.StageWaitOp) -> None:
    e.statement(op, f"{pipeline_name(op)}.wait_{op.barrier.data}({e.name(op.step)});")


def lower_stage_release(e: Emitter, op: kp.StageReleaseOp) -> None:
    e.statement(op, f"{pipeline_name(op)}.template release<{op.prop_int('keep')}>"
                    f"({e.name(op.step)});")


def lower_stage_copy(e: Emitter, op: kp.StageCopyOp) -> None:
    tensor_map = op.prop_int("map")
    args = f"{e.name(op.dst)}, {e.name(op.src)}, {coord(e, op)}, {pipeline_name(op)}, " \
           f"{e.name(op.step)}"
    if tensor_map is None:       # a call whose tensors have no tensor maps: cp.async
        e.statement(op, f"kt::stage_copy({args});")
        return
    e.statement(op, f"kt::stage_copy({args}, {tensor_map_name(tensor_map)});")


def written_by_tensor_copies(value) -> bool:
    """Whether shared tile `value` is a pipeline stage that only TMA stage copies write: a
    kt.lds_select of tiles used through such selects alone, each select used by tensor-map
    stage copies (kp.StageCopyOp with a map) and warpgroup MMAs (reads) and nothing else.
    Those writes go through the async proxy and complete on the stage's full mbarrier, which
    the consumer waits on: a wgmma (also the async proxy) then needs no `fence.proxy.async`
    before it (mma_shared.hpp's PROXY_FENCE false), as CUTLASS issues none after TMA."""
    select = value.owner
    if not isinstance(select, LdsSelectOp):
        return False
    selects = {use.operation for tile in select.tiles for use in tile.uses}
    if not all(isinstance(s, LdsSelectOp) for s in selects):
        return False
    for s in selects:
        for use in s.result.uses:
            user = use.operation
            copied = isinstance(user, kp.StageCopyOp) and user.prop_int("map") is not None
            if not (copied or isinstance(user, MmaSharedOp)):
                return False
    return True


def lower_producer_done(e: Emitter, op: kp.ProducerDoneOp) -> None:
    e.statement(op, f"{pipeline_name(op)}.producer_done();")


PIPELINE_LOWERINGS = {
    kp.ProducerDoneOp: lower_producer_done,
    kp.PipelineInitOp: lower_pipeline_init,
    kp.RoleOp: lower_role,
    kp.SetMaxNRegOp: lower_setmaxnreg,
    kp.StageWaitOp: lower_stage_wait,
    kp.StageReleaseOp: lower_stage_release,
    kp.StageCopyOp: lower_stage_copy,
}
