"""Why an op is slow: the CUDA kernels each caller launches and their device times, per op and
shape, and a driver for Nsight Compute. Needs a CUDA GPU.

    python3 benchmarks/profile_ops.py --out prof.json [--ops rotary_embedding,softmax]
    ncu --clock-control none --nvtx --nvtx-include "regex:prof_.*/" \
        --section SpeedOfLight --section Occupancy --section LaunchStats \
        --metrics smsp__inst_executed.sum python3 benchmarks/profile_ops.py --ncu

The first form runs each op's ktile call and its alternatives (torch eager, the Triton kernel
written for the comparison; not torch.compile) at every `--quick` shape of the op benchmark
(ktile/bench), 3 warm-up calls, then 5 calls under torch.profiler: each kernel's launches and
device time per call (warm L2: these are not the benchmark's figures), and whether a call
synchronises the host (torch's sync debug mode; a prototype that may miss some). The second
form calls each op's ktile and Triton callers once at one shape inside an NVTX range
`prof_<op>_<caller>`, after two warm-up calls, so ncu profiles exactly those kernels.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DEFAULT_OPS = ("rotary_embedding", "silu_and_mul", "gelu_and_mul", "scaled_int8_quant",
               "scaled_fp8_quant", "dropout", "embedding", "softmax", "rms_norm", "layer_norm",
               "gelu", "fused_add_rms_norm_")
# (op, index into its --quick shapes) profiled under ncu
NCU_PICKS = (("rotary_embedding", 0), ("rotary_embedding", -1), ("silu_and_mul", -1),
             ("gelu_and_mul", -1), ("scaled_int8_quant", -1), ("scaled_fp8_quant", -1),
             ("dropout", -1), ("embedding", -1), ("softmax", 1), ("rms_norm", 0),
             ("layer_norm", -1))


def kernels_of(fn, args_of, calls: int = 5) -> dict:
    """{kernel name: {"calls_per_op", "us_per_op"}} of `fn(*args_of())` under torch.profiler."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        fn(*args_of())
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn(*args_of())
        torch.cuda.synchronize()
    found: dict = {}
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            entry = found.setdefault(event.name[:120], [0, 0.0])
            entry[0] += 1
            entry[1] += event.device_time
    return {k: {"calls_per_op": n / calls, "us_per_op": t / calls} for k, (n, t) in found.items()}


def synchronises(fn, args) -> str:
    """"none", or torch's message for the first synchronising operation of one call."""
    import torch
    torch.cuda.set_sync_debug_mode(2)
    try:
        fn(*args)
        return "none"
    except RuntimeError as err:
        return str(err)[:200]
    finally:
        torch.cuda.set_sync_debug_mode(0)


def profile_ops(names) -> dict:
    from ktile.bench import cases, runner
    triton, _ = runner.triton_table()
    out = {}
    for name in names:
        bench = cases.benches()[name]
        found = runner.callers(bench, triton, skip=("torch.compile",))
        for shape in bench.quick:
            inputs = bench.make(shape)
            record = {}
            for label, fn in found.items():
                fresh = lambda: runner._fresh(bench, inputs)   # noqa: E731 (in-place inputs)
                try:
                    record[label] = {"kernels": kernels_of(fn, fresh),
                                     "synchronises": synchronises(fn, fresh())}
                except Exception as err:          # an alternative that fails is recorded
                    record[label] = {"failed": f"{type(err).__name__}: {err}"[:200]}
            out[f"{name} {shape.label}"] = record
            print(f"== {name} {shape.label}", flush=True)
            for label, rec in record.items():
                for kernel, v in rec.get("kernels", {}).items():
                    print(f"   {label:7s} {kernel[:70]:70s} x{v['calls_per_op']:.0f} "
                          f"{v['us_per_op']:9.2f} us")
    return out


def ncu_driver() -> None:
    import torch
    from ktile.bench import cases, runner
    triton, _ = runner.triton_table()
    for name, index in NCU_PICKS:
        bench = cases.benches()[name]
        found = runner.callers(bench, triton, skip=("torch.compile",))
        shape = bench.quick[index]
        inputs = bench.make(shape)
        for label in ("ktile", "triton"):
            if label not in found:
                continue
            for _ in range(2):
                found[label](*runner._fresh(bench, inputs))
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push(f"prof_{name}_{label}")
            found[label](*inputs)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
            print("profiled", name, shape.label, label, flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", help="write the profiler's figures as JSON here")
    p.add_argument("--ops", help="comma-separated op names (default: the usual suspects)")
    p.add_argument("--ncu", action="store_true", help="be the driver of an ncu run")
    args = p.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("profile_ops: needs a CUDA GPU", file=sys.stderr)
        return 2
    if args.ncu:
        ncu_driver()
        return 0
    out = profile_ops(args.ops.split(",") if args.ops else DEFAULT_OPS)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
