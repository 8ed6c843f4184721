"""The GPU suite (tier 3): one run on an NVIDIA GPU machine that builds every example for
sm_90a, checks each against its reference at all its shapes, replays each from a CUDA graph,
times each against torch in the same process, measures the issue's performance criteria, runs
the tier-3 pytest files, and runs compute-sanitizer memcheck and racecheck on a small shape of
each; every example's cases run 10 times and compared bitwise (determinism), and
02's `rmsnorm_persistent` is swept over the (WIDTH, COLS) a caller can pass. Writes
`$OUT/gpu_suite.json` (or --json PATH) and prints a short table last.

    python3 scripts/gpu_suite.py [--only NAME] [--skip-sanitizer] [--json PATH]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for sub in ("", "examples", "tests", "benchmarks"):
    sys.path.insert(0, os.path.join(ROOT, sub))

TARGET = "sm_90a"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def cuda_time_ms(torch, step, warmup: int = 3, repeat: int = 10, batch: int = 10) -> float:
    """Device time per call: the median over `repeat` samples, each `batch` back-to-back calls
    between two CUDA events, queued behind a short GPU sleep. One call between two events on
    an idle GPU would also count the host's time to launch it (the GPU waits for the launch):
    7-10 us on this host, a tenth of a 100-us kernel. Queued behind the sleep, the events and
    launches all reach the GPU before it is free, so only device time is measured."""
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    sleep = getattr(torch.cuda, "_sleep", None)
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if sleep is not None:
            sleep(2_000_000)               # ~1 ms of GPU clock cycles: time to queue the batch
        start.record()
        for _ in range(batch):
            step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / batch)
    return statistics.median(times)


def copy_bandwidth(torch) -> float:
    """Device-to-device copy bandwidth in GB/s (bytes read + written), 2 GiB buffers."""
    src = torch.empty(1 << 30, dtype=torch.bfloat16, device="cuda").normal_()
    dst = torch.empty_like(src)
    ms = cuda_time_ms(torch, lambda: dst.copy_(src))
    return 2 * src.numel() * 2 / ms / 1e6


def phase(results: dict, key: str, fn) -> None:
    try:
        results[key] = fn()
    except Exception as exc:  # the suite records every failure and goes on
        results[key] = {"error": f"{type(exc).__name__}: {exc}",
                        "trace": traceback.format_exc(limit=6)}
        log(f"{key}: FAILED {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")


def build_all(module) -> list[dict]:
    out = []
    for kernel, constants in module.KERNELS:
        start = time.perf_counter()
        build = kernel.build(TARGET, **constants)
        r = build.resources
        out.append({"kernel": kernel.name, "constants": {k: repr(v) for k, v in constants.items()},
                    "seconds": time.perf_counter() - start, "registers": r.registers,
                    "spill_bytes": r.spill_stores + r.spill_loads, "stack_bytes": r.stack_bytes,
                    "shared_bytes": r.shared_bytes})
    return out


def check_all(module) -> list[dict]:
    out = []
    for case in module.CASES:
        err, tol = module.run_case(case, backend="auto", target=TARGET, device="cuda")
        out.append({"case": repr(case), "error": err, "tolerance": tol, "ok": bool(err <= tol)})
    return out


def graph_replay(torch, module, bench) -> dict:
    """Capture one launch in a CUDA graph, copy fresh inputs in, replay, compare with eager."""
    kernel = getattr(module, bench.kernel)
    args, constants = bench.make(torch, "cuda")
    kernel(*args, **constants)                      # build and warm up outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        kernel(*args, **constants)
    fresh, _ = bench.make(torch, "cuda")
    for dst, src in zip(args, fresh):
        dst.copy_(src)
    graph.replay()
    torch.cuda.synchronize()
    replayed = [a.clone() for a in args]
    kernel(*fresh, **constants)
    torch.cuda.synchronize()
    same = all(torch.equal(r, f) for r, f in zip(replayed, fresh))
    return {"ok": bool(same)}


def replay_all(torch, module, replays) -> dict:
    """graph_replay for each kernel of an example that is not timed."""
    kernels = {r.kernel: graph_replay(torch, module, r)["ok"] for r in replays}
    return {"ok": all(kernels.values()), "kernels": kernels}


def time_bench(torch, module, bench) -> dict:
    kernel = getattr(module, bench.kernel)
    args, constants = bench.make(torch, "cuda")
    ours = cuda_time_ms(torch, lambda: kernel(*args, **constants))
    theirs = cuda_time_ms(torch, lambda: bench.torch_step(torch, args))
    moved = bench.bytes_moved(args)
    return {"ktile_ms": ours, "torch_ms": theirs, "baseline": bench.baseline,
            "speedup": theirs / ours, "ktile_GBps": moved / ours / 1e6}


def host_overhead(torch, module, rounds: int = 7) -> dict:
    """Host time per call of a small ktile add against torch.add on the same tensors: the
    median of `rounds` rounds of 2000 calls each, the three callers taking turns within each
    round, so that a drift of the host's speed during the measurement falls on all three alike
    (three rounds of one caller, then of the next, once measured the kernel call 2 us slower
    than the torch op that wraps it)."""
    a = torch.randn(1, 1, 16, 64, device="cuda").to(torch.bfloat16)
    b, o = torch.randn_like(a), torch.empty_like(a)
    calls = 2000

    def per_call(fn):
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / calls * 1e6
    import ktile
    op = ktile.torch_op(module.add)
    callers = {"ktile_us": lambda: module.add(a, b, o), "torch_op_us": lambda: op(a, b, o),
               "torch_add_us": lambda: torch.add(a, b, out=o)}
    samples: dict[str, list[float]] = {name: [] for name in callers}
    for _ in range(rounds):
        for name, fn in callers.items():
            samples[name].append(per_call(fn))
    out = {name: statistics.median(times) for name, times in samples.items()}
    out["ratio"] = out["ktile_us"] / out["torch_add_us"]
    out["torch_op_ratio"] = out["torch_op_us"] / out["torch_add_us"]
    out["samples_us"] = samples
    return out


def determinism(torch, module, launches, runs: int = 10) -> dict:
    """Each case of the example run `runs` times on the same inputs (its kernels built, its
    tensors copied to the GPU and back), every kernel call's outputs compared bitwise across
    runs; then each timed or replayed kernel launched `runs` times at its large shape (every
    block of the H200 busy), its tensors compared bitwise with the first launch's."""
    from examples_index import nondeterministic_calls
    differ = {repr(case): calls for case in module.CASES
              if (calls := nondeterministic_calls(module, case, runs, backend="auto",
                                                  target=TARGET, device="cuda"))}
    large = {launch.kernel: repeated_launches_agree(torch, module, launch, runs)
             for launch in launches}
    return {"ok": not differ and all(large.values()), "runs": runs, "cases": len(module.CASES),
            "differ": differ, "large": large}


