"""The same kernel source traced, verified and translated by ktile and by hk-dsl 0.8.0, in the
same minute on this machine's CPU (issue #10's comparison, without trusting numbers taken on
another day).

The kernels are benchmarks/hk_idioms.py: hk-dsl idioms written here in hk's spelling, which
ktile traces under `import ktile as hk`. Each is re-traced with its caches cleared (warm: the
imports and the control-flow rewrite done), CPU time, min and median of N.

    .venv/bin/python benchmarks/trace_vs_hk.py --hk-python PY --hk-path DIR [-n 25] [--json F]

PY is a CPython 3.12 (or 3.10) with numpy, DIR the unpacked hk-dsl wheel (`pip download
--no-deps hk-dsl==0.8.0`, then unzip): hk-dsl's wheel pins its interpreter, so it runs in a
process of its own. Without --hk-python only ktile is timed.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KERNELS = (("add", "gfx1100"), ("gemm", "gfx1100"), ("pingpong_gemm", "gfx950"),
           ("rmsnorm", "gfx1100"), ("softmax", "gfx1100"))

CHILD = r"""
import importlib.util, json, os, sys, time
impl, n = sys.argv[1], int(sys.argv[2])
os.environ["HK_IMPL"] = impl
spec = importlib.util.spec_from_file_location("hk_idioms", sys.argv[3])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
out = {}
for name, arch in json.loads(sys.argv[4]):
    k = m.DECORATED[name]
    def once():
        if impl == "ktile":
            k._traces.clear(); t0 = time.process_time(); k.source(arch)
        else:
            k._arch = arch
            for c in ("_ir_cache", "_mod_cache", "_spec_cache", "_build_cache"):
                getattr(k, c).clear()
            t0 = time.process_time(); k.source()
        return time.process_time() - t0
    once()
    xs = sorted(once() for _ in range(n))
    out[name] = {"target": arch, "min_ms": xs[0] * 1e3, "median_ms": xs[len(xs) // 2] * 1e3}
print(json.dumps(out))
"""


def timed(impl: str, python: str, path: str, n: int) -> dict:
    env = dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")
    argv = [python, "-c", CHILD, impl, str(n), os.path.join(HERE, "hk_idioms.py"),
            json.dumps(KERNELS)]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hk-python", help="a Python that can import hk-dsl 0.8.0")
    parser.add_argument("--hk-path", default="", help="where hk-dsl's package lies")
    parser.add_argument("-n", type=int, default=25)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    rows = {"ktile": timed("ktile", sys.executable, ROOT, args.n)}
    if args.hk_python:
        rows["hk"] = timed("hk", args.hk_python, args.hk_path, args.n)
    print(f"{'kernel':14s} {'target':8s} " + "  ".join(f"{k + ' min/med ms':>22s}" for k in rows))
    for name, arch in KERNELS:
        cells = [f"{r[name]['min_ms']:10.2f} {r[name]['median_ms']:10.2f}" for r in rows.values()]
        print(f"{name:14s} {arch:8s} " + "  ".join(f"{c:>22s}" for c in cells))
    print(f"load average {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu_ms": rows, "loadavg": os.getloadavg()[0]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
