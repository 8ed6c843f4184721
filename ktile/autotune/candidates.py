"""Candidates built and gated before any timing.

Each candidate route is first checked by the op's own call in build-only mode at the corners
of its bucket (the kernel's requirements and trace checks: `ktile.ops._shipped.refusal`), then
traced for every dtype of the op (one thread: tracing is Python), then compiled for the target
in parallel (one worker per CPU: the compilers are subprocesses) through the build cache. A
build is refused by the build's own gate (a spill or a stack frame), and then by the tuner's:
an occupancy below the target's floor (`occupancy_warn_below`), shared memory past what a
block may use. A refused candidate keeps its reason; none of them is timed.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..errors import KtileError


@dataclass(eq=False)            # by identity: a key of the timing dicts
class Candidate:
    route: object                          # a Route bound to the bucket
    refused: str | None = None
    builds: list = field(default_factory=list)
    build_dtypes: list = field(default_factory=list)     # the dtype of each build, in order

    @property
    def label(self) -> str:
        from ..ops.alternatives import KINDS
        if self.route.kernel in KINDS:
            return self.route.kernel               # "torch", "triton": an alternative
        consts = ",".join(f"{k}={v}" for k, v in sorted(self.route.constants.items()))
        return f"{self.route.kernel}({consts})"


def gate_candidates(op, routes: list, target: str, *, workers: int | None = None,
                    progress=None) -> list[Candidate]:
    """Every route as a Candidate, built for every dtype of `op` on `target` and gated."""
    from ..ops._shipped import refusal
    from ..runtime.builds import call_traces
    from .. import targets
    facts = targets.get(target)
    candidates = [Candidate(route) for route in routes]
    jobs = []                                    # (candidate, trace, dtype)
    for cand in candidates:
        cand.refused = refusal(op, cand.route, target)
        if cand.refused is not None:
            continue
        try:
            for dtype in op.dtypes:
                for trace in call_traces(op.kernel(cand.route, dtype), target,
                                         cand.route.constants):
                    trace.source()               # translated here, not in the workers
                    jobs.append((cand, trace, dtype))
        except KtileError as err:
            cand.refused = _first_line(err)
    if progress is not None:
        progress.add(len(jobs))
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        results = list(pool.map(_build, [trace for _, trace, _ in jobs]))
    for (cand, _, dtype), (build, error) in zip(jobs, results):
        if progress is not None:
            progress.step(cand.label)
        if cand.refused is not None:
            continue
        cand.refused = error or gate(build, facts)
        cand.builds.append(build)
        cand.build_dtypes.append(dtype)
    return candidates


def alternative_candidates(op, bucket_route, target: str) -> list[Candidate]:
    """The op's alternatives ("torch", "triton": ktile/ops/alternatives.py) as candidates of a
    bucket (`bucket_route`: a Route bound to it, whose bounds they take). Not gated (they are
    no ktile builds); one that cannot run here is refused with the reason. On the GPU they are
    checked against the op's reference before timing, as every candidate is."""
    from dataclasses import replace
    from ..ops.alternatives import KINDS, unavailable
    found = []
    for kind in KINDS:
        why = unavailable(op.name, kind)
        if why is not None and why.startswith(f"{op.name} has no"):
            continue                               # never offered (alternatives.py says why)
        found.append(Candidate(replace(bucket_route, kernel=kind, constants={},
                                       cols_multiple=1), refused=why))
    return found


def _build(trace):
    from ..runtime.build import build_trace
    try:
        return build_trace(trace), None
    except KtileError as err:
        return None, _first_line(err)


def gate(build, target) -> str | None:
    """The tuner's gates on a build the build's own gate passed: occupancy, shared memory."""
    res = build.resources
    floor = getattr(target, "occupancy_warn_below", 0.0)
    occ = res.occupancy
    if occ is not None and floor and occ.fraction < floor:
        return (f"{build.kernel} ({build.warps} warps, {res.registers} registers) keeps "
                f"{occ.warps} of {occ.max_warps} warps resident ({occ.fraction:.0%}, limited by "
                f"{occ.limited_by}), below the {floor:.0%} floor")
    if res.shared_bytes > target.lds_bytes:
        return (f"{build.kernel} uses {res.shared_bytes} bytes of shared memory, over the "
                f"{target.lds_bytes} a block may use")
    return None


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0]
