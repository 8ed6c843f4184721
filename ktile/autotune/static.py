"""Static tables: routes chosen by the AMD static quality report, not by timing.

No AMD GPU exists where ktile is developed, so the AMD targets' tables are chosen from what the
code objects say (`Build.quality`, docs/amd.md: cocheck's resources and occupancy, the hot
loop's instruction mix) and are marked `"measured": false`. Per bucket, among the candidates
that passed the gates (`candidates.py`), the rule `RULE` picks; then the winner, where it is
not the default, runs under wave emulation of the target against the op's reference at a small
shape of its bucket (`Op.check`), and is reverted to the default when outside the tolerance.

    result = tune("rms_norm", "gfx950", shapes, static=True)     # result.table: measured false
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

WAVES_COUNTED = 8          # waves per SIMD counted; more are a tie (CDNA's maximum is 8)
MARGIN = 0.05              # a per-element count must be this much lower to count as fewer
FILL_ROWS = 1024           # rows from which a bucket is ranked: a few blocks per compute unit
                           # on the largest of these chips (MI300X, gfx942: 304 CUs)
# the shapes `ktile tune --static` takes by default: per width, a decode bucket (1 row) and a
# small-batch one (2-512 rows), which keep the default, and a ranked one (513-16384 rows)
SHAPES = ",".join(f"{rows}x{cols}" for cols in (1024, 2048, 4096, 8192, 16384)
                  for rows in (1, 512, 16384))
METHOD = "static quality report"
RULE = (f"buckets of fewer than {FILL_ROWS} rows (their largest shape) keep the default: "
        "the rows do not fill the GPU, a row's latency counts, and the report cannot estimate "
        "it. Larger buckets: among the default's kernel's candidates (its constants varied; "
        "another kernel's passes over memory and loop structure differ in ways the report "
        "cannot weigh) that passed the gates, from the static quality "
        "report of their code objects in the table's dtype, compared with the current choice "
        "(the default first): (1) fewer spilled registers and scratch bytes; (2) more waves "
        f"per SIMD (the VGPR-limited occupancy, counted up to {WAVES_COUNTED}); (3) fewer "
        "instructions per element loaded, in the hot loop (the whole kernel where it has no "
        f"loop), by more than {MARGIN:.0%}; (4) fewer memory waits per element loaded, by "
        f"more than {MARGIN:.0%}; otherwise the current choice stays")
CHECK_RULE = ("each bucket whose route is not the default: the route run under wave emulation "
              "of the target against the op's reference at a small shape of the bucket "
              "(Op.check); outside the tolerance, the bucket keeps the default")


@dataclass(frozen=True)
class Quality:
    """What the rule compares, for one candidate's code objects (the worst of its builds)."""
    spills: int                     # VGPR + SGPR spills + scratch bytes per lane
    waves: int                      # per SIMD, VGPR-limited
    vgprs: int
    instructions_per_element: float
    waits_per_element: float
    hot_loop: bool                  # counted in the hot loop (False: the whole kernel)

    def to_json(self) -> dict:
        found = asdict(self)
        for key in ("instructions_per_element", "waits_per_element"):
            found[key] = round(found[key], 3)
        return found


def quality_of(builds, dtype_bits: int) -> Quality | None:
    """The Quality of a candidate's builds (of one dtype), None when one has no static report
    (an NVIDIA build: ptxas reports no instruction mix)."""
    found = []
    for build in builds:
        report = getattr(build, "quality", None)
        if report is None or getattr(report, "checked", None) is None:
            return None
        found.append(_one(report, dtype_bits))
    if not found:
        return None
    return Quality(spills=max(q.spills for q in found), waves=min(q.waves for q in found),
                   vgprs=max(q.vgprs for q in found),
                   instructions_per_element=max(q.instructions_per_element for q in found),
                   waits_per_element=max(q.waits_per_element for q in found),
                   hot_loop=all(q.hot_loop for q in found))


def _one(report, dtype_bits: int) -> Quality:
    res, occ = report.checked.resources, report.checked.occupancy
    spills = (res.vgpr_spills + res.sgpr_spills + res.scratch_bytes) if res else 0
    mix = report.mix
    counted = mix.hot_loop if mix.hot_loop is not None else mix.whole
    loaded = sum((bits or 32) * n for bits, n in counted.global_loads.items())
    elements = max(loaded / dtype_bits, 1.0)        # per lane, per pass of what is counted
    return Quality(spills=spills, waves=occ.waves if occ is not None else 0,
                   vgprs=(res.vgprs or 0) if res else 0,
                   instructions_per_element=counted.instructions / elements,
                   waits_per_element=counted.waits / elements,
                   hot_loop=mix.hot_loop is not None)


