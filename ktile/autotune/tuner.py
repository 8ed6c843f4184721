"""The tuner: per shape bucket, the candidates of the op's space, gated, timed, decided.

    result = tune("rms_norm", "sm_90a", [(1, 4096), (512, 4096)])     # on the GPU
    result = tune(..., dry_run=True)                                   # build + gate only
    result.table      # the routing table JSON (ktile/ops/_shipped.py), None on a dry run

Buckets: the shapes sorted by columns then rows; the bucket of (rows, cols) is the columns
above the next narrower shape's up to cols, and the rows above the next shorter shape's (of
those columns) up to rows. Each bucket is timed at its largest shape; shapes outside every
bucket take the op's built-in routes. Decision: a candidate replaces the default (the
built-in route there) only when `stats.faster` says so at alpha / (candidates - 1)
(Bonferroni: several candidates get several chances) with a median at least `min_effect`
below the default's; the fastest such candidate by median wins. The check: each replaced
bucket is timed again, winner against default, in fresh interleaved rounds; a winner whose
median is not below the default's is reverted (the table keeps the default there), and the
check's lines say so.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import InputError, KernelError
from . import stats
from .candidates import Candidate, alternative_candidates, gate_candidates
from .spaces import space_of


class TuneError(KernelError):
    """The tuning could not be done (no GPU for timing, the GPU is not the target's)."""


@dataclass
class Bucket:
    rows: tuple[int, int]
    cols: tuple[int, int]
    candidates: list[Candidate] = field(default_factory=list)
    times: dict = field(default_factory=dict)          # Candidate -> [seconds]
    winner: Candidate | None = None
    p_value: float | None = None
    replaced: bool = False
    check: str = ""
    qualities: dict = field(default_factory=dict)      # Candidate -> static.Quality (static)

    @property
    def shape(self) -> tuple[int, int]:
        return self.rows[1], self.cols[1]

    @property
    def default(self) -> Candidate:
        return self.candidates[0]

    def median_us(self, cand: Candidate) -> float | None:
        found = self.times.get(cand)
        return float(np.median(found)) * 1e6 if found else None


@dataclass
class TuneResult:
    op: str
    target: str
    dtype: str
    buckets: list[Bucket]
    dry_run: bool
    table: dict | None = None
    static: bool = False

    @property
    def ok(self) -> bool:
        """Every bucket has a usable ktile candidate (an alternative alone is no table: the
        default a bucket falls back to is ktile's)."""
        return all(any(c.refused is None and c.label not in ("torch", "triton")
                       for c in b.candidates) for b in self.buckets)


def buckets_of(shapes: list[tuple[int, int]]) -> list[Bucket]:
    """The shape buckets of the given (rows, cols) (the module's docstring)."""
    found, widths = [], sorted({c for _, c in shapes})
    for i, cols in enumerate(widths):
        col_lo = widths[i - 1] + 1 if i else 1
        heights = sorted({r for r, c in shapes if c == cols})
        for j, rows in enumerate(heights):
            found.append(Bucket((heights[j - 1] + 1 if j else 1, rows), (col_lo, cols)))
    return found


def tune(op_name: str, target: str, shapes: list[tuple[int, int]], *, dtype: str = "bf16",
         rounds: int = 30, timer=None, dry_run: bool = False, alpha: float = 0.01,
         min_effect: float = 0.02, workers: int | None = None, progress=None,
         command: str | None = None, static: bool = False, check=None,
         alternatives: bool = False) -> TuneResult:
    """Tune `op_name` on `target` at `shapes`; the result's `table` is what `ktile tune`
    writes. `static`: choose by the AMD static quality report instead of timing
    (`static.py`; `check` replaces its emulated check of a replacing winner, for tests).
    `alternatives`: the op's torch/triton alternatives join each bucket's candidates (after
    the gated ktile ones; timed alike; not with `static`)."""
    op, function = _op_and_call(op_name)
    _check(target, shapes, dtype, rounds, op)
    if static:
        _check_static(target)
        if alternatives:
            raise InputError("--alternatives are timed; --static chooses among ktile builds "
                             "by their code objects' report", hint="leave out --alternatives")
        from . import static as by_report
    space, buckets = space_of(op_name), buckets_of(shapes)
    for bucket in buckets:
        routes = space.candidates(op, target, *bucket.shape)
        if static:
            routes = by_report.comparable(routes, bucket)
        bound = [replace(r, min_rows=bucket.rows[0], max_rows=bucket.rows[1],
                         min_cols=bucket.cols[0], max_cols=bucket.cols[1], targets=(target,))
                 for r in routes]
        bucket.candidates = gate_candidates(op, bound, target, workers=workers,
                                            progress=progress)
        if alternatives and not static and bound:
            bucket.candidates += alternative_candidates(op, bound[0], target)
    result = TuneResult(op_name, target, dtype, buckets, dry_run, static=static)
    if dry_run or not result.ok:
        return result
    if static:
        for bucket in buckets:
            by_report.decide(op, bucket, dtype, target, check=check)
        result.table = by_report.table_of(result, command)
        return result
    timer = timer or _gpu_timer(target)
    for bucket in buckets:
        _time_bucket(op, function, bucket, dtype, timer, rounds, alpha, min_effect, progress)
    from .result import table_of
    result.table = table_of(result, command, timer.device)
    return result


def _time_bucket(op, function, bucket: Bucket, dtype, timer, rounds, alpha, min_effect,
                 progress) -> None:
    _check_correct(op, bucket, dtype, timer, function)
    usable = [c for c in bucket.candidates if c.refused is None]
    runs = _runs(op, function, usable, bucket.shape, dtype, timer.device)
    for cand, run in runs.items():
        try:
            run()                            # the first call loads the kernel
        except Exception as err:  # noqa: BLE001 - a candidate that fails to run is refused
            cand.refused = f"its call fails: {type(err).__name__}: {err}"
    usable = [c for c in usable if c.refused is None]
    if not usable:
        return                               # no winner: the table leaves the bucket out
    bucket.times = stats_times = interleave_times(usable, bucket.shape, runs, timer, rounds,
                                                  progress)
    default = bucket.default
    bucket.winner = default
    if default.refused is not None or len(usable) < 2:
        return
    level = alpha / (len(usable) - 1)
    best = None
    for cand in usable[1:]:
        verdict = stats.faster(stats_times[cand], stats_times[default], alpha=level,
                               min_effect=min_effect)
        if bucket.p_value is None or verdict.p_value < bucket.p_value:
            bucket.p_value = verdict.p_value
        if verdict.faster and (best is None or bucket.median_us(cand) < bucket.median_us(best)):
            best = cand
    if best is not None:
        bucket.winner, bucket.replaced = best, True
        bucket.p_value = stats.p_less(stats_times[best], stats_times[default])
        _confirm(op, function, bucket, dtype, timer, rounds, progress)


def interleave_times(candidates, shape, runs, timer, rounds, progress):
    from .timing import interleave
    return interleave(candidates, shape, runs, timer, rounds, progress)


def _confirm(op, function, bucket: Bucket, dtype, timer, rounds, progress) -> None:
    """The tuner's own check: the winner, timed again against the default, is not slower."""
    pair = [bucket.default, bucket.winner]
    runs = _runs(op, function, pair, bucket.shape, dtype, timer.device)
    again = interleave_times(pair, bucket.shape, runs, timer, rounds, progress)
    default_us = float(np.median(again[pair[0]])) * 1e6
    winner_us = float(np.median(again[pair[1]])) * 1e6
    shape = f"{bucket.shape[0]}x{bucket.shape[1]}"
    if winner_us <= default_us:
        bucket.check = (f"{shape}: {bucket.winner.label} {winner_us:.2f} us <= default "
                        f"{default_us:.2f} us: ok")
        return
    bucket.check = (f"{shape}: {bucket.winner.label} {winner_us:.2f} us > default "
                    f"{default_us:.2f} us on the re-check: reverted to the default")
    bucket.winner, bucket.replaced = bucket.default, False


def _check_correct(op, bucket: Bucket, dtype, timer, function=None) -> None:
    """On a GPU, a candidate whose result is outside the op's tolerance of its reference is
    refused (the op's own check, `Op.check`, pinned to the candidate). An op without one
    (act_and_mul) checks its alternatives against its default ktile route's output instead
    (`_check_alternative`): a wrong alternative is dropped before it is timed."""
    if timer.device is None:
        return
    from ..ops._library import pinned
    for cand in bucket.candidates:
        if cand.refused is not None:
            continue
        if op.case is None:
            if cand.label in ("torch", "triton"):
                cand.refused = _check_alternative(op, function, bucket, cand, dtype,
                                                  timer.device)
            continue
        try:
            with pinned(op.table, cand.route):
                error, tolerance = op.check(*bucket.shape, dtype, timer.device)
        except Exception as err:  # noqa: BLE001 - a candidate that fails on the GPU is refused
            cand.refused = f"its call fails on the GPU: {type(err).__name__}: {err}"
            continue
        if not error <= tolerance:
            cand.refused = f"max error {error:.3g} over the tolerance {tolerance:.3g}"


def _check_alternative(op, function, bucket: Bucket, cand, dtype, device) -> str | None:
    """Why `cand` (an alternative) is refused: its outputs at the bucket's shape differ from
    the default route's by more than the op benchmark's tolerance (a couple of roundings in
    the dtype, `ktile.bench.cases.close`), or it fails; None when it matches."""
    from ..bench.cases import close
    from ..ops._library import pinned
    from .. import ops
    from ..ops.warmup import CALLS, _torch_dtypes
    call = CALLS[function]
    results = []
    try:
        for route in (bucket.default.route, cand.route):
            args = _seeded(call.make(*bucket.shape, _torch_dtypes([dtype])[0], {}, device))
            with pinned(op.table, route):
                results.append(getattr(ops, call.function)(*args))
    except Exception as err:  # noqa: BLE001 - an alternative that fails on the GPU is refused
        return f"its call fails on the GPU: {type(err).__name__}: {err}"
    error, tolerance = close(results[1], results[0])
    return None if error <= tolerance else (f"max relative error {error:.3g} against the "
                                            f"default route, over {tolerance:.3g}")


def _seeded(args: tuple) -> tuple:
    """Warm-up's arguments (made by torch.empty) with their floating tensors filled with the
    same normal values on every call."""
    import torch
    generator = torch.Generator(device="cpu").manual_seed(0)
    for arg in args:
        if isinstance(arg, torch.Tensor) and arg.is_floating_point():
            arg.copy_(torch.randn(arg.shape, generator=generator))
    return args


def _runs(op, function, candidates, shape, dtype, device) -> dict:
    """candidate -> a call of the op at `shape`, pinned to the candidate's route."""
    if device is None:
        return {}
    from ..ops._library import pinned
    from .. import ops
    from ..ops.warmup import CALLS, _torch_dtypes
    args = CALLS[function].make(*shape, _torch_dtypes([dtype])[0], {}, device)
    fn = getattr(ops, CALLS[function].function)

    def run_of(route):
        def run():
            with pinned(op.table, route):
                fn(*args)
        return run
    return {cand: run_of(cand.route) for cand in candidates}


def _gpu_timer(target: str):
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        raise TuneError("timing needs a CUDA GPU and there is none here",
                        hint="run on the GPU machine, or pass --dry-run (build and gate only)")
    from ..runtime.devices import device, target_of
    native = target_of(device(torch.cuda.current_device()))
    if native != target:
        raise TuneError(f"the GPU here is an {native}, not an {target}: its times would not "
                        f"be {target}'s", hint=f"tune --target {native}, or --dry-run")
    from .timing import CudaTimer
    return CudaTimer()


def _op_and_call(op_name: str):
    from ..ops._library import all_ops
    from ..ops.warmup import CALLS
    ops = {op.name: op for op in all_ops()}
    if op_name not in ops:
        raise InputError(f"no op named {op_name!r}", hint=f"ops: {', '.join(sorted(ops))}")
    calls = [c.name for c in CALLS.values() if c.op == op_name]
    if not calls:
        raise InputError(f"op {op_name!r} has no warm-up call to time it with",
                         hint=f"tune one of: {', '.join(sorted({c.op for c in CALLS.values()}))}")
    return ops[op_name], calls[0]


def _check_static(target: str) -> None:
    from .. import targets
    from ..ops._library import TARGETS
    if target in TARGETS and targets.get(target).vendor != "amd":
        raise InputError(f"--static chooses by the AMD static quality report; {target} builds "
                         f"have none (ptxas reports no instruction mix)",
                         hint=f"time {target} on its GPU (leave out --static), or pass an AMD "
                              f"target (gfx950, gfx942, gfx1100, gfx1201)")


def _check(target: str, shapes, dtype: str, rounds: int, op) -> None:
    from ..ops._library import TARGETS
    if target not in TARGETS:
        raise InputError(f"unknown target {target!r}", hint=f"targets: {', '.join(TARGETS)}")
    if not shapes or not all(isinstance(s, tuple) and len(s) == 2 and
                             all(isinstance(v, int) and v >= 1 for v in s) for s in shapes):
        raise InputError(f"shapes must be (rows, cols) of positive ints, got {shapes!r}",
                         hint="--shapes 1x4096,512x4096")
    if dtype not in op.dtypes:
        raise InputError(f"{op.name} takes {', '.join(op.dtypes)}, not {dtype!r}",
                         hint=f"--dtype {op.dtypes[0]}")
    if not isinstance(rounds, int) or rounds < 5:
        raise InputError(f"rounds is {rounds!r}; the test needs at least 5 per candidate",
                         hint="--rounds 30")
