"""Validate the op library: every shipped op at a typical shape against torch, correctness then
speed, one table.

    python examples/validate.py            # on the GPU when there is one, else the interpreter
    python examples/validate.py --cpu      # the interpreter at small shapes (no timing)
    python examples/validate.py --only rms_norm,softmax

The shapes, inputs, torch formulas and tolerances are the op benchmark's (ktile/bench/): on a
GPU each op runs at the middle shape of its quick sweep (4096 rows, 64M elements, ...) and is
timed with the benchmark's method (L2 flushed, median); on the CPU each runs at a few rows of
narrow data on the interpreter, checked only. The compute-bound ops (matmul, scaled_mm, AWQ,
MoE, attention), which their own benchmarks sweep, come from ktile/bench/bench_compute.py: one
typical shape each, a tiny one on the CPU, the op's reference tolerance. scaled_dot_product_
attention is sm_90a's only: on the CPU it runs with KTILE_TARGET=sm_90a, else it is reported
as not on this target. Exits 1 when an op differs from torch or fails.
For every alternative (torch.compile, Triton) and every shape: `ktile bench --all`.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from ktile.bench import bench_compute, cases, runner, timing  # noqa: E402


def benches() -> dict:
    """Every op validated: the op benchmark's benches, then the compute-bound ones."""
    return {**cases.benches(), **{b.name: b for b in bench_compute.BENCHES}}


def validate(bench, on_gpu: bool) -> dict:
    """One op: its check against torch, then (on a GPU) both times."""
    if on_gpu:
        shape = cases.typical(bench)
    else:
        shape = bench.extra.get("small") or cases.small(bench)
    row = {"op": bench.name, "shape": shape.label}
    targets = bench.extra.get("targets")
    if targets and not on_gpu and os.environ.get("KTILE_TARGET") not in targets:
        return {**row, "skipped": f"not on this target (KTILE_TARGET={'/'.join(targets)})"}
    inputs = bench.make(shape)
    try:
        want = bench.ktile(*runner._fresh(bench, inputs))
        got = bench.torch(*runner._fresh(bench, inputs))
    except Exception as err:   # a refused shape or a failing kernel: reported, not fatal
        return {**row, "failed": f"{type(err).__name__}: {str(err).splitlines()[0]}"[:120]}
    row["check"] = runner.check(bench, "torch", got, want)
    if on_gpu:
        row["ktile_ms"] = timing.time_call(lambda: bench.ktile(*inputs)).ms
        row["torch_ms"] = timing.time_call(lambda: bench.torch(*inputs)).ms
    return row


def verdict(row: dict) -> str:
    if "skipped" in row:
        return "skipped"
    if "failed" in row:
        return "FAILED"
    check = row["check"]
    if not check["compared"]:
        return "ran (other RNG)"
    return f"{'ok' if check['ok'] else 'WRONG'} {check['error']:.1e}/{check['tolerance']:.0e}"


def print_table(rows: list[dict], on_gpu: bool) -> None:
    print(f"{'op':<28} {'shape':<18} {'vs torch':<22} {'ktile µs':>9} {'torch µs':>9} "
          f"{'speed':>6}")
    for row in rows:
        timed = ""
        if on_gpu and "ktile_ms" in row:
            timed = (f"{row['ktile_ms'] * 1e3:>9.1f} {row['torch_ms'] * 1e3:>9.1f} "
                     f"{row['torch_ms'] / row['ktile_ms']:>5.2f}x")
        print(f"{row['op']:<28} {row['shape']:<18} {verdict(row):<22} {timed}")
        if "failed" in row or "skipped" in row:
            print(f"    {row.get('failed') or row['skipped']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", action="store_true", help="the interpreter even with a GPU")
    parser.add_argument("--only", default="", help="comma-separated op names")
    args = parser.parse_args()
    on_gpu = torch.cuda.is_available() and not args.cpu
    cases.DEVICE[0] = "cuda" if on_gpu else "cpu"
    known = benches()
    names = [n for n in args.only.split(",") if n] or list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f"unknown ops {unknown}; the ops: {', '.join(known)}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    rows = [validate(known[name], on_gpu) for name in names]
    where = torch.cuda.get_device_name() if on_gpu else "the CPU interpreter (small shapes)"
    print(f"ktile.ops on {where}, {time.perf_counter() - started:.0f} s")
    print_table(rows, on_gpu)
    bad = [r["op"] for r in rows if "failed" in r or r.get("check", {}).get("ok") is False]
    skipped = [r["op"] for r in rows if "skipped" in r]
    print(f"{len(rows) - len(bad) - len(skipped)} of {len(rows)} ops match torch" +
          (f"; not: {', '.join(bad)}" if bad else "") +
          (f"; skipped: {', '.join(skipped)}" if skipped else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
