"""Trace + verify + translate times of examples 01, 02 and 04 on this machine's CPU, beside
issue #10's reference numbers (ktile before, and hk-dsl on the issue's machine).

import:            a fresh Python process runs `import ktile` (xDSL's import included);
import+first:      a fresh process imports ktile and traces, verifies and translates the
                   example's first kernel for gfx1100: what a user's first call pays;
cold (per kernel): that first trace+verify+translate alone, in the fresh process (the
                   control-flow rewrite, the first use of each op class, target tables);
warm (per kernel): the same again in a process that has done it once (imports and the
                   rewrite done), the trace cache cleared.

The machine may be shared: each number is the minimum of N runs (default 15 warm, 5 cold),
in wall time and in the process's CPU time (which another process's load disturbs less);
the load average is printed with them. Prints a table; --json PATH writes the numbers.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))
EXAMPLES = ("01_vector_add", "02_rmsnorm", "04_gemm")
TARGET = "gfx1100"

# issue #10, one machine, one minute: ktile before this work and hk-dsl (warm trace + verify +
# translate; import; import + first trace), in ms
REFERENCE = {
    "01_vector_add:add": {"ktile_warm_ms": 13.3, "hk_warm_ms": 2.46},
    "04_gemm:gemm_wgmma": {"ktile_warm_ms": 25.5, "hk_warm_ms": 5.2},   # the shared-memory GEMM
    "import": {"ktile_ms": 57.0, "hk_ms": 533.0},
    "import+first": {"ktile_ms": 643.0, "hk_ms": 558.0},
}

FRESH = """
import sys, time
sys.path[:0] = [{root!r}, {tests!r}, {examples!r}]
w0, c0 = time.perf_counter(), time.process_time()
import ktile
w1, c1 = time.perf_counter(), time.process_time()
from examples_index import load
module = load({name!r})
times = []
for kernel, constants in module.KERNELS[:{kernels}]:
    w, c = time.perf_counter(), time.process_time()
    kernel.source({target!r}, **constants)
    times.append((time.perf_counter() - w, time.process_time() - c))
w2, c2 = time.perf_counter(), time.process_time()
print(repr({{"import": (w1 - w0, c1 - c0), "import+first": (w1 - w0 + times[0][0],
            c1 - c0 + times[0][1]), "cold": times}}))
"""


def fresh_process(name: str, kernels: int = 99) -> dict:
    """One fresh interpreter: its import time and each kernel's first trace (wall, CPU)."""
    code = FRESH.format(root=ROOT, tests=os.path.join(ROOT, "tests"),
                        examples=os.path.join(ROOT, "examples"), name=name, kernels=kernels,
                        target=TARGET)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    import ast
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def warm_times(kernel, constants: dict, runs: int) -> tuple[float, float]:
    """(wall, CPU) minimum over `runs` of trace + verify + translate, trace cache cleared."""
    kernel.source(TARGET, **constants)          # imports, rewrite, first use of each op class
    best_wall = best_cpu = float("inf")
    for _ in range(runs):
        kernel._traces.clear()
        wall, cpu = time.perf_counter(), time.process_time()
        kernel.source(TARGET, **constants)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    kernel._traces.clear()
    return best_wall, best_cpu


def measure(warm_runs: int, cold_runs: int) -> dict:
    from examples_index import load
    rows: dict[str, dict] = {}
    firsts = []
    for name in EXAMPLES:
        fresh = [fresh_process(name) for _ in range(cold_runs)]
        firsts += fresh
        module = load(name)
        for k, (kernel, constants) in enumerate(module.KERNELS):
            wall, cpu = warm_times(kernel, constants, warm_runs)
            cold = [f["cold"][k] for f in fresh]
            rows[f"{name}:{kernel.name}"] = {
                "warm_ms": wall * 1e3, "warm_cpu_ms": cpu * 1e3,
                "cold_ms": min(c[0] for c in cold) * 1e3,
                "cold_cpu_ms": min(c[1] for c in cold) * 1e3,
                **REFERENCE.get(f"{name}:{kernel.name}", {})}
    for what in ("import", "import+first"):
        rows[what] = {"ms": min(f[what][0] for f in firsts) * 1e3,
                      "cpu_ms": min(f[what][1] for f in firsts) * 1e3, **REFERENCE[what]}
    return rows


def print_table(rows: dict, warm_runs: int, cold_runs: int) -> None:
    print(f"trace + verify + translate for {TARGET}, CPU of this machine (load average "
          f"{os.getloadavg()[0]:.1f}); min of {warm_runs} warm / {cold_runs} cold runs; ms")
    print(f"{'kernel':<32} {'warm':>7} {'(cpu)':>7} {'cold':>7} {'(cpu)':>7}   issue #10: "
          f"ktile before / hk-dsl")
    for key, r in rows.items():
        if "warm_ms" not in r:
            continue
        ref = (f"{r['ktile_warm_ms']:.1f} / {r['hk_warm_ms']:.2f}" if "hk_warm_ms" in r else "")
        print(f"{key:<32} {r['warm_ms']:>7.2f} {r['warm_cpu_ms']:>7.2f} {r['cold_ms']:>7.1f} "
              f"{r['cold_cpu_ms']:>7.1f}   {ref}")
    for what in ("import", "import+first"):
        r = rows[what]
        print(f"{what:<32} {r['ms']:>7.1f} {r['cpu_ms']:>7.1f} {'':>15}   "
              f"{r['ktile_ms']:.0f} / {r['hk_ms']:.0f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15, help="warm runs per kernel (minimum)")
    parser.add_argument("--cold", type=int, default=5, help="fresh processes per example")
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args()
    rows = measure(args.n, args.cold)
    print_table(rows, args.n, args.cold)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"target": TARGET, "load_average": os.getloadavg()[0],
                       "warm_runs": args.n, "cold_runs": args.cold, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