def repeated_launches_agree(torch, module, launch, runs: int) -> bool:
    """`runs` launches on the same tensors leave them bitwise as the first did (every example
    kernel writes its outputs without reading them, so a repeat changes nothing)."""
    kernel = getattr(module, launch.kernel)
    args, constants = launch.make(torch, "cuda")
    kernel(*args, **constants)
    first = [a.clone() for a in args]
    same = True
    for _ in range(runs - 1):
        kernel(*args, **constants)
        same &= all(bitwise_equal(torch, a, f) for a, f in zip(args, first))
    torch.cuda.synchronize()
    return bool(same)


def bitwise_equal(torch, a, b) -> bool:
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def rmsnorm_sweep(module, backend: str = "auto", device: str = "cuda", target: str | None = TARGET,
                  widths=None, cols_choices=None, row_widths=None, rows: int | None = None) -> dict:
    """02's `rmsnorm_persistent` at every (WIDTH, COLS) of the sweep and every row width: each
    call "right" (matches the reference) or "refused" (a KernelError, the output unwritten);
    "wrong" or "error: ..." is a failure. The defaults are gpu_cases' RMS_SWEEP_*."""
    import gpu_cases
    widths = widths or gpu_cases.RMS_SWEEP_WIDTHS
    cols_choices = cols_choices or gpu_cases.RMS_SWEEP_COLS
    row_widths = row_widths or gpu_cases.RMS_SWEEP_ROW_WIDTHS
    rows = rows or gpu_cases.RMS_SWEEP_ROWS
    call = module.runner(module.rmsnorm_persistent, backend, device)
    results = []
    for cols in row_widths:
        x, w, want, tol = rmsnorm_inputs(module, rows, cols)
        for width in widths:
            for tile_cols in cols_choices:
                constants = {"WIDTH": width, "COLS": tile_cols, "BLOCKS": 2}
                start = time.perf_counter()
                verdict = sweep_verdict(lambda o: call(x, w, o, target=target, **constants),
                                        x, want, tol)
                results.append({"cols": cols, **constants, "result": verdict,
                                "seconds": time.perf_counter() - start})
    failures = [r for r in results if r["result"] not in ("right", "refused")]
    counts = {v: sum(r["result"] == v for r in results) for v in ("right", "refused")}
    return {"ok": not failures, **counts, "failing": len(failures), "failures": failures,
            "calls": results}


def rmsnorm_inputs(module, rows: int, cols: int):
    """bf16 x and w for one row width, the reference output and its tolerance."""
    import torch
    import ktile
    from common import torch_rand
    from ktile.ops.rmsnorm.reference import rmsnorm, tolerance
    x = torch_rand((1, 1, rows, cols), torch.bfloat16, 21)
    w = torch_rand((1, 1, 1, cols), torch.bfloat16, 22)
    want = rmsnorm(x.float().numpy(), w.float().numpy(), 1e-6, ktile.bf16)
    return x, w, want, tolerance(want)


