"""Compile time of every example kernel for every target whose toolchain is installed here.

Each build runs into a fresh, empty build cache (a temporary KTILE_CACHE_DIR), so the time is
a real compile: the device compile (clang++-22 / hipcc for the AMD targets, nvcc for sm_90a)
plus its gate (cocheck on AMD code objects, ptxas' resource report on cubins) and, on AMD,
the quality report's disassembly. Tracing and translation are done before the clock starts
(`benchmarks/trace_times.py` times those). One build at a time.

    python benchmarks/compile_times.py [--targets gfx1100,sm_90a] [--json PATH]

Prints a table (kernel × target, seconds) and writes JSON with --json."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests"), os.path.join(ROOT, "examples")]

from examples_index import EXAMPLE_NAMES, load  # noqa: E402


def kernel_label(kernel, constants: dict, defaults: dict) -> str:
    """The kernel's name, with the constants that differ from its defaults."""
    changed = {k: v for k, v in constants.items() if defaults.get(k) != v}
    return kernel.name + "".join(f" {k}={v}" for k, v in changed.items())


def time_builds(targets: list[str]) -> dict[str, dict[str, float | str]]:
    rows: dict[str, dict[str, float | str]] = {}
    for name in EXAMPLE_NAMES:
        module = load(name)
        for kernel, constants in module.KERNELS:
            defaults = {k: default for k, (_, default) in kernel.constexprs.items()}
            label = kernel_label(kernel, constants, defaults)
            row = rows.setdefault(label, {})
            for target in targets:
                kernel.source(target, **constants)            # traced outside the clock
                with tempfile.TemporaryDirectory(prefix="ktile-compile-time-") as cache:
                    os.environ["KTILE_CACHE_DIR"] = cache
                    start = time.perf_counter()
                    try:
                        kernel.build(target, **constants)
                        row[target] = time.perf_counter() - start
                    except Exception as exc:  # noqa: BLE001 - the table shows the failure
                        row[target] = f"failed: {str(exc).splitlines()[0][:120]}"
                    finally:
                        del os.environ["KTILE_CACHE_DIR"]
            print(f"  {label}: "
                  + ", ".join(f"{t} {_cell(v)}" for t, v in row.items()), file=sys.stderr)
    return rows


def _cell(value) -> str:
    return f"{value:.2f}s" if isinstance(value, float) else "FAILED"


def main() -> int:
    from common import buildable_targets  # examples/common.py
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", help="comma-separated (default: every buildable target)")
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args()
    targets = args.targets.split(",") if args.targets else buildable_targets()
    if not targets:
        print("no toolchain for any target is installed here", file=sys.stderr)
        return 1
    rows = time_builds(targets)
    width = max(len(k) for k in rows) + 2
    print(f"{'kernel':<{width}}" + "".join(f"{t:>10}" for t in targets))
    for label, row in rows.items():
        print(f"{label:<{width}}" + "".join(f"{_cell(row.get(t, '')):>10}" for t in targets))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"targets": targets, "seconds": rows}, f, indent=1)
    failed = any(isinstance(v, str) for row in rows.values() for v in row.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
