"""The performance gate: a run's ktile times against the figures recorded for that machine.

A shape regressed when its time grew by more than the noise allows: `NOISE_FACTOR` × (the run's
relative IQR + the recorded one), and never less than `FLOOR` (H200 medians of one shape move
by a few percent between machines of one kind). A report, never a failing test: timing is not
a correctness property. The recorded figures live in
docs/results/perf_baseline_<device>.json (`record` writes them from a run; `ktile bench --all
--record FILE`).
"""
from __future__ import annotations

import datetime
import os
import re

FLOOR = 0.05
NOISE_FACTOR = 2.0
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def device_slug(device: str) -> str:
    """'NVIDIA H200' -> 'nvidia_h200' (the baseline file's name part)."""
    return re.sub(r"[^a-z0-9]+", "_", device.lower()).strip("_")


def baseline_path(device: str, root: str = ROOT) -> str:
    return os.path.join(root, "docs", "results", f"perf_baseline_{device_slug(device)}.json")


def record(op_results: dict[str, list[dict]], meta: dict) -> dict:
    """The recorded figures of a run: per op and shape, ktile's median and noise."""
    ops = {op: {row["label"]: {"ms": row["ktile"]["ms"], "noise": row["ktile"]["noise"]}
                for row in rows if "ms" in row.get("ktile", {})}
           for op, rows in op_results.items()}
    return {"device": meta.get("device"), "torch": meta.get("torch"),
            "recorded": meta.get("date") or datetime.date.today().isoformat(),
            "quick": meta.get("quick"), "ops": ops}


def allowed_change(run_noise: float, recorded_noise: float) -> float:
    return max(FLOOR, NOISE_FACTOR * (run_noise + recorded_noise))


def verdict(ms: float, noise: float, recorded: dict) -> dict:
    change = ms / recorded["ms"] - 1.0
    allowed = allowed_change(noise, recorded.get("noise", 0.0))
    kind = "regression" if change > allowed else "faster" if change < -allowed else "same"
    return {"ms": ms, "recorded_ms": recorded["ms"], "change": change, "allowed": allowed,
            "verdict": kind}


def compare(op_results: dict[str, list[dict]], baseline: dict) -> list[dict]:
    """One finding per shape timed in both (and 'new' / 'failed' for the others)."""
    findings = []
    for op, rows in op_results.items():
        recorded_op = baseline.get("ops", {}).get(op, {})
        for row in rows:
            mine, recorded = row.get("ktile", {}), recorded_op.get(row["label"])
            finding = {"op": op, "shape": row["label"]}
            if "ms" not in mine:
                finding["verdict"] = "failed"
            elif recorded is None:
                finding.update(ms=mine["ms"], verdict="new")
            else:
                finding.update(verdict(mine["ms"], mine.get("noise", 0.0), recorded))
            findings.append(finding)
    return findings


def regressions(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["verdict"] in ("regression", "failed")]


def text(findings: list[dict], baseline: dict) -> str:
    counts = {}
    for f in findings:
        counts[f["verdict"]] = counts.get(f["verdict"], 0) + 1
    lines = [f"performance gate against {baseline.get('device')} figures of "
             f"{baseline.get('recorded')}: " + ", ".join(f"{n} {k}" for k, n in
                                                         sorted(counts.items()))]
    for f in regressions(findings):
        if f["verdict"] == "failed":
            lines.append(f"  FAILED {f['op']} {f['shape']}")
            continue
        lines.append(f"  SLOWER {f['op']} {f['shape']}: {f['ms'] * 1e3:.1f} µs vs "
                     f"{f['recorded_ms'] * 1e3:.1f} µs recorded (+{100 * f['change']:.0f}%, "
                     f"noise allows {100 * f['allowed']:.0f}%)")
    return "\n".join(lines)


def suite_section(out: str, log=print) -> dict:
    """The GPU suite's report: rerun the ops and shapes this machine has recorded figures for
    (same --quick choice) and compare. Never raises on timing; a missing file is a note."""
    import json

    import torch

    from . import suite
    path = baseline_path(torch.cuda.get_device_name())
    if not os.path.exists(path):
        return {"skipped": f"no recorded figures for this device ({os.path.relpath(path, ROOT)}); "
                           f"record them with `ktile bench --all --quick --record {path}`"}
    with open(path) as f:
        baseline = json.load(f)
    op_results, _ = suite.run(sorted(baseline["ops"]), bool(baseline.get("quick")), out, log)
    findings = compare(op_results, baseline)
    return {"baseline": os.path.relpath(path, ROOT), "report": text(findings, baseline),
            "regressions": regressions(findings), "findings": findings}
