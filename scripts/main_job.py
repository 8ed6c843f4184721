"""The main job: run every example on the best backend present, translate it for every target,
and print one table.

Backends: the CPU interpreter here (no GPU backend is built into ktile yet). Each example is
checked against its reference at all its shapes, ragged edges included; the job exits non-zero
if any case mismatches or any translation fails.
"""
from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, EXAMPLES)
sys.path.insert(0, ROOT)

from common import run_cases, translate_all  # noqa: E402

from ktile import targets  # noqa: E402


def load_example(path: str):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return name, module


def trace_seconds(module) -> float:
    start = time.perf_counter()
    for kernel, constants in module.KERNELS:
        kernel.trace(**constants)
    return time.perf_counter() - start


def run_example(path: str) -> dict:
    name, module = load_example(path)
    row = {"example": name, "trace": trace_seconds(module)}
    print(f"[{name}] traced and verified in {row['trace'] * 1e3:.0f} ms; translating for "
          f"{len(targets.NAMES)} targets ...", flush=True)
    row["targets"] = translate_all(module)
    print(f"[{name}] running {len(module.CASES)} cases on the interpreter ...", flush=True)
    row["cases"] = run_cases(module, "interpret")
    return row


def print_table(rows: list[dict]) -> bool:
    ok_all = True
    header = f"{'example':<24} {'trace+verify':>12}  {'translated for':<40} {'ran on':<12} result"
    print("\n" + header + "\n" + "-" * len(header))
    for row in rows:
        translated = [t for t, status in row["targets"].items() if status == "ok"]
        cases = row["cases"]
        passed = sum(c.ok for c in cases)
        ok = passed == len(cases) and len(translated) == len(targets.NAMES)
        ok_all &= ok
        worst = max((c.error for c in cases), default=0.0)
        result = f"{passed}/{len(cases)} shapes match (max err {worst:.2g})"
        print(f"{row['example']:<24} {row['trace'] * 1e3:>9.0f} ms  {' '.join(translated):<40} "
              f"{'interpreter':<12} {result}")
        for target, status in row["targets"].items():
            if status != "ok":
                print(f"    {target}: {status}")
        for case in cases:
            if not case.ok:
                print(f"    {case.case}: error {case.error:.3g} > tol {case.tolerance:.3g} "
                      f"{case.detail}")
    return ok_all


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--only", help="run only examples whose name contains this")
    args = parser.parse_args()
    paths = sorted(glob.glob(os.path.join(EXAMPLES, "[0-9][0-9]_*.py")))
    if args.only:
        paths = [p for p in paths if args.only in os.path.basename(p)]
    start = time.perf_counter()
    import ktile.codegen, ktile.interpret, ktile.passes  # noqa: E401,F401  (imports not timed per example)
    rows = [run_example(p) for p in paths]
    ok = print_table(rows)
    print(f"\n{len(rows)} examples in {time.perf_counter() - start:.1f} s; backend: CPU "
          f"interpreter (no GPU backend yet); AMD targets are translated, never run on AMD "
          f"hardware here.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
