"""Time `ktile.ops.scaled_mm` (fp8 e4m3 GEMM) against torch._scaled_mm on a CUDA GPU, in one
process (issue #11).

    python3 benchmarks/matmul_fp8.py --quick --json /tmp/fp8.json   # a subset (~2 min)
    python3 benchmarks/matmul_fp8.py --json DIR/matmul_fp8.json      # the full sweep
    python3 benchmarks/matmul_fp8.py --check-only                    # correctness only
    python3 benchmarks/matmul_fp8.py --quick --constants PROMOTE_K=256,BN=192,STAGES=2 \
        --constants PAIR=1,BN=128,STAGES=3 --json /tmp/fp8.json   # also other constants

The product is a [M, K] e4m3 times b = W.t() for an e4m3 weight W [N, K], bf16 out, no bias,
with per-tensor scales ("tensor": one float32 each) and with per-token / per-channel scales
("rowwise": scale_a [M, 1], scale_b [1, N]). Shapes: 4096³ and 8192³, and M in {512, 2048,
4096, 8192} × Qwen3-8B's (N, K) in {(6144, 4096), (4096, 4096), (24576, 4096), (4096,
12288)}. Every ktile result is checked against the op's reference formula (the float64
product of the same e4m3 values, scaled, rounded to bf16; computed on the GPU) within the
reference's tolerance on Hopper (widened by torch._scaled_mm's own accumulation error at the
same operands: reference.on_hopper) before it is timed: a wrong result is reported, never
timed. Both accumulations are timed against torch's in the same mode: the default (promoted)
against torch._scaled_mm's default, use_fast_accum=True (the unpromoted routes, checked within
torch's fast accumulation's error) against torch's use_fast_accum=True. `--constants` variants are checked the same way (PROMOTE 0, fast accumulation, against
torch's use_fast_accum=True error) and timed beside the route in the same process.

Timing: ktile.bench.timing (L2 flushed before each sample, median of CUDA-event times), eager
and replayed from a CUDA graph; TFLOP/s and ktile's speedup over torch (best of eager and
graph each). `run(args) -> list[dict]` is the section benchmarks/matmul.py can call (args:
quick, repeats, check_only, and fp8_modes, default both). Exit code 1 when a ktile result was
wrong, 2 without a CUDA GPU.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ktile.bench.timing import graphed, timed  # noqa: E402

NK = ((6144, 4096), (4096, 4096), (24576, 4096), (4096, 12288))
PREFILL_M = (512, 2048, 4096, 8192)
SQUARES = (4096, 8192)
QUICK = ((4096, 4096, 4096), (8192, 8192, 8192), (512, 6144, 4096), (2048, 24576, 4096),
         (4096, 4096, 12288), (8192, 4096, 4096))
MODES = ("tensor", "rowwise")
BOOL_CONSTANTS = ("PROMOTE", "ROWWISE", "BIAS", "LAG", "PAIR")
DEVICE = ["cuda"]        # tests/tier0/test_scaled_mm.py runs a case on the CPU interpreter


def synchronize() -> None:
    import torch
    if DEVICE[0] == "cuda":
        torch.cuda.synchronize()


def shapes(quick: bool) -> list[tuple[int, int, int]]:
    """(M, N, K) of the sweep."""
    if quick:
        return list(QUICK)
    return [(s, s, s) for s in SQUARES] + [(m, n, k) for n, k in NK for m in PREFILL_M]


def inputs(m: int, n: int, k: int, mode: str):
    """e4m3 a [M, K] and W [N, K] (values of a unit normal, times 2), scales about 0.5..1.5."""
    import torch
    g = torch.Generator(device=DEVICE[0]).manual_seed(m * 7 + n * 3 + k)
    a = (torch.randn((m, k), generator=g, device=DEVICE[0]) * 2).to(torch.float8_e4m3fn)
    w = (torch.randn((n, k), generator=g, device=DEVICE[0]) * 2).to(torch.float8_e4m3fn)
    shape_a, shape_b = ((m, 1), (1, n)) if mode == "rowwise" else ((), ())
    scale_a = torch.rand(shape_a, generator=g, device=DEVICE[0]) + 0.5
    scale_b = torch.rand(shape_b, generator=g, device=DEVICE[0]) + 0.5
    return a, w, scale_a, scale_b


def expected(a, w, scale_a, scale_b) -> tuple:
    """(the reference's bf16 result, its tolerance on Hopper, the tolerance of fast
    accumulation) in float64 on the GPU: the formula of ktile/ops/scaled_mm/reference.py, the
    tolerance widened by torch._scaled_mm's own fp8-accumulation error at these operands
    (reference.on_hopper), by default and with use_fast_accum=True (PROMOTE 0's contract)."""
    import torch
    from ktile.ops.scaled_mm.reference import on_hopper, tolerance_of
    exact = a.double() @ w.double().t()
    errors = [torch_error(a, w, exact, fast) for fast in (False, True)]
    scales_max = float(scale_a.abs().max()) * float(scale_b.abs().max())
    want = (exact * scale_a.double() * scale_b.double()).float().bfloat16().float()
    del exact
    tol = tolerance_of(a.shape[1], float(a.float().abs().max()), float(w.float().abs().max()),
                       scales_max, float(want.abs().max()), "bf16")
    return want, *(on_hopper(tol, e, scales_max) for e in errors)


def torch_error(a, w, exact, fast: bool) -> float:
    """torch._scaled_mm's max error against `exact` at unit scales, fp32 out (0 where this
    torch build refuses the call: the tolerance is then the reference's alone)."""
    import torch
    one = torch.ones((), device=DEVICE[0])
    try:
        return error(torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.float32,
                                      use_fast_accum=fast), exact)
    except RuntimeError as exc:
        print(f"  torch._scaled_mm(use_fast_accum={fast}) refused: {str(exc)[:120]}")
        return 0.0


