"""`hk.pipeline`: a producer filling shared stages and consumers reading them, over `steps`.

    pipe = hk.pipeline(STAGES, hk.ST(DT, BM, BK), hk.ST(DT, BN, BK), steps=hk.cdiv(a.cols, BK))

    @pipe.producer(warpgroups=1, registers=40)
    def load(k, sa, sb):                  # step k's stage: fill every tile, once
        hk.group.load(sa, a[hk.tile_coord(0, 0, m, k)])
        hk.group.load(sb, b[hk.tile_coord(0, 0, n, k)])

    @pipe.consumer(warpgroups=2, registers=232)
    def multiply(k, sa, sb, acc):         # step k's stage, then the carried values
        return acc + sa @ sb.T

    @pipe.finish                          # the consumers, once, with the last carried values
    def store(acc):
        out[hk.tile_coord(0, 0, m * pipe.consumer_warps + hk.arch.warp_id, n)] = acc.to(OUT)

    pipe.run(hk.zeros(hk.RT(hk.fp32, 16, BN)))

The author never writes a wait, a barrier or an mbarrier for the stages: on a target with warp
specialisation (sm_90a) the producer's warpgroups wait for a stage to be "empty" before they
refill it and their TMA copies complete on its "full" barrier; the consumers' warpgroups wait
for "full" before reading it and release it once the MMAs reading it have completed, with
their registers raised (setmaxnreg) while the producer's are lowered. Elsewhere every warp
plays both roles in turn (pipeline_forms.py). The block is `warps = 4 × (producer + consumer
warpgroups)` on every target; targets without warp specialisation also take the consumers'
warps alone (every warp then produces and consumes).
"""
from __future__ import annotations

from typing import Callable

from . import roles, tracer
from .memory import SharedTile
from .types import ST
from .values import Scalar, describe


class StageTile(SharedTile):
    """A stage's shared tile as a role's function sees it: usable only while that function is
    traced; the producer fills it by group loads, the consumers only read it."""
    __slots__ = ("_v", "pipe", "step", "active")

    def __init__(self, v, pipe: "Pipeline", step):
        self._v, self.pipe, self.step, self.active = v, pipe, step, True

    @property
    def v(self):
        if not self.active:
            raise tracer.error("a pipeline stage is read outside the pipeline: its tile holds "
                               "another step's data once the role's function returns",
                               op="pipeline", hint="use the stage inside the @pipe.producer / "
                                                   "@pipe.consumer function it was given to")
        return self._v

    def store(self, value, row=None, col=None) -> None:
        raise tracer.error("a consumer writes a pipeline stage: stages are written only by the "
                           "producer's group loads", op="lds_store",
                           hint="store into a shared tile of your own (hk.shared(...))")


class Pipeline:
    """Stages of shared tiles, the roles' functions, and `run`."""

    def __init__(self, stages, tiles: tuple, steps):
        self.stages = _check_stages(stages)
        self.descs = _check_tiles(tiles)
        self.steps = _check_steps(steps)
        self.buffers = _allocate(self.descs, self.stages)   # [tile][stage]
        self.roles: dict[str, tuple[roles.Role, Callable]] = {}
        self.finisher: Callable | None = None
        self.ran = False
        trace = tracer.current()
        trace.pipelines = getattr(trace, "pipelines", 0) + 1
        self.id = trace.pipelines - 1

    # ---- the roles ---------------------------------------------------------------------

    def producer(self, warpgroups: int = 1, registers: int | None = None):
        return self._role("producer", warpgroups, registers)

    def consumer(self, warpgroups: int = 1, registers: int | None = None):
        return self._role("consumer", warpgroups, registers)

    def finish(self, fn: Callable) -> Callable:
        """The consumers' code after their last step, given the carried values."""
        self.finisher = _check_function(fn, "finish")
        return fn

    def _role(self, kind: str, warpgroups, registers):
        spec = roles.role(kind, warpgroups, registers)
        if kind in self.roles:
            raise tracer.error(f"the pipeline has a {kind} already", op="pipeline",
                               hint=f"give one @pipe.{kind} function")

        def decorate(fn: Callable) -> Callable:
            self.roles[kind] = (spec, _check_function(fn, kind))
            return fn
        return decorate

    @property
    def consumer_warps(self) -> int:
        """The warps playing the consumer role (its warps are 0 .. consumer_warps - 1)."""
        return self._spec("consumer").warps

    def _spec(self, kind: str) -> roles.Role:
        if kind not in self.roles:
            raise tracer.error(f"the pipeline has no {kind}", op="pipeline",
                               hint=f"decorate its function with @pipe.{kind}(warpgroups=...)")
        return self.roles[kind][0]

    # ---- running -----------------------------------------------------------------------

    def run(self, *carried) -> None:
        """Trace the pipeline: `steps` steps of producer then consumer, `carried` the
        consumers' initial values (their function returns the next ones), then `finish`."""
        from . import pipeline_forms
        if self.ran:
            raise tracer.error("the pipeline runs twice", op="pipeline",
                               hint="make a new hk.pipeline(...) for a second loop")
        producer, consumer = self._spec("producer"), self._spec("consumer")
        self.ran = True
        trace = tracer.current()
        form = pipeline_forms.form_for(trace, self, producer, consumer)
        form(self, tuple(carried))

    def stage_tiles(self, index, step) -> list[StageTile]:
        """Stage `index`'s tiles (a device index: picked by kt.lds_select), for step `step`."""
        from .shared_ops import select_shared
        return [StageTile(select_shared(bufs, index).v, self, step) for bufs in self.buffers]

    def call(self, kind: str, tiles: list[StageTile], *args):
        """The role's function on one step's stage; its stage tiles go stale afterwards."""
        spec, fn = self.roles[kind]
        try:
            with roles.playing(kind, spec.warps):
                return fn(*args[:1], *tiles, *args[1:])
        finally:
            for t in tiles:
                t.active = False

    def call_finish(self, carried: tuple) -> None:
        if self.finisher is None:
            return
        with roles.playing("finish", self._spec("consumer").warps):
            self.finisher(*carried)


