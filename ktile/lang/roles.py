"""Warpgroup roles of a pipeline: who plays which part, with how many registers, and what a
role's code may do.

A role is whole warpgroups (4 warps) with a register limit per thread. While a role's body is
traced the trace knows the role (`current_role`), so the ops that a role may not issue are
refused at the author's line, on every target: a producer issues no MMA, a consumer no group
load, and no role body meets the block (barriers, group reductions: on sm_90a the roles run
apart, so a block-wide meeting would wait for warps that never come).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.ops_pipeline import SETMAXNREG_RANGE
from . import tracer

WARPS_PER_WARPGROUP = 4


@dataclass(frozen=True)
class Role:
    """One role: `kind` "producer" or "consumer", whole warpgroups, registers per thread
    (None: the block's share, no setmaxnreg)."""
    kind: str
    warpgroups: int
    registers: int | None

    @property
    def warps(self) -> int:
        return WARPS_PER_WARPGROUP * self.warpgroups


def role(kind: str, warpgroups, registers) -> Role:
    """A role as the decorator gives it, checked at the decorator's line."""
    spelled = f"@pipe.{kind}(warpgroups=..., registers=...)"
    if not isinstance(warpgroups, int) or isinstance(warpgroups, bool) or warpgroups < 1:
        raise tracer.error(f"a {kind} role is whole warpgroups of 4 warps: warpgroups must be "
                           f"a positive int, got {warpgroups!r}", op="pipeline",
                           hint=f"{spelled}, e.g. warpgroups=1")
    if registers is not None:
        low, high = SETMAXNREG_RANGE
        if not isinstance(registers, int) or isinstance(registers, bool) or registers % 8 or \
                not low <= registers <= high:
            raise tracer.error(
                f"the {kind}'s registers must be a multiple of 8 from {low} to {high} (what "
                f"setmaxnreg takes), got {registers!r}", op="pipeline",
                hint=f"{spelled}, e.g. registers={40 if kind == 'producer' else 232}, or leave "
                     f"registers out to keep the block's even share")
    return Role(kind, warpgroups, registers)


def current_role() -> str | None:
    """"producer", "consumer", "finish" (the consumers after their last step) or None."""
    trace = tracer.active()
    return None if trace is None else getattr(trace, "pipeline_role", None)


class playing:
    """`with playing(kind):` traces the body as role `kind`."""

    def __init__(self, kind: str, warps: int):
        self.kind, self.warps = kind, warps

    def __enter__(self):
        trace = tracer.current()
        self.saved = (getattr(trace, "pipeline_role", None), getattr(trace, "role_warps", None))
        if self.saved[0] is not None:
            raise tracer.error("a pipeline runs inside another pipeline's role", op="pipeline",
                               hint="run pipelines one after another, at the kernel's top level")
        trace.pipeline_role, trace.role_warps = self.kind, self.warps

    def __exit__(self, *exc) -> None:
        trace = tracer.current()
        trace.pipeline_role, trace.role_warps = self.saved


def issuing_warps() -> int:
    """The warps that issue a block-level MMA here: the role's inside one, else the block's."""
    trace = tracer.current()
    return getattr(trace, "role_warps", None) or trace.warps


def role_warps() -> int | None:
    """The role's warp count while a role is traced (set on its mma_shared ops), else None."""
    trace = tracer.active()
    return None if trace is None else getattr(trace, "role_warps", None)


def check_mma() -> None:
    if current_role() == "producer":
        raise tracer.error("the producer issues an MMA: a producer only fills the pipeline's "
                           "stages (group loads)", op="mma",
                           hint="move the MMA into the @pipe.consumer function")


def check_meeting(what: str) -> None:
    kind = current_role()
    if kind is not None:
        raise tracer.error(f"{what} inside the pipeline's {kind}: the roles run apart on "
                           f"sm_90a, so a meeting of the whole block would wait for warps "
                           f"that never reach it", op=what,
                           hint="the pipeline synchronises its stages itself; meet before "
                                "pipe.run(...) or after it")


def check_group_load() -> None:
    kind = current_role()
    if kind in ("consumer", "finish"):
        raise tracer.error(f"a group load in the pipeline's {kind}: consumers only read the "
                           f"stages the producer fills", op="group.load",
                           hint="load in the @pipe.producer function, into the stage tiles it "
                                "is given")
    if kind == "producer":
        raise tracer.error("the producer's group load writes a tile that is no stage of its "
                           "pipeline", op="group.load",
                           hint="load into the stage tiles the producer function is given")


REGISTER_STEP = 8   # ptxas gives a block's threads registers in multiples of 8


def check_register_file(producer: Role, consumer: Role, target) -> None:
    """Both roles' registers fit what the block is launched with: one block a multiprocessor
    (__launch_bounds__(threads, 1)), each thread the file's share rounded down to a multiple
    of 8 (384 threads: 168). setmaxnreg moves registers within that pool; an increase the
    pool cannot give waits for ever."""
    sm = target.multiprocessor
    if sm is None or producer.registers is None or consumer.registers is None:
        return
    lanes = target.wave_size
    threads = lanes * (producer.warps + consumer.warps)
    most = min(sm.registers // threads, target.vgprs_per_lane)
    launched = most // REGISTER_STEP * REGISTER_STEP
    pool = threads * launched
    total = lanes * (producer.warps * producer.registers + consumer.warps * consumer.registers)
    if total > pool:
        raise tracer.error(
            f"the roles ask for {total} registers ({producer.warps} producer warps × "
            f"{producer.registers} + {consumer.warps} consumer warps × {consumer.registers}, "
            f"× {lanes} lanes), over the {pool} the block is launched with ({threads} threads × "
            f"{launched}, one block a {target.name} multiprocessor)", op="pipeline",
            hint=f"lower the consumers' registers= (or the producer's) so that the total is at "
                 f"most {pool}")
