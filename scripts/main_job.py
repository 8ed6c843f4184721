"""The main job: run every example on the best backend present, translate it for every target,
compile it for every target whose toolchain is installed (with its gates), and print one table.

Backends: an NVIDIA GPU (sm_90a) when torch sees one, else the CPU interpreter. Each example is
checked against its reference at all its shapes, ragged edges included. Every example is
translated for all five targets and compiled (with its resource gate) for each target whose
toolchain is installed (nvcc: sm_90a; clang-22 or hipcc: the AMD targets, gated by cocheck). The job
exits non-zero if any case mismatches, or any translation or build fails.
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

from common import buildable_targets, gpu_present, run_cases, translate_all  # noqa: E402

import ktile  # noqa: E402
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


def build_all(module, names: list[str]) -> dict[str, str]:
    out = {}
    for target in names:
        try:
            reports = [kernel.build(target, **constants).resources
                       for kernel, constants in module.KERNELS]
            out[target] = f"ok ({max(r.registers for r in reports)} regs max, no spills)"
        except ktile.KtileError as exc:
            out[target] = str(exc).splitlines()[0]
    return out


def run_example(path: str, device: str, built: list[str]) -> dict:
    name, module = load_example(path)
    row = {"example": name, "trace": trace_seconds(module)}
    print(f"[{name}] traced and verified in {row['trace'] * 1e3:.0f} ms; translating for "
          f"{len(targets.NAMES)} targets ...", flush=True)
    row["targets"] = translate_all(module)
    if built:
        print(f"[{name}] compiling for {', '.join(built)} ...", flush=True)
    row["builds"] = build_all(module, built)
    where = "the GPU" if device == "cuda" else "the interpreter"
    print(f"[{name}] running {len(module.CASES)} cases on {where} ...", flush=True)
    backend = "auto" if device == "cuda" else "interpret"
    row["cases"] = run_cases(module, backend, "sm_90a" if device == "cuda" else None, device)
    return row


def print_table(rows: list[dict], ran_on: str) -> bool:
    ok_all = True
    header = (f"{'example':<22} {'trace+verify':>12}  {'translated for':<38} {'compiled for':<38} "
              f"{'ran on':<12} result")
    print("\n" + header + "\n" + "-" * len(header))
    for row in rows:
        translated = [t for t, status in row["targets"].items() if status == "ok"]
        cases = row["cases"]
        passed = sum(c.ok for c in cases)
        built = [t for t, status in row["builds"].items() if status.startswith("ok")]
        ok = passed == len(cases) and len(translated) == len(targets.NAMES) and \
            len(built) == len(row["builds"])
        ok_all &= ok
        worst = max((c.error for c in cases), default=0.0)
        result = f"{passed}/{len(cases)} shapes match (max err {worst:.2g})"
        print(f"{row['example']:<22} {row['trace'] * 1e3:>9.0f} ms  {' '.join(translated):<38} "
              f"{' '.join(built) or '-':<38} {ran_on:<12} {result}")
        for target, status in [*row["targets"].items(), *row["builds"].items()]:
            if not status.startswith("ok"):
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
    device = "cuda" if gpu_present() else "cpu"
    built = buildable_targets()
    rows = [run_example(p, device, built) for p in paths]
    ran_on = "GPU (sm_90a)" if device == "cuda" else "interpreter"
    ok = print_table(rows, ran_on)
    print(f"\n{len(rows)} examples in {time.perf_counter() - start:.1f} s; ran on: {ran_on}; "
          f"compiled for: {', '.join(built) or 'nothing (no toolchain found)'}. AMD code objects "
          f"are compiled and checked here, never run on AMD hardware.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
