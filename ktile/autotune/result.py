"""A tuning result as the routing table JSON the package ships (format: ktile/ops/_shipped.py)
and as the report `ktile tune` prints."""
from __future__ import annotations

from .metadata import metadata


def route_json(route) -> dict:
    from ..ops.alternatives import KINDS
    if route.kernel in KINDS:                # an alternative: its kind is the whole route
        return {"kind": route.kernel}
    spec = {"kind": "ktile", "kernel": route.kernel, "constants": dict(route.constants)}
    multiple = getattr(route, "cols_multiple", 1)
    if multiple > 1:
        spec["cols_multiple"] = multiple     # the widths the kernel takes: part of the route
    return spec


def table_of(result, command: str | None, device: str | None) -> dict:
    """The measured routing table of `result` (a TuneResult that was timed)."""
    from ..ops._shipped import FORMAT
    buckets, lines = [], []
    for bucket in result.buckets:
        winner = bucket.winner
        if winner is None:                       # every candidate refused
            continue
        buckets.append({"rows": list(bucket.rows), "cols": list(bucket.cols),
                        "route": route_json(winner.route),
                        "default": route_json(bucket.default.route),
                        "default_us": _round(bucket.median_us(bucket.default)),
                        "winner_us": _round(bucket.median_us(winner)),
                        "p_value": bucket.p_value, "replaced": bucket.replaced})
        if bucket.check:
            lines.append(bucket.check)
    never_slower = not any("reverted" in line for line in lines)
    return {"format": FORMAT, "op": result.op, "target": result.target, "measured": True,
            "dtype": result.dtype, "metadata": metadata(result.target, command, device),
            "buckets": buckets,
            "check": {"never_slower": never_slower, "lines": lines,
                      "rule": "each replaced bucket re-timed, winner against default, in fresh "
                              "interleaved rounds; a winner not faster there is reverted"}}


def _round(value):
    return None if value is None else round(value, 3)


def report_json(result, written: str | None) -> dict:
    """The one JSON object `ktile tune --json` prints last."""
    buckets = []
    for b in result.buckets:
        buckets.append({
            "rows": list(b.rows), "cols": list(b.cols),
            "default": b.default.label,
            "winner": b.winner.label if b.winner else None,
            "replaced": b.replaced, "p_value": b.p_value,
            "candidates": [{"route": c.label, "refused": c.refused,
                            "median_us": _round(b.median_us(c)),
                            "quality": _quality_json(b, c)} for c in b.candidates]})
    check = result.table["check"] if result.table else None
    return {"op": result.op, "target": result.target, "dtype": result.dtype,
            "dry_run": result.dry_run, "ok": result.ok, "buckets": buckets, "check": check,
            "measured": not result.static, "written": written}


def _quality_json(bucket, cand) -> dict | None:
    quality = bucket.qualities.get(cand)
    return None if quality is None else quality.to_json()


def _quality_text(quality) -> str:
    where = "hot loop" if quality.hot_loop else "kernel"
    return (f"{quality.waves} waves, {quality.vgprs} VGPRs, "
            f"{quality.instructions_per_element:.2f} instr/elem, "
            f"{quality.waits_per_element:.2f} waits/elem ({where})")


def report_text(result, written: str | None) -> str:
    mode = (": dry run, build and gate only" if result.dry_run else
            ": chosen by the static quality report, not measured" if result.static else "")
    lines = [f"{result.op} on {result.target} ({result.dtype}){mode}"]
    for b in result.buckets:
        lines.append(f"  rows {b.rows[0]}-{b.rows[1]}, cols {b.cols[0]}-{b.cols[1]}:")
        for c in b.candidates:
            median, quality = b.median_us(c), b.qualities.get(c)
            state = (f"refused: {c.refused}" if c.refused else
                     f"{median:.2f} us" if median is not None else
                     _quality_text(quality) if quality is not None else "gated ok")
            mark = "*" if b.winner is c else " "
            role = "default" if c is b.default else ""
            lines.append(f"   {mark} {c.label:<40} {role:<7} {state}")
        if b.winner is not None and not result.dry_run:
            verdict = "replaces the default" if b.replaced else "the default stays"
            p = "" if b.p_value is None else f" (p = {b.p_value:.2g})"
            lines.append(f"    -> {b.winner.label} {verdict}{p}")
    if check := (result.table or {}).get("check"):
        if result.static:
            lines.append("check: each replacing route matches the reference under emulation: "
                         f"{'yes' if check['emulated'] else 'NO (reverted)'}")
        else:
            lines.append("check: a tuned op is never slower than the default it replaced: "
                         f"{'yes' if check['never_slower'] else 'NO (reverted)'}")
        lines += [f"  {line}" for line in check["lines"]]
    if written:
        lines.append(f"wrote {written}")
    return "\n".join(lines)
