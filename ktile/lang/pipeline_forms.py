"""The two forms a pipeline (pipeline.py) is traced in.

- **warp-specialised** (a target with `warp_specialization`): the block splits into roles,
  consumers first (warps 0 .. C-1, so a consumer warp's rows of a shared a are its warp id's,
  as everywhere), the producer after. The producer lowers its registers and loops over the
  steps: wait for the stage to be empty, fill it (kt.stage_copy, completing on its full
  barrier: TMA copies, or cp.async by the producer's threads in a call whose tensors cannot
  have tensor maps or where a stage tile has no swizzle mode). The consumers raise theirs and
  loop: wait for full, the consumer function, release the previous step's stage once its MMAs
  completed (kt.stage_release), then `finish`.
- **in turns** (every other target): every warp loads steps 0 .. S-2, then the loop runs in
  rounds of S steps unrolled, so each step's stage is known while tracing: step k = k0 + s
  waits for stage s, a barrier (every warp's copies have landed, every warp is done with step
  k-1), the consumer function (when k is a step: the last round may pass the end; on the
  consumer warps when the block has producer warps too), then the loads of step k+S-1 into
  the stage of k-1, unconditionally (past the last step they read zeros: every load is
  bounded; the last round's are waited for and never read). The copies, waits and barriers
  are ordinary ops, checked by the waits pass as any others, which leaves the S-2 younger
  steps' copies in flight at each wait (a count of (S-2) × the stage's tiles).
"""
from __future__ import annotations

from ..ir.ops import MmaSharedOp
from ..ir.ops_pipeline import (PipelineInitOp, ProducerDoneOp, RoleOp, SetMaxNRegOp,
                               StageCopyOp, StageReleaseOp, StageWaitOp)
from . import control, roles, tracer
from .transfers import barrier, wait_for
from .values import Scalar, describe


def _b():
    return tracer.current().builder


def form_for(trace, pipe, producer: roles.Role, consumer: roles.Role):
    """The form for this trace's target, after checking the block's warps against the roles."""
    _check_top_level(trace)
    specialised = trace.target.warp_specialization
    both = producer.warps + consumer.warps
    if trace.warps != both and (trace.target.warp_specialization or
                                trace.warps != consumer.warps):
        alone = "" if trace.target.warp_specialization else \
            f" (or the consumers' {consumer.warps} alone, on {trace.target.name})"
        raise tracer.error(
            f"the pipeline's roles are {producer.warpgroups} producer and "
            f"{consumer.warpgroups} consumer warpgroups, {both} warps{alone}, but the block "
            f"has {trace.warps}", op="pipeline",
            hint=f"@hk.kernel(..., warps={both}), or change the roles' warpgroups=")
    if specialised:
        roles.check_register_file(producer, consumer, trace.target)
        return warp_specialised
    return in_turns


def _check_top_level(trace) -> None:
    if not _is_kernel_body(_current_block(trace.builder)):
        raise tracer.error("pipe.run(...) inside a loop or branch on a device value",
                           op="pipeline", hint="run the pipeline at the kernel's top level")


def _current_block(b):
    return b._blocks[-1]   # the builder's insertion point


def _is_kernel_body(block) -> bool:
    owner = block.parent_op()
    return owner is not None and owner.name == "func.func"


# ---- warp-specialised (sm_90a) ---------------------------------------------------------------