def sweep_verdict(run, x, want, tol) -> str:
    """Run into a NaN-filled output: "right", "refused" (KernelError, output untouched),
    "wrong" (a mismatch or an unwritten element) or "error: <what was raised>"."""
    import torch
    import ktile
    from common import max_abs_error
    o = torch.full_like(x, float("nan"))
    try:
        with warnings.catch_warnings():       # register-pressure notes of wide tiles: not verdicts
            warnings.simplefilter("ignore", ktile.KernelWarning)
            run(o)
    except ktile.KernelError:
        if not bool(torch.isnan(o).all()):
            return "error: refused after writing its output"
        return "refused"
    except Exception as exc:  # noqa: BLE001 - a raw exception is a failure the table shows
        return f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return "right" if max_abs_error(o.float().numpy(), want) <= tol else "wrong"


def sanitizer(tool: str, names: list[str]) -> dict:
    """compute-sanitizer over a child process running the smallest case of each example (every
    kernel launched is instrumented, torch's too)."""
    cmd = ["compute-sanitizer", f"--tool={tool}", "--error-exitcode=9", sys.executable,
           os.path.abspath(__file__), "--child-small", ",".join(names)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=420)
    tail = (proc.stdout + proc.stderr)[-3000:].replace(ROOT + os.sep, "")   # no machine paths
    return {"ok": proc.returncode == 0, "returncode": proc.returncode,
            "seconds": time.perf_counter() - start, "tail": tail}


def tier3_tests() -> dict:
    """The tier-3 pytest files (CUDA launch path, torch_op under compile and graphs)."""
    cmd = [sys.executable, "-m", "pytest", os.path.join(ROOT, "tests", "tier3"), "-q",
           "-p", "no:cacheprovider"]
    if importlib.util.find_spec("xdist") is not None:   # 230 tests, most of them builds
        cmd += ["-n", str(min(8, os.cpu_count() or 1))]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=420, cwd=ROOT)
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    return {"ok": proc.returncode == 0, "summary": last, "seconds": time.perf_counter() - start,
            "tail": proc.stdout[-2000:].replace(ROOT + os.sep, "") if proc.returncode else ""}


def child_small(names: list[str]) -> int:
    """Under compute-sanitizer: the smallest case of each example on the GPU."""
    from examples_index import load
    bad = 0
    for name in names:
        module = load(name)
        err, tol = module.run_case(module.CASES[0], backend="auto", target=TARGET, device="cuda")
        print(f"{name}: err {err:.3g} tol {tol:.3g}", flush=True)
        bad += err > tol
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only")
    parser.add_argument("--skip-sanitizer", action="store_true")
    parser.add_argument("--sanitizer-only", action="store_true")
    parser.add_argument("--skip-perf-gate", action="store_true",
                        help="skip the op timings against docs/results/perf_baseline_<device>.json")
    parser.add_argument("--json", default=os.path.join(os.environ.get("OUT", "."), "gpu_suite.json"))
    parser.add_argument("--child-small")
    args = parser.parse_args()
    if args.child_small:
        return child_small(args.child_small.split(","))

    import torch
    from examples_index import EXAMPLE_NAMES, load
    from gpu_cases import BENCHES, REPLAYS
    if not torch.cuda.is_available():
        print("no CUDA GPU: the GPU suite runs on an NVIDIA machine (see docs/performance.md)")
        return 2
    names = [n for n in EXAMPLE_NAMES if not args.only or args.only in n]
    benches = {b.example: b for b in BENCHES}
    replays: dict[str, list] = {}
    for r in REPLAYS:
        replays.setdefault(r.example, []).append(r)
    started = time.perf_counter()
    summary: dict = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                     "capability": list(torch.cuda.get_device_capability()), "examples": {}}
    log(f"device {summary['device']}, torch {summary['torch']}")
    phase(summary, "copy_GBps", lambda: copy_bandwidth(torch))
    for name in ([] if args.sanitizer_only else names):
        module, row = load(name), {}
        log(f"{name}: build, check")
        phase(row, "builds", lambda: build_all(module))
        phase(row, "checks", lambda: check_all(module))
        if name in benches:
            log(f"{name}: graph replay, timing")
            phase(row, "graph", lambda: graph_replay(torch, module, benches[name]))
            phase(row, "timing", lambda: time_bench(torch, module, benches[name]))
        elif name in replays:
            log(f"{name}: graph replay")
            phase(row, "graph", lambda: replay_all(torch, module, replays[name]))
        log(f"{name}: determinism (10 runs, bitwise)")
        launches = [benches[name]] if name in benches else replays.get(name, [])
        phase(row, "determinism", lambda: determinism(torch, module, launches))
        summary["examples"][name] = row
    if "02_rmsnorm" in names and not args.sanitizer_only:
        log("02_rmsnorm: rmsnorm_persistent (WIDTH, COLS) sweep")
        phase(summary, "rmsnorm_sweep", lambda: rmsnorm_sweep(load("02_rmsnorm")))
    if "01_vector_add" in names and not args.sanitizer_only:
        phase(summary, "host_overhead", lambda: host_overhead(torch, load("01_vector_add")))
    if not args.sanitizer_only:
        log("tests/tier3")
        phase(summary, "tier3", tier3_tests)
    if not args.sanitizer_only and not args.skip_perf_gate:
        log("performance gate: ops against this machine's recorded figures (a report)")
        from ktile.bench.gate import suite_section
        phase(summary, "perf_gate", lambda: suite_section(os.path.join(
            os.path.dirname(args.json) or ".", "perf_gate")))
    if not args.skip_sanitizer:
        for tool in ("memcheck", "racecheck"):
            log(f"compute-sanitizer {tool}")
            phase(summary, f"sanitizer_{tool}", lambda: sanitizer(tool, names))
    summary["seconds"] = time.perf_counter() - started
    with open(args.json, "w") as f:
        json.dump(summary, f, indent=2, default=str)
    print_table(summary)
    return 0


