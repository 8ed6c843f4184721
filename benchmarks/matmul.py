"""Time `ktile.ops.matmul` against torch.matmul (cuBLAS) on a CUDA GPU, in one process.

    python3 benchmarks/matmul.py --quick --out /tmp/mm    # a subset (~1-2 min with the builds)
    python3 benchmarks/matmul.py --all-sections --quick --out DIR   # issue #11 in one run:
                                  # bf16 (decode GEMV and prefill), fp8, W4A16, MoE (~8-12 min)
    python3 benchmarks/matmul.py --fp8 --moe --quick --out DIR      # some sections only
    python3 benchmarks/matmul.py --out DIR                # the full sweep
    python3 benchmarks/matmul.py --check-only --quick     # correctness only, no timing
    python3 benchmarks/matmul.py --quick --decode-only --route skinny_nt \
        --route gemv_nt:MB=4,UNROLL=1 --out DIR           # also time pinned routes
    python3 benchmarks/matmul.py --quick --prefill-only --route wgmma_ws_nt:GROUP_M=16 \
        --out DIR                                         # the prefill shapes alone

The product is nn.Linear's: a [M, K] times W.t() for a weight W [N, K], bf16 in and out (or
--dtype fp16), optionally with a bias. Decode shapes: M in {1, 2, 4, 8, 16, 32} × (N, K) in
{(6144, 4096), (4096, 4096), (24576, 4096), (4096, 12288), (12288, 4096)}; prefill: M in {512,
2048, 4096, 8192} × the same, plus 4096³ and 8192³. Every ktile result is checked against an
fp32 product of the same inputs before it is timed (a wrong result is reported, not timed).

Timing: ktile.bench.timing (L2 flushed before each sample, median of CUDA-event times; decode
shapes also with `clean=True`, the flush's dirty lines written back before the call: the
`*_clean` entries and the table's "clean" line, cuBLAS measured the same way), eager
and replayed from a CUDA graph (the graph removes the host's launch gaps: ktile's decode path
is two launches plus Python checks). Decode shapes report % of the device's copy bandwidth
(bytes: W + a + out; copy: read + write of a 1 GiB copy, measured in the same process);
prefill shapes TFLOP/s. Writes DIR/matmul.json and DIR/matmul.png (where matplotlib imports).
`--route KERNEL[:NAME=VALUE,...]` (repeatable) also times matmul pinned to a route of the
routing table (ktile/ops/matmul/config.py): the first route of that kernel for the device's
target that fits M (else its first route), its constants overridden where given; the row's
entries are `route:<spec>` and `route:<spec>_graph`, each checked before it is timed.

Sections (issue #11 in one run): `--dense` is the sweep above (nn.Linear's product, decode
GEMV and prefill shapes), what runs when no section is named; `--fp8` (ktile.ops.scaled_mm vs
torch._scaled_mm: benchmarks/matmul_fp8.py), `--awq` (W4A16 awq_gemm vs Triton and torch:
benchmarks/awq.py), `--moe` (fused_moe vs the per-expert cuBLAS loop: benchmarks/moe.py) call
those scripts' run() with their own defaults and this run's --quick, --check-only, --repeats
(and --dtype for awq); `--all-sections` runs all four. Each section's rows go under its own
key of matmul.json ("results": dense, "fp8", "awq", "moe"; "sections": each one's status and
wall time) and its table is printed after the dense one. A section that raises is reported
(its error in the JSON and the summary, the traceback on stderr) and the others still run.
--decode-only, --prefill-only and --route apply to the dense section only.
Exit code 1 when a ktile result was wrong or a section failed, 2 without a CUDA GPU.
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

# section name -> its script in benchmarks/ (a run(args) -> rows and a print_table(rows))
SECTIONS = {"fp8": "matmul_fp8.py", "awq": "awq.py", "moe": "moe.py"}

NK = ((6144, 4096), (4096, 4096), (24576, 4096), (4096, 12288), (12288, 4096))
DECODE_M = (1, 2, 4, 8, 16, 32)
PREFILL_M = (512, 2048, 4096, 8192)
SQUARES = (4096, 8192)
QUICK_DECODE = ((1, 4096, 4096), (8, 4096, 4096), (32, 4096, 4096), (1, 12288, 4096),
                (8, 12288, 4096), (16, 12288, 4096), (4, 24576, 4096), (16, 4096, 12288))
QUICK_PREFILL = ((4096, 4096, 4096), (2048, 12288, 4096), (4096, 24576, 4096), (512, 4096, 4096),
                 (512, 6144, 4096), (512, 4096, 12288))


def shapes(quick: bool) -> list[tuple[str, int, int, int]]:
    """(kind, M, N, K) of the sweep."""
    if quick:
        return [("decode", *s) for s in QUICK_DECODE] + [("prefill", *s) for s in QUICK_PREFILL]
    decode = [("decode", m, n, k) for n, k in NK for m in DECODE_M]
    prefill = [("prefill", m, n, k) for n, k in NK for m in PREFILL_M]
    return decode + prefill + [("prefill", s, s, s) for s in SQUARES]


def inputs(m: int, n: int, k: int, dtype, with_bias: bool):
    import torch
    g = torch.Generator(device="cuda").manual_seed(m * 7 + n * 3 + k)
    a = torch.randn((m, k), generator=g, device="cuda").to(dtype)
    w = torch.randn((n, k), generator=g, device="cuda").to(dtype)
    bias = torch.randn((n,), generator=g, device="cuda").to(dtype) if with_bias else None
    return a, w, bias


def check(a, w, bias, got, out_name: str) -> tuple[float, float]:
    """(max error, tolerance) of `got` against the fp32 product; the tolerance is the op
    reference's (ktile/ops/matmul/reference.py)."""
    from ktile.ops.matmul.reference import ULP
    want = a.float() @ w.float().t()
    if bias is not None:
        want += bias.float()
    top = float(want.abs().max())
    accumulation = a.shape[1] * float(a.abs().max()) * float(w.abs().max()) * 2.0 ** -22
    tol = accumulation + top * ULP[out_name] + 1e-3
    return float((got.float() - want).abs().max()), tol




