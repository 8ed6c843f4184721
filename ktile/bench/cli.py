"""`ktile bench`: time ktile's ops on this CUDA GPU against torch, torch.compile and Triton.

    ktile bench rms_norm [softmax ...] [--quick] [--out DIR] [--json]
    ktile bench --all [--quick] [--out DIR] [--record FILE] [--gate FILE]   (the scoreboard)
    ktile bench --plot-from DIR                                             (no GPU needed)

Writes DIR/<op>.json, DIR/<op>.png, DIR/summary.json and DIR/summary.md (the table for
docs/performance.md) and prints the table last. Exit codes: 0 ok; 1 failed (an alternative's
output differed from ktile's, or ktile failed at a swept shape); 2 unusable input (an unknown
op, no op named, no CUDA GPU). `--json` prints one JSON object last.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

DEFAULT_OUT = "ktile_bench"


def parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    p.add_argument("ops", nargs="*", help="op names (ktile.ops functions); see --list")
    p.add_argument("--all", action="store_true", help="every op: the scoreboard")
    p.add_argument("--only", default="", help="comma-separated op names (as positional ops)")
    p.add_argument("--quick", action="store_true", help="the quick shape subset (minutes)")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"result folder (default {DEFAULT_OUT})")
    p.add_argument("--skip", default="", help="alternatives not to run: torch.compile, triton "
                   "(comma-separated; saves their compile time)")
    p.add_argument("--json", action="store_true", help="print one JSON object last")
    p.add_argument("--list", action="store_true", help="print the op names and exit")
    p.add_argument("--plot-from", metavar="PATH", help="redraw PNGs and summary.md from JSON")
    p.add_argument("--record", metavar="FILE", help="write this run's times as the figures "
                   "the performance gate compares against")
    p.add_argument("--gate", metavar="FILE", help="compare with recorded figures (default: "
                   "docs/results/perf_baseline_<device>.json when it exists)")
    return p


def finish(result: dict, as_json: bool, code: int) -> int:
    if code == 2:
        print(f"ktile bench: {result['error']}", file=sys.stderr)
    if as_json:
        print(json.dumps({"ok": code == 0, "exit_code": code, **result}, default=str))
    return code


def unusable(message: str, as_json: bool) -> int:
    return finish({"error": message}, as_json, 2)


def chosen_ops(args) -> tuple[list[str], str | None]:
    """The op names asked for, or (_, why the request is unusable)."""
    from .cases import benches
    known = list(benches())
    names = list(args.ops) + [n for n in args.only.split(",") if n]
    if args.all:
        names = names or known
    if not names:
        return [], f"name an op or pass --all; the ops: {', '.join(known)}"
    unknown = [n for n in names if n not in known]
    if unknown:
        return [], (f"unknown op {', '.join(map(repr, unknown))}; the ops with a benchmark: "
                    f"{', '.join(known)}")
    return names, None


def gpu_missing() -> str | None:
    try:
        import torch
    except ImportError:
        return "`ktile bench` needs torch with CUDA (torch is not installed)"
    if not torch.cuda.is_available():
        return ("`ktile bench` needs a CUDA GPU; none is visible here (torch.cuda.is_available() "
                "is False). Run it on an NVIDIA machine, or replot results with --plot-from DIR")
    return None


def replot_only(args) -> int:
    from . import report, suite
    if not os.path.exists(args.plot_from):
        return unusable(f"--plot-from {args.plot_from!r} does not exist; pass a results folder "
                        f"(with <op>.json files) or one <op>.json", args.json)
    op_results, _ = suite.replot(args.plot_from)
    entries = report.summarize(op_results)
    print(report.text_table(entries))
    return finish({"ops": list(op_results), "summary": entries}, args.json, 0)


def gate_report(args, op_results: dict, run_meta: dict) -> dict | None:
    from . import gate
    path = args.gate or gate.baseline_path(run_meta["device"])
    if not os.path.exists(path):
        return None
    with open(path) as f:
        baseline = json.load(f)
    findings = gate.compare(op_results, baseline)
    print(gate.text(findings, baseline))
    return {"baseline": path, "regressions": gate.regressions(findings)}


def main(argv, prog: str = "ktile bench") -> int:
    args = parser(prog).parse_args(argv)
    if args.plot_from:
        return replot_only(args)
    names, problem = chosen_ops(args) if not args.list else ([], None)
    if args.list:
        from .cases import benches
        print("\n".join(benches()))
        return 0
    if problem:
        return unusable(problem, args.json)
    skip = tuple(a for a in args.skip.split(",") if a)
    if set(skip) - {"torch.compile", "triton"}:
        return unusable(f"--skip {args.skip!r}: only torch.compile and triton can be skipped "
                        f"(torch eager is the reference)", args.json)
    problem = gpu_missing()
    if problem:
        return unusable(problem, args.json)
    from . import gate, report, runner, suite
    op_results, run_meta = suite.run(names, args.quick, args.out, skip=skip)
    entries = suite.write_summary(args.out, op_results, run_meta)
    if args.record:
        with open(args.record, "w") as f:
            json.dump(gate.record(op_results, run_meta), f, indent=1)
    gated = gate_report(args, op_results, run_meta)
    mismatched = {op: runner.mismatches(rows) for op, rows in op_results.items()}
    failed = [f"{e['op']} {e['shape']}" for e in entries if e["ktile_failed"]]
    print(report.text_table(entries))
    bad = [f"{op} {m}" for op, ms in mismatched.items() for m in ms]
    for line in bad:
        print(f"MISMATCH {line} (its output differs from ktile's)")
    for line in failed:
        print(f"KTILE FAILED {line}")
    print(f"{run_meta['seconds']:.0f} s; results in {args.out}")
    result = {"ops": names, "out": args.out, "meta": run_meta, "mismatches": bad,
              "ktile_failed": failed, "summary": entries, "gate": gated}
    return finish(result, args.json, 1 if bad or failed else 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
