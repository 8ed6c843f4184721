"""Build, before a benchmark run times anything, the ktile kernels its shapes reach, in
parallel on every CPU (`ktile.ops.warmup`); otherwise each first call builds its kernel alone,
one nvcc at a time, which is most of a cold `--quick` run. Best effort: an op warm-up does not
know, or a failure here, is logged and left to the first call."""
from __future__ import annotations

# bench shape -> (rows, cols) as warm-up's calls read them, for the functions it knows
PROBLEM = {
    "elements": lambda d: (max(d["elements"] // 4096, 1), min(d["elements"], 4096)),
    "intermediate": lambda d: (d["tokens"], d["intermediate"]),
    "hidden": lambda d: (d["tokens"], d["hidden"]),
    "rows": lambda d: (d["rows"], d["cols"]),
}
ROTARY_COLS = 4096        # bench_rows' query width (32 heads of 128)
DTYPES = {"softmax": "fp32"}


def problem(name: str, dims: dict) -> tuple[int, int] | None:
    if name == "rotary_embedding":
        return dims["tokens"], ROTARY_COLS
    key = next((k for k in PROBLEM if k in dims), None)
    return None if key is None else PROBLEM[key](dims)


def plan(names: list[str], shapes_of, known) -> dict[str, dict[str, list]]:
    """ktile dtype -> {op function: [(rows, cols), ...]} for the functions warm-up knows."""
    by_dtype: dict[str, dict[str, list]] = {}
    for name in names:
        if name not in known:
            continue
        problems = sorted({problem(name, s.dims) for s in shapes_of(name)} - {None})
        if not problems:          # dims without a (rows, cols) form here: built lazily
            continue
        by_dtype.setdefault(DTYPES.get(name, "bf16"), {})[name] = problems
    return by_dtype


def prebuild(names: list[str], quick: bool, log=print, target: str | None = None) -> None:
    """Warm up the run's ops (those ktile.ops.warmup knows), batched per dtype."""
    from .cases import benches

    def shapes_of(name):
        bench = benches()[name]
        return bench.quick if quick else bench.shapes
    from ktile.ops.warmup import CALLS
    for dtype, shapes in plan(names, shapes_of, CALLS).items():
        if not _warm(shapes, dtype, target, log, quiet=True):   # one batch: most parallel
            for name, problems in shapes.items():               # else op by op
                _warm({name: problems}, dtype, target, log)


def _warm(shapes: dict, dtype: str, target, log, quiet: bool = False) -> bool:
    from ktile.ops.warmup import warmup
    try:
        report = warmup(shapes, target=target, dtypes=(dtype,))
    except Exception as err:   # an op refusing a shape, a build failing: the call says so
        if not quiet:
            log(f"prebuild of {', '.join(shapes)} ({dtype}) left to the first calls: "
                f"{type(err).__name__}: {str(err).splitlines()[0][:200]}")
        return False
    log(f"prebuilt {', '.join(shapes)} ({dtype}): {report.compiles} compiles, "
        f"{report.hits} cached, {report.calls} calls")
    return True