def pinned_route(spec: str, m: int, n: int):
    """The Route `spec` names (KERNEL or KERNEL:NAME=VALUE,...) for M = m on sm_90a."""
    import dataclasses
    from ktile.ops.matmul import config
    kernel, _, given = spec.partition(":")
    mine = [r for r in config.TABLE.routes
            if r.kernel == kernel and (r.targets is None or "sm_90a" in r.targets)]
    if not mine:
        raise SystemExit(f"--route {spec}: no {kernel} route for sm_90a in the table")
    base = next((r for r in mine if r.fits(m, n, "sm_90a")), mine[0])
    constants = dict(base.constants)
    for item in filter(None, given.split(",")):
        name, _, value = item.partition("=")
        constants[name] = int(value)
    return dataclasses.replace(base, constants=constants, max_rows=None, max_cols=None)


def time_route(spec: str, m: int, n: int, a, w, bias, args) -> dict:
    """matmul pinned to the route `spec` names: checked, then timed eager and graphed."""
    import ktile.ops as ops
    from ktile.ops import _library as lib
    from ktile.ops.matmul.op import OP
    route = pinned_route(spec, m, n)
    out = {"route": {"kernel": route.kernel, **route.constants}}
    with lib.pinned(OP.table, route):
        try:
            got = ops.matmul(a, w.t(), bias)
        except Exception as err:   # noqa: BLE001 - a route that cannot run is reported
            return {**out, "error": f"{type(err).__name__}: {str(err)[:300]}"}
        err, tol = check(a, w, bias, got, args.dtype)
        out.update(error=err, tolerance=tol, correct=err <= tol)
        if err > tol:
            return out
        fn = lambda: ops.matmul(a, w.t(), bias)                   # noqa: E731
        graph = {}
        try:
            graph = timed(graphed(fn), args.repeats)
        except Exception as err:   # noqa: BLE001
            graph = {"error": f"{type(err).__name__}: {str(err)[:300]}"}
        return {**out, **timed(fn, args.repeats), "graph": graph}




def measure(kind: str, m: int, n: int, k: int, args, copy: float) -> dict:
    """One shape: check ktile's result, then time ktile and torch, eager and graphed."""
    import torch
    import ktile.ops as ops
    from ktile.bench.timing import gbps
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    a, w, bias = inputs(m, n, k, dtype, args.bias)
    b = w.t()
    row = {"kind": kind, "m": m, "n": n, "k": k, "dtype": args.dtype, "bias": args.bias}
    started = time.time()
    got = ops.matmul(a, b, bias)
    torch.cuda.synchronize()
    row["first_call_s"] = round(time.time() - started, 2)         # trace + build + load
    err, tol = check(a, w, bias, got, args.dtype)
    row.update(error=err, tolerance=tol, correct=err <= tol)
    if not row["correct"] or args.check_only:
        return row
    ours = lambda: ops.matmul(a, b, bias)                         # noqa: E731
    theirs = (lambda: torch.addmm(bias, a, b)) if bias is not None else \
        (lambda: torch.matmul(a, b))
    flushes = ("", "_clean") if kind == "decode" else ("",)     # decode: both flushes
    for name, fn in (("ktile", ours), ("torch", theirs)):
        for flush in flushes:
            row[name + flush] = timed(fn, args.repeats, clean=bool(flush))
            try:
                row[name + "_graph" + flush] = timed(graphed(fn), args.repeats, clean=bool(flush))
            except Exception as err:   # noqa: BLE001
                row[name + "_graph" + flush] = {"error": f"{type(err).__name__}: {str(err)[:300]}"}
    for spec in args.route:
        timing = time_route(spec, m, n, a, w, bias, args)
        row[f"route:{spec}"] = timing
        row[f"route:{spec}_graph"] = timing.pop("graph", {"error": "not timed"})
    nbytes = (n * k + m * k + m * n) * a.element_size()
    for name in [key for key in row if isinstance(row[key], dict) and "ms" in row[key]]:
        ms = row[name]["ms"]
        row[name]["pct_copy"] = 100 * gbps(nbytes, ms) / copy
        row[name]["tflops"] = 2 * m * n * k / ms / 1e9
    return row


