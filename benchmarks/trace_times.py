"""`import ktile` time, and cold and warm trace+verify+translate times of examples 01, 02 and
04, on this machine's CPU.

import: a fresh Python process imports ktile (goal: 150 ms; the IR library and numpy load on
      first trace, as tests/tier0/test_import.py checks);
cold: a fresh Python process imports ktile, traces the kernel, runs the pass pipeline and
      translates it to C++ (xDSL's import included, as a user's first call pays it);
warm: the same in a process that has already done it once for another kernel (imports and
      the control-flow rewrite done), trace cache cleared.
Each is the median of N runs (default 5). Prints a table and writes JSON with --json PATH."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))
EXAMPLES = ("01_vector_add", "02_rmsnorm", "04_gemm")

COLD = """
import sys, time
sys.path[:0] = [{root!r}, {tests!r}, {examples!r}]
t0 = time.perf_counter()
import ktile
from examples_index import load
module = load({name!r})
for kernel, constants in module.KERNELS:
    kernel.source("gfx1100", **constants)
print(time.perf_counter() - t0)
"""


IMPORT = "import time; t0 = time.perf_counter(); import ktile; print(time.perf_counter() - t0)"
IMPORT_GOAL_MS = 150


def import_seconds() -> float:
    out = subprocess.run([sys.executable, "-c", IMPORT], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    return float(out.stdout.strip().splitlines()[-1])


def cold_seconds(name: str) -> float:
    code = COLD.format(root=ROOT, tests=os.path.join(ROOT, "tests"),
                       examples=os.path.join(ROOT, "examples"), name=name)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def warm_seconds(name: str) -> float:
    from examples_index import load
    module = load(name)
    for kernel, constants in module.KERNELS:
        kernel.source("gfx1100", **constants)        # imports, rewrite
    start = time.perf_counter()
    for kernel, constants in module.KERNELS:
        kernel._traces.clear()
        kernel.source("gfx1100", **constants)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5)
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args()
    import_ms = statistics.median(import_seconds() for _ in range(args.n)) * 1e3
    print(f"import ktile: {import_ms:.1f} ms, median of {args.n} (goal {IMPORT_GOAL_MS} ms)")
    rows = {"import": {"ms": import_ms, "goal_ms": IMPORT_GOAL_MS}}
    for name in EXAMPLES:
        cold = statistics.median(cold_seconds(name) for _ in range(args.n))
        warm = statistics.median(warm_seconds(name) for _ in range(args.n))
        rows[name] = {"cold_ms": cold * 1e3, "warm_ms": warm * 1e3}
    print(f"{'example':<16} {'cold (ms)':>10} {'warm (ms)':>10}   median of {args.n}, "
          f"trace+verify+translate for gfx1100, CPU of this machine")
    for name in EXAMPLES:
        r = rows[name]
        print(f"{name:<16} {r['cold_ms']:>10.1f} {r['warm_ms']:>10.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