def better(a: Quality, b: Quality) -> bool:
    """Whether `a` beats `b` by RULE (steps in order; the first that differs decides)."""
    if a.spills != b.spills:
        return a.spills < b.spills
    waves_a, waves_b = min(a.waves, WAVES_COUNTED), min(b.waves, WAVES_COUNTED)
    if waves_a != waves_b:
        return waves_a > waves_b
    for key in ("instructions_per_element", "waits_per_element"):
        mine, theirs = getattr(a, key), getattr(b, key)
        if mine < theirs * (1 - MARGIN):
            return True
        if theirs < mine * (1 - MARGIN):
            return False
    return False


def choose(candidates: list, qualities: dict):
    """The candidate RULE picks: the default (first) unless a usable one of its kernel beats
    the choice."""
    kernel = candidates[0].route.kernel if candidates else None
    usable = [c for c in candidates if c.refused is None and qualities.get(c) is not None
              and c.route.kernel == kernel]
    if not usable:
        return None
    best = candidates[0] if candidates[0] in usable else usable[0]
    for cand in usable:
        if cand is not best and better(qualities[cand], qualities[best]):
            best = cand
    return best


def comparable(routes: list, bucket) -> list:
    """The routes RULE may choose among (the default first): only the default in a bucket it
    does not rank, else the default's kernel's routes."""
    if not ranked(bucket):
        return routes[:1]
    return [r for r in routes if r.kernel == routes[0].kernel]


def ranked(bucket) -> bool:
    """Whether RULE ranks the bucket's candidates (else its default stays unranked)."""
    return bucket.rows[1] >= FILL_ROWS


def decide(op, bucket, dtype: str, target: str, *, check=None) -> None:
    """Pick the bucket's winner by RULE, then check a replacing winner under emulation."""
    from .. import dtypes as kt
    if not ranked(bucket):
        bucket.winner = bucket.default if bucket.default.refused is None else None
        bucket.replaced = False
        return
    bits = getattr(kt, dtype).bits
    bucket.qualities = {c: quality_of(_builds(c, dtype), bits) for c in bucket.candidates
                        if c.refused is None}
    best = choose(bucket.candidates, bucket.qualities)
    bucket.winner, bucket.replaced = best, best is not None and best is not bucket.default
    if not bucket.replaced:
        return
    why = (check or emulated_check)(op, bucket, best.route, dtype, target)
    shape = f"rows {bucket.rows[0]}-{bucket.rows[1]}, cols {bucket.cols[0]}-{bucket.cols[1]}"
    if why is None:
        bucket.check = f"{shape}: {best.label} matches the reference under emulation: ok"
        return
    bucket.check = f"{shape}: {best.label} {why}: reverted to the default"
    bucket.winner = bucket.default if bucket.default.refused is None else None
    bucket.replaced = False


def _builds(cand, dtype: str) -> list:
    return [b for b, d in zip(cand.builds, cand.build_dtypes) if d == dtype]


def emulated_check(op, bucket, route, dtype: str, target: str) -> str | None:
    """None when `route` gives the op's reference result under wave emulation of `target`
    at 2 rows (the route is pinned, whatever the rows) of the bucket's widest width the route
    takes, else why not."""
    from ..ops._library import emulating, pinned
    if op.case is None:
        return None
    multiple = getattr(route, "cols_multiple", 1)
    rows, cols = min(bucket.rows[1], 2), bucket.cols[1] // multiple * multiple
    try:
        with emulating(target), pinned(op.table, route):
            error, tolerance = op.check(rows, cols, dtype)
    except Exception as err:  # noqa: BLE001 - a route that fails under emulation is refused
        return f"fails under emulation at {rows}x{cols}: {type(err).__name__}: {err}"
    if not error <= tolerance:
        return f"max error {error:.3g} over the tolerance {tolerance:.3g} at {rows}x{cols}"
    return None


def table_of(result, command: str | None) -> dict:
    """The static routing table of `result` (a TuneResult decided by `decide`)."""
    from ..ops._shipped import FORMAT
    from .metadata import metadata
    from .result import route_json
    buckets, lines = [], []
    for bucket in result.buckets:
        winner = bucket.winner
        if winner is None:
            continue
        quality = bucket.qualities.get(winner)
        default_quality = bucket.qualities.get(bucket.default)
        buckets.append({"rows": list(bucket.rows), "cols": list(bucket.cols),
                        "route": route_json(winner.route),
                        "default": route_json(bucket.default.route),
                        "quality": quality.to_json() if quality else None,
                        "default_quality": default_quality.to_json() if default_quality
                        else None,
                        "replaced": bucket.replaced})
        if bucket.check:
            lines.append(bucket.check)
    return {"format": FORMAT, "op": result.op, "target": result.target, "measured": False,
            "method": METHOD, "rule": RULE, "dtype": result.dtype,
            "metadata": metadata(result.target, command, None), "buckets": buckets,
            "check": {"emulated": not any("reverted" in line for line in lines),
                      "lines": lines, "rule": CHECK_RULE}}