def error(got, want) -> float:
    return float((got.to(want.dtype) - want).abs().max())


def parse_constants(spec: str) -> dict:
    """`NAME=VALUE,...` -> {NAME: int}, the bool constants (PROMOTE, ROWWISE, BIAS) as bools."""
    constants = {k: int(v) for k, v in (kv.split("=") for kv in spec.split(","))}
    return {k: bool(v) if k in BOOL_CONSTANTS else v for k, v in constants.items()}






def time_both(row: dict, name: str, fn, repeats: int) -> None:
    row[name] = timed(fn, repeats)
    try:
        row[name + "_graph"] = timed(graphed(fn), repeats)
    except Exception as err:   # noqa: BLE001
        row[name + "_graph"] = {"error": f"{type(err).__name__}: {str(err)[:300]}"}


def measure(m: int, n: int, k: int, mode: str, args) -> dict:
    """One shape and scale mode: check ktile's result, then time ktile and torch, and
    ktile's kernel at each `--constants` variant (checked first too)."""
    import torch
    import ktile.ops as ops
    a, w, scale_a, scale_b = inputs(m, n, k, mode)
    b = w.t()
    row = {"section": "fp8", "mode": mode, "m": m, "n": n, "k": k, "out": "bf16"}
    started = time.time()
    got = ops.scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16)
    synchronize()
    row["first_call_s"] = round(time.time() - started, 2)         # trace + build + load
    want, tol, fast_tol = expected(a, w, scale_a, scale_b)
    err = error(got, want)
    row.update(error=err, tolerance=tol, correct=err <= tol)
    theirs = lambda: torch._scaled_mm(a, b, scale_a, scale_b,     # noqa: E731
                                      out_dtype=torch.bfloat16)
    try:
        row["torch_error"] = error(theirs(), want)
    except Exception as exc:   # noqa: BLE001 - torch may not take this mode on this build
        row["torch_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    fast = ops.scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16,
                         use_fast_accum=True)
    row.update(fast_error=error(fast, want), fast_tolerance=fast_tol)
    row["fast_correct"] = row["fast_error"] <= fast_tol
    del fast
    if not (row["correct"] and row["fast_correct"]) or getattr(args, "check_only", False):
        return row
    ours = lambda: ops.scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16)  # noqa: E731
    repeats = getattr(args, "repeats", 30)
    time_both(row, "ktile", ours, repeats)
    time_both(row, "torch", theirs, repeats)
    time_both(row, "ktile_fast", lambda: ops.scaled_mm(
        a, b, scale_a, scale_b, out_dtype=torch.bfloat16, use_fast_accum=True), repeats)
    time_both(row, "torch_fast", lambda: torch._scaled_mm(
        a, b, scale_a, scale_b, out_dtype=torch.bfloat16, use_fast_accum=True), repeats)
    specs = getattr(args, "constants", None) or []
    for spec in specs:
        fast = not parse_constants(spec).get("PROMOTE", True)
        row[f"constants:{spec}"] = variant(a, b, scale_a, scale_b, want,
                                           fast_tol if fast else tol, spec, repeats)
    del want
    torch.cuda.empty_cache()
    for name in [key for key in row if isinstance(row[key], dict) and "ms" in row[key]]:
        row[name]["tflops"] = 2 * m * n * k / row[name]["ms"] / 1e9
    return row


