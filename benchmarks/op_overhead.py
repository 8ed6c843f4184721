"""The host cost of a `ktile.ops` call: what Python does per call before (and around) the launch.

    python3 benchmarks/op_overhead.py --quick --json /tmp/oh.json
    python3 benchmarks/op_overhead.py --only rms_norm,add --calls 2000
    python3 benchmarks/op_overhead.py --stub gpucall --alternate 1,32,512 --cpu-only

Two measurements per call of `ktile.ops.warmup_calls.CALLS` (every public op function and its
forms), each the median over repeats of the mean per call of N back-to-back calls:

- `python_us` (the least over repeats: a loaded machine's noise left out): CPU tensors with
  the op kernels stubbed out (`_library._RUNNER` given a no-op
  runner), so only the checks, planning, views and allocations before the launch are counted.
  With `--stub gpucall` the kernels go through the GPU call path instead, its launch stubbed
  (`stub_gpu.py`): the op layer and the `GpuCall` (signature, fast path, and a new
  signature's preparation) together, on the CPU.
- on a CUDA machine, `cuda_us`: real calls on GPU tensors, N in a row with no sync (timed on
  the host: the launch path's full host cost while the GPU keeps up), and `torch_us`: the same
  for the torch equivalent where there is one.

Prints a table; `--json PATH` writes the rows. Shapes: `--rows` x `--cols` (default 32 x 4096,
a decode step's tokens at a 7B model's width); `--alternate 1,32,512` cycles the calls through
those row counts instead (an engine whose token count changes every call).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SIZES = {"vocab_size": 1024, "head_dim": 128, "num_kv_heads": 8, "inner": 4096}


def _torch_equivalents():
    """function name -> f(*args) doing the same with torch (None: none measured)."""
    import torch
    import torch.nn.functional as F

    def rms(x, w, eps=1e-6):
        v = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(v + eps)).to(x.dtype) * w

    def fused(x, r, w, eps=1e-6):
        r2 = x + r
        return rms(r2, w, eps), r2

    def act_and_mul(x, approximate="none", act=None):
        h = x.shape[-1] // 2
        return act(x[..., :h]) * x[..., h:]

    def int8(x, scale=None):
        s = x.abs().amax(-1, keepdim=True).float() / 127 if scale is None else scale
        return (x.float() / s).round().clamp(-128, 127).to(torch.int8), s

    return {
        "rms_norm": rms, "fused_add_rms_norm": fused,
        "layer_norm": lambda x, w, b, eps=1e-5: F.layer_norm(x, x.shape[-1:], w, b, eps),
        "silu_and_mul": lambda x: act_and_mul(x, act=F.silu),
        "gelu_and_mul": lambda x, a="none": act_and_mul(x, act=lambda t: F.gelu(t, approximate=a)),
        "softmax": lambda x: torch.softmax(x, -1),
        "add": torch.add, "sub": torch.sub, "mul": torch.mul, "maximum": torch.maximum,
        "minimum": torch.minimum, "exp": torch.exp, "relu": torch.relu, "silu": F.silu,
        "gelu": lambda x, a="none": F.gelu(x, approximate=a), "neg": torch.neg, "abs": torch.abs,
        "dropout": lambda x, p, seed: F.dropout(x, p),
        "embedding": lambda ids, w: F.embedding(ids, w),
        "linear": F.linear, "matmul": torch.matmul,
        "scaled_int8_quant": int8,
        "dequantize": lambda q, s, dtype: (q.float() * s).to(dtype),
    }


def _per_call(fn, arg_sets, calls: int, repeats: int, sync=None, best=False) -> float:
    """The median (`best`: the least) over `repeats` of the mean microseconds per call of
    `calls` calls in a row, cycling through `arg_sets` (one call's arguments each)."""
    for args in arg_sets * 2:          # builds, tables, caches: warm
        fn(*args)
    if sync:
        sync()
    sequence = [arg_sets[i % len(arg_sets)] for i in range(calls)]
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for args in sequence:
            fn(*args)
        times.append((time.perf_counter() - t0) / calls * 1e6)
        if sync:
            sync()
    return min(times) if best else statistics.median(times)


def _runner(stub: str):
    """The stand-in for the op kernels' launches: a no-op, or the stubbed GPU call path."""
    if stub == "gpucall":
        here = os.path.dirname(os.path.abspath(__file__))
        if here not in sys.path:
            sys.path.insert(0, here)
        from stub_gpu import stubbed_gpu    # a sibling file ('benchmarks' is not a package)
        return stubbed_gpu()
    return contextlib.nullcontext(lambda kernel, *a, **k: None)


def measure(names, rows: list[int], cols: int, calls: int, repeats: int, cuda: bool,
            stub: str = "runner") -> list[dict]:
    import torch

    import ktile.ops as ops
    from ktile.ops import _library as lib
    from ktile.ops.warmup_calls import CALLS

    equivalents = _torch_equivalents()
    out = []
    for name in names:
        call = CALLS[name]
        fn = getattr(ops, call.function)
        row = {"call": name, "function": call.function, "rows": rows, "cols": cols,
               "stub": stub}
        args = [call.make(r, cols, torch.bfloat16, SIZES, "cpu") for r in rows]
        with _runner(stub) as runner:
            lib._RUNNER.append(runner)
            try:
                row["python_us"] = round(_per_call(fn, args, calls, repeats, best=True), 2)
            except Exception as e:                      # noqa: BLE001 - reported per row
                row["python_error"] = f"{type(e).__name__}: {e}"[:200]
            finally:
                lib._RUNNER.pop()
        if cuda:
            args = [call.make(r, cols, torch.bfloat16, SIZES, "cuda") for r in rows]
            sync = torch.cuda.synchronize
            try:
                row["cuda_us"] = round(_per_call(fn, args, calls, repeats, sync), 2)
            except Exception as e:                      # noqa: BLE001
                row["cuda_error"] = f"{type(e).__name__}: {e}"[:200]
            ref = equivalents.get(call.function)
            if ref is not None:
                try:
                    row["torch_us"] = round(_per_call(ref, args, calls, repeats, sync), 2)
                except Exception as e:                  # noqa: BLE001
                    row["torch_error"] = f"{type(e).__name__}: {e}"[:200]
        out.append(row)
        print(_line(row), flush=True)
    return out


def _line(row: dict) -> str:
    def cell(key):
        v = row.get(key)
        return f"{v:10.1f}" if v is not None else (f"{'error':>10}" if f"{key[:-3]}_error" in row
                                                   else f"{'-':>10}")
    return f"{row['call']:30} {cell('python_us')} {cell('cuda_us')} {cell('torch_us')}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="benchmarks/op_overhead.py", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer calls and repeats")
    p.add_argument("--only", help="comma-separated call names (ktile.ops.warmup_calls.CALLS)")
    p.add_argument("--rows", type=int, default=32)
    p.add_argument("--cols", type=int, default=4096)
    p.add_argument("--alternate", help="comma-separated row counts the calls cycle through "
                                       "(instead of --rows)")
    p.add_argument("--stub", choices=("runner", "gpucall"), default="runner",
                   help="python_us with the kernels a no-op (runner) or through the GPU call "
                        "path with its launch stubbed (gpucall)")
    p.add_argument("--calls", type=int, help="calls per repeat (default 300, --quick 100)")
    p.add_argument("--repeats", type=int, help="repeats (default 7, --quick 3)")
    p.add_argument("--cpu-only", action="store_true", help="skip the CUDA columns")
    p.add_argument("--json", help="write the rows here")
    a = p.parse_args(argv)

    import torch

    from ktile.ops.warmup_calls import CALLS
    names = a.only.split(",") if a.only else list(CALLS)
    unknown = [n for n in names if n not in CALLS]
    if unknown:
        print(f"unknown call(s) {unknown}; the calls are: {', '.join(CALLS)}", file=sys.stderr)
        return 2
    calls = a.calls or (100 if a.quick else 300)
    repeats = a.repeats or (3 if a.quick else 7)
    cuda = torch.cuda.is_available() and not a.cpu_only
    counts = [int(r) for r in a.alternate.split(",")] if a.alternate else [a.rows]
    shown = "|".join(map(str, counts))
    print(f"{'call':30} {'python_us':>10} {'cuda_us':>10} {'torch_us':>10}   "
          f"({shown} x {a.cols} bf16, {calls} calls x {repeats}, stub: {a.stub})")
    rows = measure(names, counts, a.cols, calls, repeats, cuda, a.stub)
    if a.json:
        meta = {"machine": platform.node(), "processor": platform.processor(),
                "cpus": os.cpu_count(), "torch": torch.__version__,
                "gpu": torch.cuda.get_device_name() if cuda else None,
                "rows": counts, "cols": a.cols, "calls": calls, "repeats": repeats,
                "stub": a.stub}
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