def warp_specialised(pipe, carried: tuple) -> None:
    b = _b()
    producer, _ = pipe.roles["producer"]
    consumer, _ = pipe.roles["consumer"]
    trace = tracer.current()
    tma = getattr(trace, "tensor_copies", True) and all(
        trace.target.tensor_box(d.rows, d.cols, d.dtype.bits // 8) is not None
        for d in pipe.descs)
    b.insert(PipelineInitOp(pipe.id, pipe.stages, len(pipe.descs), consumer.warps, tma))
    pipe.specialised_now = True
    is_producer = Scalar(b.insert(RoleOp("producer", consumer.warps, producer.warps)).result)
    control.branch(is_producer, lambda _: _produce(pipe, producer) or (),
                   lambda _: _consume(pipe, consumer, carried) or (), (), ())
    _record_roles(b, producer, consumer)


def _produce(pipe, producer: roles.Role) -> None:
    b = _b()
    if producer.registers is not None:
        b.insert(SetMaxNRegOp("dec", producer.registers))

    def step(k, _):
        b.insert(StageWaitOp(k.v, pipe.id, pipe.stages, "empty"))
        tiles = pipe.stage_tiles(k % pipe.stages, k)
        body = _current_block(b)
        pipe.call("producer", tiles, k)
        _check_filled(pipe, body)
        return ()
    control.for_range((0, pipe.steps), True, step, (), ())
    b.insert(ProducerDoneOp(pipe.id))


def _consume(pipe, consumer: roles.Role, carried: tuple) -> None:
    b = _b()
    if consumer.registers is not None:
        b.insert(SetMaxNRegOp("inc", consumer.registers))
    names = tuple(f"the pipeline's carried value {k}" for k in range(len(carried)))

    def step(k, values):
        b.insert(StageWaitOp(k.v, pipe.id, pipe.stages, "full"))
        tiles = pipe.stage_tiles(k % pipe.stages, k)
        body = _current_block(b)
        outs = _as_tuple(pipe.call("consumer", tiles, k, *values), len(values))
        b.insert(StageReleaseOp(k.v, pipe.id, pipe.stages, _groups_kept(body)))
        return outs
    final = control.for_range((0, pipe.steps), True, step, carried, names)
    pipe.call_finish(final)
    if pipe.finisher is None and _registers(final):
        # drain the last steps' MMAs: a consumer ending with wgmma groups in flight got
        # ptxas's C7517 (a wgmma wait injected at every step: the persistent matmul)
        wait_for(*_registers(final))


# Step k's wgmma groups stay in flight past its release (KEEP = the groups it issued, so step
# k-1's have completed): matmul's wgmma_ws_nt builds so with its four HGMMAs a step back to
# back and one `WARPGROUP.DEPBAR.LE gsb0, 0x1` (ptxas 13.0). A scratch kernel storing its fp32
# accumulator without an epilogue got C7514 from ptxas (every wgmma serialized: moves of
# accumulator registers at the loop's exit, before the drain) in every variant tried; such a
# kernel is slower, not wrong. False drains each step's groups (KEEP 0).
KEEP_MMAS_IN_FLIGHT = True


def _groups_kept(body) -> int:
    """The wgmma groups step k leaves in flight at its release: none (KEEP_MMAS_IN_FLIGHT
    False), else the ones it issued (each top-level kt.mma_shared commits one group)."""
    if not KEEP_MMAS_IN_FLIGHT:
        return 0
    return sum(1 for op in body.ops if isinstance(op, MmaSharedOp))


def stage_load(dst, src) -> None:
    """The producer's group load into a stage: a stage copy (warp-specialised) or a group
    load of the whole block (in turns)."""
    from .memory import GlobalView
    pipe = dst.pipe
    if not isinstance(src, GlobalView):
        raise tracer.error(f"group load reads g[coord], got {describe(src)}", op="group.load")
    if src.g.dtype != dst.dtype:
        raise tracer.error(f"group load of {src.g.dtype!r} global '{src.g.name}' into a "
                           f"{dst.dtype!r} stage tile", op="group.load")
    if not getattr(pipe, "specialised_now", False):
        from .transfers import group_copy
        group_copy(_plain(dst), src)
        return
    coords = [s.v for s in src.coord.scalars()]
    _b().insert(StageCopyOp(src.g.v, coords, dst.v, dst.step.v, pipe.id, pipe.stages,
                            src.coord.unit))


def _plain(dst):
    from .memory import SharedTile
    return SharedTile(dst.v)


def _check_filled(pipe, body) -> None:
    """Every stage tile filled exactly once per step, unconditionally: the full barrier counts
    one copy per tile."""
    copies = [op for op in body.ops if isinstance(op, StageCopyOp)]
    nested = [op for op in body.walk() if isinstance(op, StageCopyOp) and op.parent_block()
              is not body]
    if nested:
        raise _unfilled(pipe, "fills a stage under a branch or loop of its own")
    per_tile = [sum(1 for op in copies if _tile_index(pipe, op) == t)
                for t in range(len(pipe.descs))]
    if any(n != 1 for n in per_tile):
        raise _unfilled(pipe, f"fills the stage's tiles {per_tile} times (in hk.pipeline's "
                              f"order)")


def _tile_index(pipe, op) -> int:
    select = op.dst.owner
    first = select.tiles[0]
    return next(t for t, bufs in enumerate(pipe.buffers) if bufs[0].v is first)


def _unfilled(pipe, what: str):
    return tracer.error(f"the producer {what}: each step fills every tile of its stage once",
                        op="pipeline", hint="one hk.group.load per stage tile, outside any "
                                            "if or loop of the producer function")


def _record_roles(b, producer: roles.Role, consumer: roles.Role) -> None:
    """The kernel function's `kt.roles`: [[warps, registers], ...] (the budgets pass and the
    translation read it; 0 registers: no setmaxnreg)."""
    from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, i64
    fn = _current_block(b).parent_op()
    while fn is not None and fn.name != "func.func":
        fn = fn.parent_op()
    fn.attributes["kt.roles"] = ArrayAttr([
        ArrayAttr([IntegerAttr(r.warps, i64), IntegerAttr(r.registers or 0, i64)])
        for r in (consumer, producer)])


# ---- in turns (every other target) -----------------------------------------------------------

def in_turns(pipe, carried: tuple) -> None:
    consumer, _ = pipe.roles["consumer"]
    stages = pipe.stages
    guard = tracer.current().warps != consumer.warps
    # a target whose MMA from shared stays in flight after it returns (sm_90a, were it traced
    # in turns) completes the step's MMAs before the refill of a stage they read
    asynchronous_mma = tracer.current().target.wait_counter("wgmma") is not None
    for j in range(stages - 1):                  # steps 0 .. S-2 in flight
        _turn_load(pipe, j, _index(j))
    names = tuple(f"the pipeline's carried value {k}" for k in range(len(carried)))

    def one_round(k0, values):
        for s in range(stages):                  # unrolled: step k0 + s in stage s
            k = k0 + s
            stage = [bufs[s] for bufs in pipe.buffers]
            wait_for(*stage, *(_registers(values) if asynchronous_mma else []))
            barrier()                            # every warp: landed, and done with step k-1
            values = _consume_in_turn(pipe, consumer, guard, k, s, values)
            if asynchronous_mma:
                wait_for(*stage)
                barrier()
            # into the stage of step k-1; a step past the last reads zeros (bounded loads)
            _turn_load(pipe, (s + stages - 1) % stages, k + (stages - 1))
        return values
    final = control.for_range((0, pipe.steps, stages), True, one_round, carried, names)
    # the loads past the last step: issued, never read
    wait_for(*[t for bufs in pipe.buffers for t in bufs], *_registers(final))
    _on_consumers(guard, consumer, lambda: pipe.call_finish(final) or final, final)


def _consume_in_turn(pipe, consumer, guard: bool, k, s: int, values: tuple) -> tuple:
    """The consumer function on step k (stage s), when k is a step (the last round may pass
    the end), on the consumer warps."""
    def consume(inits):
        return _on_consumers(guard, consumer, lambda: _as_tuple(
            pipe.call("consumer", pipe.stage_tiles(s, k), k, *inits), len(inits)), inits)
    names = tuple(f"the pipeline's carried value {j}" for j in range(len(values)))
    return control.branch(k < pipe.steps, consume, lambda inits: inits, tuple(values), names)


def _registers(values: tuple) -> list:
    from .tiles import Tile, Vec
    return [v for v in values if isinstance(v, (Tile, Vec))]


def _turn_load(pipe, index, step) -> tuple:
    step_s = step if isinstance(step, Scalar) else _index(step)
    pipe.specialised_now = False
    tiles = pipe.stage_tiles(index, step_s)
    pipe.call("producer", tiles, step_s)
    return ()


def _index(value: int) -> Scalar:
    from .values import scalar_const
    return scalar_const(value)


def _on_consumers(guard: bool, consumer: roles.Role, fn, values: tuple) -> tuple:
    """`fn()` on the consumer warps: all warps when the block is the consumers alone, else in
    a branch on kt.role (the other warps keep `values`)."""
    if not guard:
        return fn()
    b = _b()
    is_consumer = Scalar(b.insert(RoleOp("consumer", 0, consumer.warps)).result)
    names = tuple(f"the pipeline's carried value {k}" for k in range(len(values)))
    return control.branch(is_consumer, lambda _: fn(), lambda inits: inits, tuple(values), names)


def _as_tuple(outs, count: int) -> tuple:
    if count == 0:
        if outs is not None and outs != ():
            raise tracer.error(f"the consumer returns {describe(outs)} but pipe.run(...) "
                               f"carries no values", op="pipeline",
                               hint="pass the initial values to pipe.run(init, ...)")
        return ()
    outs = outs if isinstance(outs, tuple) else (outs,)
    if len(outs) != count:
        raise tracer.error(f"the consumer returns {len(outs)} values but pipe.run(...) "
                           f"carries {count}", op="pipeline",
                           hint="return the next value of each carried value, in order")
    return outs