def variant(a, b, scale_a, scale_b, want, tol, spec: str, repeats: int) -> dict:
    """ktile's kernel at the constants `spec` over the route's: checked against the
    reference's result within `tol` (PROMOTE 0: torch's fast accumulation's), then timed (eager and graph); a variant that
    fails to build or is wrong is reported, not timed."""
    import torch
    from ktile.ops.scaled_mm.op import launcher
    out = torch.empty((a.shape[0], b.shape[1]), dtype=torch.bfloat16, device=DEVICE[0])
    try:
        call = launcher(a, b, scale_a, scale_b, out, parse_constants(spec))
        call()
        synchronize()
    except Exception as exc:   # noqa: BLE001 - a variant that does not build is reported
        return {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    timed = {"max_error": error(out, want), "tolerance": tol}
    timed["correct"] = timed["max_error"] <= tol
    if not timed["correct"]:
        return timed
    row = {}
    time_both(row, "t", call, repeats)
    timed.update(row["t"], graph=row["t_graph"])
    return timed


def best(row: dict, who: str) -> float | None:
    times = [row.get(key, {}).get("ms") for key in (who, who + "_graph")]
    times = [t for t in times if t]
    return min(times) if times else None


def print_table(rows: list[dict]) -> None:
    print(f"{'mode':8} {'M':>5} {'N':>6} {'K':>6} | {'ktile us':>9} {'graph':>8} "
          f"{'torch us':>9} {'graph':>8} | {'speedup':>7} | {'ktile TF/s':>10} ok")
    for row in rows:
        if "ktile" not in row:
            fast = f" fast err {row['fast_error']:.3g} tol {row['fast_tolerance']:.3g} " \
                f"{'ok' if row['fast_correct'] else 'WRONG'}" if "fast_error" in row else ""
            print(f"{row['mode']:8} {row['m']:5} {row['n']:6} {row['k']:6} | "
                  f"{'correct' if row['correct'] else 'WRONG'} err {row['error']:.3g} "
                  f"tol {row['tolerance']:.3g}{fast}")
            continue
        us = {key: row[key].get("ms", float("nan")) * 1e3
              for key in ("ktile", "ktile_graph", "torch", "torch_graph")}
        ours, theirs = best(row, "ktile"), best(row, "torch")
        speedup = theirs / ours if ours and theirs else float("nan")
        tflops = 2 * row["m"] * row["n"] * row["k"] / ours / 1e9 if ours else float("nan")
        print(f"{row['mode']:8} {row['m']:5} {row['n']:6} {row['k']:6} | {us['ktile']:9.1f} "
              f"{us['ktile_graph']:8.1f} {us['torch']:9.1f} {us['torch_graph']:8.1f} | "
              f"{speedup:6.2f}x | {tflops:10.0f} {'yes' if row['correct'] else 'NO'}")
        print_fast(row)
        print_variants(row)


def print_fast(row: dict) -> None:
    """The use_fast_accum=True line: ktile's fast routes against torch's fast accumulation."""
    ours, theirs = best(row, "ktile_fast"), best(row, "torch_fast")
    if not ours:
        return
    speedup = theirs / ours if theirs else float("nan")
    print(f"  {'use_fast_accum=True':40} | {ours * 1e3:9.1f} us | {speedup:6.2f}x vs "
          f"{'torch_fast':10} | {2 * row['m'] * row['n'] * row['k'] / ours / 1e9:6.0f} TF/s")


def print_variants(row: dict) -> None:
    """A line per `--constants` variant: its best time against torch's (use_fast_accum=True
    for PROMOTE 0), or why it was not timed."""
    for key in [key for key in row if key.startswith("constants:")]:
        spec, timed = key.split(":", 1)[1], row[key]
        label = f"  {spec[:40]:40}"
        if "ms" not in timed:
            why = timed.get("error") if "max_error" not in timed else \
                f"WRONG err {timed['max_error']:.3g} tol {timed['tolerance']:.3g}"
            print(f"{label} | {why}")
            continue
        ours = min(t for t in (timed["ms"], timed["graph"].get("ms")) if t)
        against = "torch_fast" if not parse_constants(spec).get("PROMOTE", True) else "torch"
        theirs = best(row, against)
        speedup = theirs / ours if theirs else float("nan")
        print(f"{label} | {ours * 1e3:9.1f} us | {speedup:6.2f}x vs {against:10} | "
              f"{2 * row['m'] * row['n'] * row['k'] / ours / 1e9:6.0f} TF/s")


def run(args) -> list[dict]:
    """Every shape × scale mode, each row printed as it is measured: the section
    benchmarks/matmul.py can call."""
    rows = []
    for m, n, k in shapes(getattr(args, "quick", False)):
        for mode in getattr(args, "fp8_modes", None) or MODES:
            rows.append(measure(m, n, k, mode, args))
            print_table(rows[-1:])
    return rows


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmarks/matmul_fp8.py",
                                description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="a subset of the shapes (~2 min)")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH")
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--check-only", action="store_true", help="check results, time nothing")
    p.add_argument("--constants", action="append", default=[], metavar="NAME=V,...",
                   help="also time ktile's kernel at these constants over the route's "
                        "(repeatable), e.g. PROMOTE=0,BN=256,STAGES=4 (fast accumulation, "
                        "against torch's use_fast_accum=True) or BN=128,STAGES=6")
    p.add_argument("--mode", dest="fp8_modes", action="append", choices=MODES,
                   help="a scale mode to time (repeatable; default both)")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("benchmarks/matmul_fp8.py: needs a CUDA GPU (torch.cuda.is_available() is False)")
        return 2
    print(f"{torch.cuda.get_device_name()}: torch {torch.__version__}")
    rows = run(args)
    print()
    print_table(rows)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "host": platform.node(), "args": vars(args), "results": rows}, f,
                      indent=1)
        print(f"wrote {args.json}")
    return 0 if all(r["correct"] and r.get("fast_correct", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