def best(row: dict, who: str, flush: str = "") -> float | None:
    """The faster of eager and graphed `who` ("ktile", "torch") under `flush` ("": the
    timing module's default, "_clean": dirty lines written back first, decode rows)."""
    times = [row.get(key, {}).get("ms") for key in (who + flush, who + "_graph" + flush)]
    times = [t for t in times if t]
    return min(times) if times else None


def print_table(rows: list[dict]) -> None:
    print(f"{'kind':8} {'M':>5} {'N':>6} {'K':>6} | {'ktile us':>9} {'graph':>8} "
          f"{'torch us':>9} {'graph':>8} | {'speedup':>7} | {'ktile %copy/TF':>14} ok")
    for row in rows:
        if "ktile" not in row:
            print(f"{row['kind']:8} {row['m']:5} {row['n']:6} {row['k']:6} | "
                  f"{'correct' if row['correct'] else 'WRONG'} err {row['error']:.3g} "
                  f"tol {row['tolerance']:.3g}")
            continue
        us = {key: row[key].get("ms", float("nan")) * 1e3
              for key in ("ktile", "ktile_graph", "torch", "torch_graph")}
        ours, theirs = best(row, "ktile"), best(row, "torch")
        speedup = theirs / ours if ours and theirs else float("nan")
        pick = row["ktile_graph"] if "ms" in row["ktile_graph"] else row["ktile"]
        figure = (f"{pick.get('pct_copy', 0):.0f}% copy" if row["kind"] == "decode"
                  else f"{pick.get('tflops', 0):.0f} TF/s")
        print(f"{row['kind']:8} {row['m']:5} {row['n']:6} {row['k']:6} | {us['ktile']:9.1f} "
              f"{us['ktile_graph']:8.1f} {us['torch']:9.1f} {us['torch_graph']:8.1f} | "
              f"{speedup:6.2f}x | {figure:>14} {'yes' if row['correct'] else 'NO'}")
        if "ktile_clean" in row:
            clean = {key: row[key].get("ms", float("nan")) * 1e3 for key in
                     ("ktile_clean", "ktile_graph_clean", "torch_clean", "torch_graph_clean")}
            ours, theirs = best(row, "ktile", "_clean"), best(row, "torch", "_clean")
            ratio = theirs / ours if ours and theirs else float("nan")
            print(f"{'  clean':8} {'':5} {'':6} {'':6} | {clean['ktile_clean']:9.1f} "
                  f"{clean['ktile_graph_clean']:8.1f} {clean['torch_clean']:9.1f} "
                  f"{clean['torch_graph_clean']:8.1f} | {ratio:6.2f}x | (L2 written back)")
        for key in [key for key in row if key.startswith("route:") and
                    not key.endswith("_graph")]:
            t, g = row[key], row[key + "_graph"]
            said = (f"{t.get('ms', float('nan')) * 1e3:9.1f} {g.get('ms', float('nan')) * 1e3:8.1f}"
                    f" {g.get('pct_copy', t.get('pct_copy', 0)):5.0f}% copy"
                    if "ms" in t else t.get("error", "wrong result")[:80])
            print(f"{'':8} {'':5} {'':6} {'':6} | {said}  {key}")


