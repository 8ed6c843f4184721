"""The op benchmark's summary: per op and shape, ktile against the fastest alternative whose
output matched (ratio = alternative time / ktile time: ≥ 1 means ktile is as fast or faster),
and ktile's share of copy bandwidth. Pure functions of the results JSON (tested on the CPU)."""
from __future__ import annotations

from .runner import ALTERNATIVES

RATIO_GOAL = 0.95              # issue #13: at least 0.95× the fastest alternative
COPY_GOAL, LARGE_BYTES = 0.90, 64 << 20   # and 90% of copy bandwidth past 64 MiB


def best_alternative(row: dict) -> tuple[str, float] | None:
    """The fastest alternative that ran and was not found wrong, as (name, ms)."""
    timed = [(name, row[name]["ms"]) for name in ALTERNATIVES
             if "ms" in row.get(name, {}) and row[name].get("check", {}).get("ok", True)]
    return min(timed, key=lambda t: t[1]) if timed else None


def summary_row(op: str, row: dict) -> dict:
    mine, best = row.get("ktile", {}), best_alternative(row)
    entry = {"op": op, "shape": row["label"], "bytes": row["bytes"],
             "ktile_ms": mine.get("ms"), "ktile_failed": mine.get("failed"),
             "best": best[0] if best else None, "best_ms": best[1] if best else None,
             "of_copy": mine.get("of_copy")}
    entry["ratio"] = (best[1] / mine["ms"]) if best and "ms" in mine else None
    entry["meets_goal"] = _meets_goal(entry)
    return entry


def _meets_goal(entry: dict) -> bool | None:
    if entry["ktile_ms"] is None:
        return False
    ratio_ok = entry["ratio"] is None or entry["ratio"] >= RATIO_GOAL
    copy_ok = entry["bytes"] <= LARGE_BYTES or (entry["of_copy"] or 0) >= COPY_GOAL
    return ratio_ok and copy_ok


def summarize(op_results: dict[str, list[dict]]) -> list[dict]:
    return [summary_row(op, row) for op, rows in op_results.items() for row in rows]


def _ms(value) -> str:
    return "-" if value is None else f"{value * 1e3:.1f} µs"


def markdown(entries: list[dict]) -> str:
    """The table for docs/performance.md."""
    lines = ["| op | shape | ktile | best alternative | ratio | % of copy | goal |",
             "|---|---|---|---|---|---|---|"]
    for e in entries:
        ktile = _ms(e["ktile_ms"]) if e["ktile_failed"] is None else "failed"
        best = f"{e['best']} {_ms(e['best_ms'])}" if e["best"] else "-"
        ratio = "-" if e["ratio"] is None else f"{e['ratio']:.2f}×"
        share = "-" if e["of_copy"] is None else f"{100 * e['of_copy']:.0f}%"
        lines.append(f"| {e['op']} | {e['shape']} | {ktile} | {best} | {ratio} | {share} | "
                     f"{'ok' if e['meets_goal'] else 'below'} |")
    return "\n".join(lines)


def text_table(entries: list[dict]) -> str:
    """The table printed last by a run."""
    head = f"{'op':<20} {'shape':<18} {'ktile':>11} {'best alternative':>26} {'ratio':>6} {'copy':>5}"
    lines = [head]
    for e in entries:
        ktile = _ms(e["ktile_ms"]) if e["ktile_failed"] is None else "failed"
        best = f"{e['best']} {_ms(e['best_ms'])}" if e["best"] else "-"
        ratio = "-" if e["ratio"] is None else f"{e['ratio']:.2f}"
        share = "-" if e["of_copy"] is None else f"{100 * e['of_copy']:.0f}%"
        mark = "" if e["meets_goal"] else "  <"
        lines.append(f"{e['op']:<20} {e['shape']:<18} {ktile:>11} {best:>26} {ratio:>6} "
                     f"{share:>5}{mark}")
    met = sum(bool(e["meets_goal"]) for e in entries)
    lines.append(f"{met} of {len(entries)} shapes meet the goal (≥{RATIO_GOAL}× the fastest "
                 f"alternative; ≥{COPY_GOAL:.0%} of copy past {LARGE_BYTES >> 20} MiB); "
                 f"'<' marks the others")
    return "\n".join(lines)
