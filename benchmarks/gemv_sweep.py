"""Time every decode matmul kernel (M <= 32, b = W.t()) against cuBLAS and a copy of W.

One process on a CUDA GPU (issue #11):

    python3 benchmarks/gemv_sweep.py --json /tmp/gemv.json        # ~100 s on an H200 (~60 builds)
    python3 benchmarks/gemv_sweep.py --json /tmp/gemv_clean.json --clean-flush   # builds cached
    python3 benchmarks/gemv_sweep.py --quick --m 1 --m 8 --json /tmp/g.json      # 1 N x K

For M in {1, 2, 4, 8, 16, 32} x (N, K) in {6144 x 4096, 4096 x 4096, 24576 x 4096, 4096 x 12288}:
the routed op, every decode kernel pinned at a small grid of constants (`variants`), torch.matmul
(cuBLAS) and `dst.copy_(W)` (W's bytes read and written). Every kernel result is checked against
the fp32 product first (a wrong one is reported, never timed). Builds run first, in parallel.

Timing is ktile.bench.timing's (L2 flushed by writing 256 MiB before each sample, median of 30).
That flush leaves L2 full of dirty lines, which the timed call's reads evict: the call pays for
up to ~50 MiB of write-back besides its own bytes (on the H200, 32 MiB of W at M = 1 takes
cuBLAS 18.3 us, about (32 + 50) MiB at the copy rate plus a launch). `--clean-flush` reads a
second 256 MiB buffer after the flush, so the write-back happens before the timed call: the
figure a decode step sees after a layer that only read. `% copy` is (W + a + out bytes) / time
over the copy's rate for W's bytes under the same protocol; `x cuBLAS` is cuBLAS time / ours.
Prints the best variant per shape; `--json PATH` writes every row. Exit 1 when a result was
wrong, 2 without a CUDA GPU.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

NK = ((6144, 4096), (4096, 4096), (24576, 4096), (4096, 12288))
DECODE_M = (1, 2, 4, 8, 16, 32)
REPEATS = 30
COVER_US = 2000          # the GPU's spin before each timed call (timing.py's is 1000)


def variants(m: int) -> list[str]:
    """Pinned routes (benchmarks/matmul.py's KERNEL:NAME=VALUE specs) timed at M = m."""
    specs = []
    if m <= 8:
        specs += [f"gemv_nt:MB={m},UNROLL={u},WARPS={w},AHEAD={ahead}"
                  for u, w, ahead in ((4, 4, 0), (8, 4, 0), (4, 8, 0), (2, 4, 1), (4, 4, 1))]
        for rw, unroll, depth in ((1, 1, 2), (2, 1, 2), (1, 1, 4)):
            if rw * m <= 8:
                specs.append(f"gemv_stream_nt:MB={m},RW={rw},UNROLL={unroll},DEPTH={depth}")
    rows = 16 if m <= 16 else 32
    specs += [f"skinny_nt:ROWS={rows},BK=32,UNROLL={u}" for u in (1, 2)]
    specs += [f"skinny_wgmma_nt:BN={bn},BK=64,STAGES={s}" for bn, s in ((128, 3), (128, 4),
                                                                        (64, 4))]
    specs += ["skinny_wgmma_nt:BN=128,BK=64,STAGES=4,A_REGS=1"]
    specs += [f"wgmma_gemv_nt:BN={bn},BK={bk},STAGES={s},A_REGS={r}"
              for bn, bk, s, r in ((32, 128, 4, 0), (32, 128, 6, 0), (32, 128, 8, 0),
                                   (32, 128, 8, 1), (32, 64, 6, 0), (64, 64, 4, 0),
                                   (64, 128, 4, 0))]
    mn = 16 if m <= 16 else 32                  # swap AB: a's rows as the wgmma's N side
    specs += [f"swap_gemv_nt:MN={mn},BK={bk},STAGES={s}"
              for bk, s in ((128, 4), (128, 6), (128, 7), (64, 8))]
    return specs


def prebuild(specs: set[str], multiprocessors: int, workers: int = 8) -> dict[str, str]:
    """Build each spec's kernel for sm_90a, `workers` at a time (nvcc subprocesses), as the op
    will launch it on `multiprocessors` SMs; spec -> error for those that failed."""
    from matmul import pinned_route
    from ktile.ops.matmul import config
    from ktile.ops.matmul.op import KERNELS

    def build(spec: str):
        route = pinned_route(spec, 1, 4096)
        kernel = KERNELS[route.kernel]("bf16")
        try:
            built = kernel.build(target="sm_90a", **route.constants)
            if route.kernel == "gemv_stream_nt":         # the grid the op gives it (op.plan)
                occupancy = built.resources.occupancy
                resident = occupancy and max(1, occupancy.warps // route.constants["WARPS"])
                blocks = config.stream_blocks(route, multiprocessors, resident)
                kernel.build(target="sm_90a", **route.constants, BLOCKS=blocks)
            return spec, None
        except Exception as err:   # noqa: BLE001 - a route that cannot build is reported
            return spec, f"{type(err).__name__}: {str(err)[:300]}"
    with ThreadPoolExecutor(max_workers=workers) as pool:
        failed = dict(pool.map(build, sorted(specs)))
    for route in config.GEMV_ROUTES + config.SKINNY_WGMMA_ROUTES + [config.REDUCE]:
        KERNELS[route.kernel]("bf16").build(target="sm_90a", **route.constants)   # routed
    return {spec: err for spec, err in failed.items() if err}


def time_fn(fn, clean: bool, repeats: int = REPEATS) -> float:
    """Median device ms of fn(): ktile.bench.timing.time_call's protocol (flush, spin, events),
    with timing.clean_flush_l2 where asked and a longer spin (COVER_US: a pinned route plans each call
    on the host, which must not show in the device time)."""
    import statistics
    import torch
    from ktile.bench import timing
    for _ in range(timing.WARMUP):
        fn()
    torch.cuda.synchronize()
    pairs = []
    cover = timing._cover_cycles() * COVER_US // timing.HOST_COVER_US
    for _ in range(repeats):
        timing.clean_flush_l2() if clean else timing.flush_l2()
        torch.cuda._sleep(cover)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in pairs)


def run_spec(spec: str, m: int, n: int, a, w, clean: bool) -> dict:
    """One pinned route at one shape: checked, then timed."""
    import ktile.ops as ops
    from ktile.ops import _library as lib
    from ktile.ops.matmul.op import OP
    from matmul import check, pinned_route
    route = pinned_route(spec, m, n)
    with lib.pinned(OP.table, route):
        try:
            got = ops.matmul(a, w.t())
        except Exception as err:   # noqa: BLE001 - a route that cannot run is reported
            return {"error": f"{type(err).__name__}: {str(err)[:300]}"}
        err, tol = check(a, w, None, got, "bf16")
        if err > tol:
            return {"wrong": True, "error": f"max error {err:.4g} over tolerance {tol:.4g}"}
        return {"ms": time_fn(lambda: ops.matmul(a, w.t()), clean)}


def measure(m: int, n: int, k: int, specs: list[str], clean: bool, broken: dict) -> dict:
    import torch
    import ktile.ops as ops
    from matmul import check, inputs
    a, w, _ = inputs(m, n, k, torch.bfloat16, False)
    row = {"m": m, "n": n, "k": k, "bytes": (n * k + m * k + m * n) * 2, "kernels": {}}
    got = ops.matmul(a, w.t())
    err, tol = check(a, w, None, got, "bf16")
    row["routed_correct"] = err <= tol
    row["kernels"]["routed"] = {"ms": time_fn(lambda: ops.matmul(a, w.t()), clean)} \
        if err <= tol else {"wrong": True, "error": f"max error {err:.4g} > {tol:.4g}"}
    for spec in specs:
        row["kernels"][spec] = {"error": broken[spec]} if spec in broken else \
            run_spec(spec, m, n, a, w, clean)
    row["cublas_ms"] = time_fn(lambda: torch.matmul(a, w.t()), clean)
    dst = torch.empty_like(w)
    row["copy_w_ms"] = time_fn(lambda: dst.copy_(w), clean)
    return row


def summarize(row: dict) -> dict:
    """The best correct variant of a row, its % of W's copy rate and its speedup on cuBLAS."""
    timed = {name: r["ms"] for name, r in row["kernels"].items() if "ms" in r}
    if not timed:
        return {"best": None, "ms": math.nan, "routed_ms": None, "pct_copy": math.nan,
                "x_cublas": math.nan, "routed_x_cublas": None}
    name = min(timed, key=timed.get)
    copy_rate = 2 * row["n"] * row["k"] * 2 / row["copy_w_ms"]      # bytes / ms, read + write
    return {"best": name, "ms": timed[name], "routed_ms": timed.get("routed"),
            "pct_copy": 100 * row["bytes"] / timed[name] / copy_rate,
            "x_cublas": row["cublas_ms"] / timed[name],
            "routed_x_cublas": row["cublas_ms"] / timed["routed"] if "routed" in timed else None}


def print_table(rows: list[dict]) -> None:
    print(f"{'M':>3} {'N':>6} {'K':>6} | {'best us':>8} {'%copy':>6} {'xcuBLAS':>7} | "
          f"{'routed':>7} {'x':>5} | {'cuBLAS':>7} {'copyW':>7} | best variant")
    for row in rows:
        s = row["summary"]
        routed = s["routed_ms"] * 1e3 if s["routed_ms"] else float("nan")
        rx = s["routed_x_cublas"] or float("nan")
        print(f"{row['m']:3} {row['n']:6} {row['k']:6} | {s['ms'] * 1e3:8.1f} "
              f"{s['pct_copy']:6.1f} {s['x_cublas']:7.2f} | {routed:7.1f} {rx:5.2f} | "
              f"{row['cublas_ms'] * 1e3:7.1f} {row['copy_w_ms'] * 1e3:7.1f} | {s['best']}")
    for m in sorted({r["m"] for r in rows}):
        mine = [r["summary"] for r in rows if r["m"] == m]
        print(f"M {m:2}: geomean x cuBLAS best {geomean(s['x_cublas'] for s in mine):.2f}, "
              f"routed {geomean(s['routed_x_cublas'] for s in mine):.2f}")


def geomean(values) -> float:
    """The geometric mean of the numbers among `values` (None and NaN left out; NaN if none)."""
    xs = [v for v in values if v is not None and not math.isnan(v)]
    return math.prod(xs) ** (1 / len(xs)) if xs else math.nan


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="benchmarks/gemv_sweep.py",
                                description=__doc__.split("\n")[0])
    p.add_argument("--json", help="write every row here")
    p.add_argument("--clean-flush", action="store_true",
                   help="write L2's dirty lines back before each timed call (docstring)")
    p.add_argument("--quick", action="store_true", help="only N x K = 4096 x 4096")
    p.add_argument("--m", type=int, action="append", help="only these M (repeatable)")
    args = p.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("gemv_sweep: no CUDA GPU", file=sys.stderr)
        return 2
    started = time.time()
    ms = args.m or list(DECODE_M)
    nks = NK[1:2] if args.quick else NK
    broken = prebuild({spec for m in ms for spec in variants(m)},
                      torch.cuda.get_device_properties(0).multi_processor_count)
    print(f"built in {time.time() - started:.0f} s ({len(broken)} failed)", flush=True)
    rows, wrong = [], False
    for n, k in nks:
        for m in ms:
            row = measure(m, n, k, variants(m), args.clean_flush, broken)
            wrong |= not row["routed_correct"] or any(
                r.get("wrong") for r in row["kernels"].values())
            row["summary"] = s = summarize(row)
            rows.append(row)
            print(f"{m} x {n} x {k}: {s['best']} {s['ms'] * 1e3:.1f} us, "
                  f"{s['x_cublas']:.2f}x cuBLAS ({time.time() - started:.0f} s)", flush=True)
            if args.json:            # after every shape: a kernel that faults loses no rows
                write_json(args.json, rows, args.clean_flush)
    print_table(rows)
    print(f"total {time.time() - started:.0f} s")
    return 1 if wrong else 0


def write_json(path: str, rows: list[dict], clean: bool) -> None:
    import torch
    with open(path, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "clean_flush": clean,
                   "rows": rows}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
