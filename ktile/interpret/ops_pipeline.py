"""Warpgroup roles and pipeline stages (ir/ops_pipeline.py) on the interpreter.

Each pipeline keeps, per stage, how many phases its full and empty barriers have completed.
A stage copy writes the tile at once (each producer warp its share of rows) and arrives on
full; the phase completes when every producer warp has arrived for every tile of the step. A
consumer's release arrives on the previous step's empty; the phase completes when every
consumer warp has. A wait is a spin: the warp stops (machine.SPIN) until its phase has
completed, and the block's scheduler runs the other warps meanwhile, so a protocol error
shows as a deadlock at the wait rather than as wrong data. setmaxnreg does nothing here.
"""
from __future__ import annotations

from ..ir import ops as kt
from ..ir import ops_pipeline as kp
from .machine import SPIN
from .memory import read_window, warp_rows


class PipelineState:
    """One pipeline of one block: phases completed and arrivals so far, per stage."""

    def __init__(self, stages: int, full_arrivals: int, empty_arrivals: int):
        self.stages = stages
        self.needed = {"full": full_arrivals, "empty": empty_arrivals}
        self.phases = {"full": [0] * stages, "empty": [0] * stages}
        self.arrived = {"full": [0] * stages, "empty": [0] * stages}

    def arrive(self, barrier: str, stage: int) -> None:
        self.arrived[barrier][stage] += 1
        if self.arrived[barrier][stage] == self.needed[barrier]:
            self.arrived[barrier][stage] = 0
            self.phases[barrier][stage] += 1

    def ready(self, barrier: str, step: int) -> bool:
        """Step `step`'s wait passes: full once round r's phase completed; empty once the
        round before's had (round 0 passes at once)."""
        stage, rounds = step % self.stages, step // self.stages
        done = self.phases[barrier][stage]
        return done >= rounds + 1 if barrier == "full" else done >= rounds


def _state(w, pipeline: int) -> PipelineState:
    return w.block.shared[("pipeline", pipeline)]


def _pipeline_init(op: kp.PipelineInitOp, c):
    pipeline, stages = op.prop_int("pipeline"), op.prop_int("stages")
    readers = op.prop_int("readers")
    producers = c.warps - readers
    full = op.prop_int("copies") * producers

    def h(r, w):
        key = ("pipeline", pipeline)
        if key not in w.block.shared:   # the first warp to reach it makes the block's state
            w.block.shared[key] = PipelineState(stages, full, readers)
    return h


def _role(op: kp.RoleOp, c):
    first, count, o = op.prop_int("first_warp"), op.prop_int("warps"), c.slot(op.result)

    def h(r, w):
        r[o] = first <= w.id < first + count
    return h


def _setmaxnreg(op: kp.SetMaxNRegOp, c):
    return None   # registers are no limit here


def _stage_wait(op: kp.StageWaitOp, c):
    step, pipeline, barrier = c.slot(op.step), op.prop_int("pipeline"), op.barrier.data

    def h(r, w):
        state, k = _state(w, pipeline), r[step]
        if not state.ready(barrier, k):
            yield op, lambda: state.ready(barrier, k), SPIN
    return h


def _stage_release(op: kp.StageReleaseOp, c):
    step, pipeline = c.slot(op.step), op.prop_int("pipeline")

    def h(r, w):
        k = r[step]
        if k > 0:
            state = _state(w, pipeline)
            state.arrive("empty", (k - 1) % state.stages)
    return h


def _stage_copy(op: kp.StageCopyOp, c):
    g, dst, step = c.slot(op.src), c.slot(op.dst), c.slot(op.step)
    b, d, row, col = c.slots_of(op.coords)
    rows, cols = op.dst.type.shape
    rs, cs = kt.coord_scale(op, op.dst.type)
    pipeline = op.prop_int("pipeline")
    readers = _readers(op)
    producers = c.warps - readers

    def h(r, w):
        lo, hi = warp_rows(w.id - readers, producers, rows)
        buf = r[dst]
        buf.data[lo:hi] = read_window(r[g], r[b], r[d], r[row] * rs + lo, r[col] * cs,
                                      hi - lo, cols, 0)
        state = _state(w, pipeline)
        state.arrive("full", r[step] % state.stages)
    return h


def _readers(op) -> int:
    """The consumer warps of the copy's pipeline: its kt.pipeline_init says."""
    fn = op.parent_op()
    while fn is not None and fn.name != "func.func":
        fn = fn.parent_op()
    for init in fn.walk():
        if isinstance(init, kp.PipelineInitOp) and \
                init.prop_int("pipeline") == op.prop_int("pipeline"):
            return init.prop_int("readers")
    raise ValueError("a stage copy without its pipeline")   # verified IR never has one


def _producer_done(op: kp.ProducerDoneOp, c):
    return None   # stage copies land at once here


HANDLERS = {
    kp.ProducerDoneOp: _producer_done,
    kp.PipelineInitOp: _pipeline_init, kp.RoleOp: _role, kp.SetMaxNRegOp: _setmaxnreg,
    kp.StageWaitOp: _stage_wait, kp.StageReleaseOp: _stage_release,
    kp.StageCopyOp: _stage_copy,
}
