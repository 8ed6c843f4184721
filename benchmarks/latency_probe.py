"""The norms' and softmax's latency at 1-32 rows (issue #13), every candidate route side by side
in one process: the one A/B the latency routes never had.

At 1-32 rows one block per row is one launch's latency. This times, for rms_norm,
fused_add_rms_norm and layer_norm at 2048 / 4096 / 8192 columns and softmax (fp32) at 4096, at
1, 8 and 32 rows: the route the table picks (`routed`), each one-tile-a-warp shape pinned
(`C16`, `C32`, `C64`: warps of one flat 16 x C tile of the row's view, as many warps as cover
the row, at most 16; the latency routes are C16 up to 4096 and C32 at 8192, the many-rows
routes C64; `many`: the route 4096 rows take, pinned, where it is none of those) and the
Triton kernel of ktile/ops/alternatives_triton.py (what the scoreboard
compares against), L2 flushed and the host's cost hidden (ktile/bench/timing.py). Every case is
checked against the torch formula in fp32 before it is timed: a wrong kernel prints WRONG and
is not timed. The kernels are built first, in parallel (`build_traces`).

    python benchmarks/latency_probe.py [--json F] [--ops rms_norm,...] [--rows 1,8,32]
    python benchmarks/latency_probe.py --ncu        # each kernel launched once, for Nsight

`--ncu`: after one warm-up call of every case, each case's kernel(s) once, in the order it
prints, between cudaProfilerStart and cudaProfilerStop (each in an NVTX range named after the
case), so that Nsight Compute profiles only those, side by side:

    ncu --profile-from-start off --clock-control none --nvtx --csv \
        --section WarpStateStats --metrics gpu__time_duration.sum,smsp__inst_executed.sum,\
    sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,\
    launch__block_size,launch__grid_size,smsp__cycles_active.max \
        python benchmarks/latency_probe.py --ncu --ops rms_norm,layer_norm --rows 1

WarpStateStats splits each warp's cycles by stall reason: `imc_miss` (the constant cache: the
kernel's parameters), `no_instruction` (the instruction cache), `long_scoreboard` (global
memory), `barrier`, `short_scoreboard` (shared memory, MUFU, shuffles), `wait` (fixed
latencies). `--dry`: build only (no GPU needed: checks the routes build for sm_90a and prints
the cases).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

EPS = 1e-5
ROWS = (1, 8, 32)
WIDTHS = (2048, 4096, 8192)
SOFTMAX_WIDTHS = (4096,)
OPS = ("rms_norm", "fused_add_rms_norm", "layer_norm", "softmax")
SHAPES = (16, 32, 64)            # the pinned one-tile-a-warp shapes: C of a 16 x C tile
MAX_WARPS = 16
MANY_ROWS = 4096                 # `many`: the route of this many rows, where no C column has it
KERNEL_NAMES = {"rms_norm": "rms_norm_tiles", "fused_add_rms_norm": "fused_add_rms_norm_tiles",
                "layer_norm": "layer_norm_rows", "softmax": "softmax_held"}
DTYPES = {"softmax": "fp32"}     # as benchmarks/ops.py times softmax
TOLERANCE = 2.5e-2               # max |error| / max(1, max |reference|): bf16's rounding passes


def dtype_of(op: str) -> str:
    return DTYPES.get(op, "bf16")


def pinned_routes(op: str, cols: int) -> dict:
    """name -> Route: one flat 16 x C tile a warp, for each C whose warps cover `cols` in at
    most MAX_WARPS warps."""
    from ktile.ops._library import Route
    from ktile.ops.layernorm.config import RowTileRoute   # layer_norm's plan tells them apart
    kind = RowTileRoute if op == "layer_norm" else Route
    routes = {}
    for c in SHAPES:
        warps = cols // (16 * c)
        if 1 <= warps <= MAX_WARPS and warps * 16 * c == cols:
            routes[f"C{c}"] = kind(KERNEL_NAMES[op], {"C": c, "HELD": 1, "WARPS": warps},
                                   max_cols=cols, cols_multiple=16)
    return routes


def cases(ops, rows_list) -> list[tuple[str, int, int]]:
    out = []
    for op in ops:
        for cols in (SOFTMAX_WIDTHS if op == "softmax" else WIDTHS):
            out += [(op, rows, cols) for rows in rows_list]
    return out


def inputs(op: str, rows: int, cols: int, device: str) -> tuple:
    import torch
    dtype = getattr(torch, {"bf16": "bfloat16", "fp32": "float32"}[dtype_of(op)])
    g = torch.Generator().manual_seed(rows * 100003 + cols)
    x = (torch.randn(rows, cols, generator=g) * 2 + 0.5).to(dtype).to(device)
    if op == "softmax":
        return (x,)
    w = (torch.rand(cols, generator=g) + 0.5).to(dtype).to(device)
    if op == "rms_norm":
        return (x, w)
    other = (torch.randn(cols if op == "layer_norm" else (rows, cols), generator=g))
    return (x, other.to(dtype).to(device), w) if op == "fused_add_rms_norm" else \
        (x, w, other.to(dtype).to(device))


def reference(op: str, args: tuple):
    """The op's result in fp32 (torch's formulas, rounded where the engines round)."""
    import torch
    f = [a.float() for a in args]
    if op == "softmax":
        return torch.softmax(f[0], -1)
    if op == "layer_norm":
        return torch.nn.functional.layer_norm(f[0], f[0].shape[-1:], f[1], f[2], EPS)
    x = f[0] if op == "rms_norm" else (f[0] + f[1]).to(args[0].dtype).float()
    w = f[-1] if op == "fused_add_rms_norm" else f[1]
    normed = (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)).to(args[0].dtype).float()
    return normed * w


def ktile_call(op: str, args: tuple):
    import ktile.ops as ops
    if op == "rms_norm":
        return lambda: ops.rms_norm(args[0], args[1], EPS)
    if op == "fused_add_rms_norm":
        return lambda: ops.fused_add_rms_norm(args[0], args[1], args[2], EPS)[0]
    if op == "layer_norm":
        return lambda: ops.layer_norm(args[0], args[1], args[2], EPS)
    return lambda: ops.softmax(args[0])


def triton_call(op: str, args: tuple):
    from ktile.ops import alternatives_triton as alt
    if op == "rms_norm":
        return lambda: alt.rms_norm(args[0], args[1], EPS)
    if op == "fused_add_rms_norm":
        return lambda: alt.fused_add_rms_norm(args[0], args[1], args[2], EPS)[0]
    if op == "layer_norm":
        return lambda: alt.layer_norm(args[0], args[1], args[2], EPS)
    return lambda: alt.softmax(args[0])


def variants(op: str, rows: int, cols: int, args: tuple, with_triton: bool) -> dict:
    """name -> (a call returning the result, the route or None, its description)."""
    from ktile.ops import _library as lib
    from ktile.tools.check_plan import find_op
    table = find_op(op).table
    call = ktile_call(op, args)
    routed = table.choose(rows, cols, "sm_90a")
    out = {"routed": (call, None, f"{routed.kernel} {routed.constants}")}
    pinned = pinned_routes(op, cols)
    many = table.choose(MANY_ROWS, cols, "sm_90a")      # the route of many rows, pinned here
    if many.kernel == KERNEL_NAMES[op] and all(r.constants != many.constants
                                               for r in pinned.values()):
        pinned["many"] = many
    for name, route in pinned.items():
        out[name] = (pinned_call(lib, table, route, call), route, str(route.constants))
    if with_triton:
        out["triton"] = (triton_call(op, args), None, "alternatives_triton")
    return out


def pinned_call(lib, table, route, call):
    def run():
        with lib.pinned(table, route):
            return call()
    return run


def prebuild(case_list) -> int:
    """Build every ktile kernel of the cases for sm_90a, in parallel; the number of traces."""
    from ktile.runtime.builds import build_traces, building
    traces = []
    with building("sm_90a", compile=False, collect=traces):
        for op, rows, cols in case_list:
            args = inputs(op, rows, cols, "cpu")
            for name, (call, _, _) in variants(op, rows, cols, args, False).items():
                call()
    build_traces(traces)
    return len(traces)


def check(op: str, call, args: tuple) -> float:
    """max |error| / max(1, max |reference|) of one call."""
    got = call().float()
    want = reference(op, args)
    return float((got - want).abs().max()) / max(1.0, float(want.abs().max()))


def probe(case_list, with_triton: bool, log=print, device: str = "cuda",
          timer=None) -> list[dict]:
    """Each case's variants checked, then timed (`timer`: ktile.bench.timing.time_call)
    where correct."""
    if timer is None:
        from ktile.bench.timing import time_call as timer
    results = []
    for op, rows, cols in case_list:
        args = inputs(op, rows, cols, device)
        row = {"op": op, "rows": rows, "cols": cols, "dtype": dtype_of(op), "variants": {}}
        for name, (call, _, what) in variants(op, rows, cols, args, with_triton).items():
            error = check(op, call, args)
            entry = {"what": what, "error": error}
            if error > TOLERANCE:
                entry["wrong"] = True
            else:
                entry.update(timer(call).as_dict())
            row["variants"][name] = entry
        results.append(row)
        log(line(row))
    return results


def line(row: dict) -> str:
    cells = []
    for name, v in row["variants"].items():
        cells.append(f"{name} " + ("WRONG" if v.get("wrong") else f"{v['ms'] * 1e3:5.2f}"))
    return f"{row['op']:<19} {row['rows']:>2} x {row['cols']:<5} " + "  ".join(cells) + "  (us)"


def ncu_pass(case_list, with_triton: bool, log=print) -> None:
    """Every case's calls once as warm-up (builds, Triton's JIT), then once each in order."""
    import torch
    calls = []
    for op, rows, cols in case_list:
        args = inputs(op, rows, cols, "cuda")
        for name, (call, _, what) in variants(op, rows, cols, args, with_triton).items():
            calls.append((f"{op} {rows}x{cols} {name} ({what})", call))
    for _, call in calls:
        call()
    torch.cuda.synchronize()
    log(f"warm-up: {len(calls)} calls; then, in order, between cudaProfilerStart and Stop "
        f"(ncu --profile-from-start off):")
    torch.cuda.profiler.start()
    for i, (label, call) in enumerate(calls):
        log(f"  {i:3d} {label}")
        torch.cuda.nvtx.range_push(label.split(" (")[0])
        call()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--rows", default=",".join(map(str, ROWS)))
    parser.add_argument("--ncu", action="store_true", help="launch each kernel once (Nsight)")
    parser.add_argument("--dry", action="store_true", help="build only; no GPU needed")
    parser.add_argument("--no-triton", action="store_true")
    args = parser.parse_args(argv)
    ops = [o for o in args.ops.split(",") if o]
    unknown = [o for o in ops if o not in OPS]
    if unknown:
        parser.error(f"--ops: {unknown} not among {list(OPS)}")
    case_list = cases(ops, [int(r) for r in args.rows.split(",")])
    started = time.perf_counter()
    built = prebuild(case_list)
    print(f"built {built} traces for sm_90a in {time.perf_counter() - started:.0f} s")
    if args.dry:
        for op, rows, cols in case_list:
            names = variants(op, rows, cols, inputs(op, rows, cols, "cpu"), False)
            print(f"{op} {rows}x{cols}: " + ", ".join(f"{n} [{v[2]}]" for n, v in names.items()))
        return 0
    with_triton = not args.no_triton
    if with_triton:
        try:
            import triton  # noqa: F401
        except ImportError:
            print("triton does not import: no Triton column")
            with_triton = False
    if args.ncu:
        ncu_pass(case_list, with_triton)
        return 0
    import torch
    results = probe(case_list, with_triton)
    print(f"done in {time.perf_counter() - started:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "results": results}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
