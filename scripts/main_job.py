"""The main job: run every example on the best backend present, translate it for every target,
compile it for every target whose toolchain is installed (with its gates), and print one table.

Backends: an NVIDIA GPU (sm_90a) when torch sees one, else the CPU interpreter. Each example is
checked against its reference at all its shapes, ragged edges included. Every example is
translated for all five targets and compiled (with its resource gate) for each target whose
toolchain is installed (nvcc: sm_90a; clang-22 or hipcc: the AMD targets, gated by cocheck).
Without a GPU, and with a host clang++-22, every example also runs at all its shapes under wave
emulation of gfx1100 and gfx950 (ktile.emulate: the generated AMD C++ on this CPU), in worker
processes beside the main loop. The job exits non-zero if any case mismatches, or any
translation, build or emulated run fails.
"""
from __future__ import annotations

import argparse
import glob
import importlib.util
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, EXAMPLES)
sys.path.insert(0, ROOT)

from common import (CaseResult, buildable_targets, gpu_present, run_cases,  # noqa: E402
                    translate_all)

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


EMULATED = ("gfx1100", "gfx950")    # wave32 RDNA3 and wave64 CDNA4 with its global->LDS DMA


def emulation_targets(device: str) -> tuple[str, ...]:
    """The targets every example is also emulated on: none beside a GPU, or without clang++."""
    if device != "cpu":
        return ()
    from ktile.emulate import find_host_compiler
    try:
        find_host_compiler()
    except ktile.KtileError:
        return ()
    return EMULATED


def emulate_example(path: str, target: str) -> list[CaseResult]:
    """Every case of one example under wave emulation of `target` (in a worker process)."""
    _, module = load_example(path)
    return run_cases(module, "emulate", target, "cpu")


def start_emulation(paths: list[str], names: tuple[str, ...]) -> tuple[object, dict]:
    """Worker processes emulating every example on `names`, on the cores the main loop leaves
    (it runs on one): (the pool, (path, target) -> its future)."""
    if not names:
        return None, {}
    pool = ProcessPoolExecutor(max_workers=max(1, (os.cpu_count() or 2) - 1),
                               mp_context=multiprocessing.get_context("spawn"))
    return pool, {(p, t): pool.submit(emulate_example, p, t) for p in paths for t in names}


def emulated_cases(future) -> list[CaseResult]:
    try:
        return future.result()
    except Exception as exc:   # the worker died, or the run raised past run_cases
        return [CaseResult("(every case)", False, float("nan"), 0.0, 0.0,
                           f"{type(exc).__name__}: {exc}")]


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
    emulated_on = " ".join(rows[0]["emulated"]) if rows else ""
    header = (f"{'example':<22} {'trace+verify':>12}  {'translated for':<38} {'compiled for':<38} "
              f"{'ran on':<12} {f'emulated {emulated_on}'.strip():<24} result")
    print("\n" + header + "\n" + "-" * len(header))
    for row in rows:
        translated = [t for t, status in row["targets"].items() if status == "ok"]
        cases = row["cases"]
        passed = sum(c.ok for c in cases)
        built = [t for t, status in row["builds"].items() if status.startswith("ok")]
        emulated = row["emulated"]
        ok = passed == len(cases) and len(translated) == len(targets.NAMES) and \
            len(built) == len(row["builds"]) and \
            all(c.ok for runs in emulated.values() for c in runs)
        ok_all &= ok
        worst = max((c.error for c in cases), default=0.0)
        result = f"{passed}/{len(cases)} shapes match (max err {worst:.2g})"
        emulation = " ".join(f"{sum(c.ok for c in runs)}/{len(runs)}" for runs in emulated.values())
        print(f"{row['example']:<22} {row['trace'] * 1e3:>9.0f} ms  {' '.join(translated):<38} "
              f"{' '.join(built) or '-':<38} {ran_on:<12} {emulation or '-':<24} {result}")
        for target, status in [*row["targets"].items(), *row["builds"].items()]:
            if not status.startswith("ok"):
                print(f"    {target}: {status}")
        failing = [("", c) for c in cases] + \
            [(f"emulated {t} ", c) for t, runs in emulated.items() for c in runs]
        for where, case in failing:
            if not case.ok:
                print(f"    {where}{case.case}: error {case.error:.3g} > tol {case.tolerance:.3g} "
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
    emulated = emulation_targets(device)
    pool, futures = start_emulation(paths, emulated)
    rows = [run_example(p, device, built) for p in paths]
    if emulated:
        print(f"collecting the emulated runs on {', '.join(emulated)} ...", flush=True)
    for path, row in zip(paths, rows):
        row["emulated"] = {t: emulated_cases(futures[(path, t)]) for t in emulated}
    if pool is not None:
        pool.shutdown()
    ran_on = "GPU (sm_90a)" if device == "cuda" else "interpreter"
    ok = print_table(rows, ran_on)
    emulation = (f"emulated (wave emulation on this CPU, every shape): {' '.join(emulated)}"
                 if emulated else "not emulated (a GPU ran them, or no clang++-22)")
    print(f"\n{len(rows)} examples in {time.perf_counter() - start:.1f} s; ran on: {ran_on}; "
          f"compiled for: {', '.join(built) or 'nothing (no toolchain found)'}; {emulation}. AMD "
          f"code objects are compiled, checked and emulated here, never run on AMD hardware.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