def _ok(value) -> str:
    if isinstance(value, dict) and "error" in value:
        return "ERROR"
    return "ok" if value else "FAIL"


def print_table(s: dict) -> None:
    copy = s.get("copy_GBps")
    print(f"\nGPU suite on {s['device']} (torch {s['torch']}), {s['seconds']:.0f} s; "
          f"D2D copy {copy if isinstance(copy, dict) else f'{copy:.0f} GB/s'}")
    print(f"{'example':<22} {'build':<6} {'checks':<8} {'graph':<6} {'det':<6} {'ktile ms':>9} "
          f"{'torch ms':>9} {'x':>5} {'GB/s':>6}  baseline")
    for name, row in s["examples"].items():
        builds = row.get("builds")
        build_ok = isinstance(builds, list) and all(b["spill_bytes"] == 0 and b["stack_bytes"] == 0
                                                    for b in builds)
        checks = row.get("checks")
        check_txt = (f"{sum(c['ok'] for c in checks)}/{len(checks)}" if isinstance(checks, list)
                     else "ERROR")
        graph = row.get("graph")
        graph_txt = "-" if graph is None else _ok(graph.get("ok") if "error" not in graph else graph)
        t = row.get("timing") or {}
        if "ktile_ms" in t:
            timing = f"{t['ktile_ms']:>9.3f} {t['torch_ms']:>9.3f} {t['speedup']:>5.2f} {t['ktile_GBps']:>6.0f}  {t['baseline']}"
        else:
            timing = "ERROR" if "error" in t else "-"
        det = row.get("determinism")
        det_txt = "-" if det is None else _ok(det.get("ok") if "error" not in det else det)
        print(f"{name:<22} {'ok' if build_ok else 'FAIL':<6} {check_txt:<8} {graph_txt:<6} "
              f"{det_txt:<6} {timing}")
    h = s.get("host_overhead")
    if isinstance(h, dict) and "ratio" in h:
        print(f"host overhead per call: ktile kernel {h['ktile_us']:.1f} us ({h['ratio']:.2f}x), "
              f"as torch op {h['torch_op_us']:.1f} us ({h['torch_op_ratio']:.2f}x), "
              f"torch.add {h['torch_add_us']:.1f} us")
    sweep = s.get("rmsnorm_sweep")
    if isinstance(sweep, dict) and "error" not in sweep:
        print(f"rmsnorm_persistent (WIDTH, COLS) sweep: {sweep['right']} right, "
              f"{sweep['refused']} refused, {sweep['failing']} failing"
              + "".join(f"\n  FAIL cols {f['cols']} WIDTH {f['WIDTH']} COLS {f['COLS']}: "
                        f"{f['result']}" for f in sweep["failures"]))
    elif sweep is not None:
        print(f"rmsnorm_persistent (WIDTH, COLS) sweep: ERROR {sweep['error']}")
    t3 = s.get("tier3")
    if t3 is not None:
        print(f"tests/tier3: {t3.get('summary', t3.get('error'))}")
    gate = s.get("perf_gate")
    if isinstance(gate, dict):
        print(gate.get("report") or gate.get("skipped") or f"performance gate: ERROR {gate.get('error')}")
    for tool in ("memcheck", "racecheck"):
        r = s.get(f"sanitizer_{tool}")
        if r is not None:
            print(f"compute-sanitizer {tool}: {_ok(r.get('ok') if 'error' not in r else r)}")


if __name__ == "__main__":
    sys.exit(main())