def plot(rows: list[dict], path: str) -> bool:
    """ktile / cuBLAS time ratio per shape (best of eager and graphed), decode and prefill."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(14, 5))
    for ax, kind in zip(axes, ("decode", "prefill")):
        for n, k in sorted({(r["n"], r["k"]) for r in rows if r["kind"] == kind}):
            points = [(r["m"], best(r, "torch") / best(r, "ktile")) for r in rows
                      if r["kind"] == kind and (r["n"], r["k"]) == (n, k)
                      and best(r, "ktile") and best(r, "torch")]
            if points:
                ax.plot(*zip(*sorted(points)), "-o", label=f"N={n} K={k}")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("M")
        ax.set_ylabel("cuBLAS time / ktile time (>1: ktile faster)")
        ax.set_title(kind)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmarks/matmul.py", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="a subset of the shapes (< 2 min)")
    p.add_argument("--out", help="write matmul.json (and matmul.png) into this folder")
    p.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16")
    p.add_argument("--bias", action="store_true", help="with a bias (torch: addmm)")
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--check-only", action="store_true", help="check results, time nothing")
    p.add_argument("--decode-only", action="store_true", help="only the decode shapes")
    p.add_argument("--prefill-only", action="store_true", help="only the prefill shapes")
    p.add_argument("--route", action="append", default=[], metavar="KERNEL[:NAME=VALUE,...]",
                   help="also time matmul pinned to this route (repeatable): gemv_nt, "
                        "skinny_nt, gemv_nt:MB=4,UNROLL=1, skinny_wgmma_nt:BN=64,STAGES=4")
    p.add_argument("--dense", action="store_true",
                   help="the bf16/fp16 nn.Linear sweep (what runs when no section is named)")
    p.add_argument("--fp8", action="store_true", help="the fp8 section: benchmarks/matmul_fp8.py")
    p.add_argument("--awq", action="store_true", help="the W4A16 section: benchmarks/awq.py")
    p.add_argument("--moe", action="store_true", help="the MoE section: benchmarks/moe.py")
    p.add_argument("--all-sections", action="store_true",
                   help="every section: dense, fp8, awq, moe (issue #11 in one run)")
    return p


def selected(args) -> list[str]:
    """The sections `args` asks for, in run order; the dense sweep where none is named. The
    dense section's options without it are refused before anything runs."""
    names = ["dense", *SECTIONS]
    chosen = names if args.all_sections else [n for n in names if getattr(args, n)]
    chosen = chosen or ["dense"]
    if "dense" not in chosen:
        given = [flag for flag, on in (("--decode-only", args.decode_only),
                                       ("--prefill-only", args.prefill_only),
                                       ("--route", args.route)) if on]
        if given:
            raise SystemExit(f"benchmarks/matmul.py: {', '.join(given)}: options of the dense "
                             f"section, which this run leaves out: add --dense (or "
                             f"--all-sections) or drop them")
    return chosen


def section_args(module, args) -> argparse.Namespace:
    """The section's own options at their defaults, with this run's --quick, --check-only,
    --repeats and (where the section has one) --dtype."""
    own = module.parser().parse_args(["--quick"] if args.quick else [])
    own.check_only, own.repeats = args.check_only, args.repeats
    if hasattr(own, "dtype"):
        own.dtype = args.dtype
    return own


def section_body(name: str, args):
    """What ktile.bench.sections.run calls for section `name` (not dense): the script's
    run() and its table."""
    from ktile.bench import sections

    def body(rows: list) -> None:
        module = sections.load(SECTIONS[name])
        print(f"\n== {name} ({SECTIONS[name]}) ==", flush=True)
        rows.extend(module.run(section_args(module, args)))
        print()
        module.print_table(rows)
    return body


def row_correct(row: dict) -> bool:
    """Every section's rows say "correct"; fp8's also "fast_correct" (the fast accumulation)."""
    return bool(row.get("correct", False) and row.get("fast_correct", True))


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    chosen = selected(args)
    import torch
    if not torch.cuda.is_available():
        print("benchmarks/matmul.py: needs a CUDA GPU (torch.cuda.is_available() is False)")
        return 2
    from ktile.bench import sections
    copy = None
    if "dense" in chosen:
        from ktile.bench.timing import copy_gbps
        copy = copy_gbps()
        print(f"{torch.cuda.get_device_name()}: copy {copy:.0f} GB/s (read + write)")
    else:
        print(f"{torch.cuda.get_device_name()}: sections {', '.join(chosen)}")

    def dense(rows: list) -> None:
        for kind, m, n, k in shapes(args.quick):
            if (args.decode_only and kind != "decode") or \
                    (args.prefill_only and kind != "prefill"):
                continue
            rows.append(measure(kind, m, n, k, args, copy))
            print_table(rows[-1:])
        print()
        print_table(rows)

    done = {}
    for name in chosen:
        body = dense if name == "dense" else section_body(name, args)
        done[name] = sections.run(name, body, row_correct)
        if torch.cuda.is_initialized():
            torch.cuda.empty_cache()
    if len(done) > 1 or "error" in done.get("dense", {}):
        sections.print_summary(done)
    rows = done.get("dense", {"rows": []})["rows"]
    result = {"device": torch.cuda.get_device_name(), "copy_gbps": copy,
              "torch": torch.__version__, "host": platform.node(), "args": vars(args),
              "results": rows, **{name: done[name] for name in done if name != "dense"},
              "sections": sections.summary(done)}
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "matmul.json"), "w") as f:
            json.dump(result, f, indent=1)
        drawn = plot(rows, os.path.join(args.out, "matmul.png")) if rows else False
        print(f"wrote {args.out}/matmul.json{' and matmul.png' if drawn else ''}")
    return 0 if all(s["correct"] for s in done.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