def pipeline(stages, *tiles, steps) -> Pipeline:
    """`hk.pipeline(STAGES, hk.ST(...), ..., steps=n)`: STAGES buffers of each shared tile,
    filled by a producer and read by consumers over steps 0 .. n-1 (module docstring)."""
    return Pipeline(stages, tiles, steps)


def intercepts_load(dst) -> bool:
    """Whether `hk.group.load(dst, ...)` is the pipeline's: into a stage, or inside a role."""
    return isinstance(dst, StageTile) or roles.current_role() is not None


def group_load(dst, src) -> None:
    """A group load into a stage by the producer: the form's copy (pipeline_forms)."""
    from . import pipeline_forms
    if roles.current_role() != "producer" or not isinstance(dst, StageTile):
        roles.check_group_load()
        raise tracer.error("a pipeline stage is filled outside the producer", op="group.load",
                           hint="load into stages only in the @pipe.producer function")
    pipeline_forms.stage_load(dst, src)


# ---- checks at the author's line ------------------------------------------------------------

def _check_stages(stages) -> int:
    if not isinstance(stages, int) or isinstance(stages, bool) or stages < 2:
        raise tracer.error(f"a pipeline has at least 2 stages (one filled while another is "
                           f"read), got {stages!r}", op="pipeline",
                           hint="hk.pipeline(3, hk.ST(...), steps=n): a Python int, e.g. a "
                                "Constexpr STAGES")
    return stages


def _check_tiles(tiles: tuple) -> tuple[ST, ...]:
    if not tiles:
        raise tracer.error("a pipeline stage holds at least one shared tile", op="pipeline",
                           hint="hk.pipeline(STAGES, hk.ST(dtype, rows, cols), ..., steps=n)")
    for k, desc in enumerate(tiles):
        if not isinstance(desc, ST):
            raise tracer.error(f"the pipeline's tile {k} is {describe(desc)}: a stage holds "
                               f"shared tiles, given as hk.ST(dtype, rows, cols)", op="pipeline")
    return tuple(tiles)


def _check_steps(steps):
    if isinstance(steps, int) and not isinstance(steps, bool) and steps >= 0:
        return steps
    if isinstance(steps, Scalar) and not steps.is_float:
        return steps
    raise tracer.error(f"steps= is the pipeline's step count, an integer, got "
                       f"{describe(steps)}", op="pipeline",
                       hint="steps=hk.cdiv(a.cols, BK): a Python int or an integer device value")


def _check_function(fn, kind: str) -> Callable:
    if not callable(fn):
        raise tracer.error(f"@pipe.{kind} decorates a function, got {describe(fn)}",
                           op="pipeline")
    return fn


def _allocate(descs: tuple[ST, ...], stages: int) -> list[list[SharedTile]]:
    from .transfers import shared
    return [[shared(desc) for _ in range(stages)] for desc in descs]
