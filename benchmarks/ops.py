"""Time the op library on a GPU against torch eager, torch.compile and (for the norms) a Triton
kernel written here, across rows × widths; write DIR/<op>.json and DIR/<op>.png.

    python benchmarks/ops.py --out results/ops [--quick] [--only rms_norm,layer_norm]

Each timed call follows an L2 flush (a write of a buffer larger than L2); the time is the
median of CUDA-event times of single calls. Bandwidth is the bytes an op must move (read +
written) over the time, also shown as % of a device-to-device copy measured in the same run.
Other ops add an entry to BENCHES: (make inputs, ktile call, torch call, triton call or None,
bytes moved)."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import ktile.ops as ops  # noqa: E402

ROWS = (1, 8, 32, 256, 4096, 16384)
WIDTHS = (2048, 4096, 5120, 8192, 14336)
QUICK_ROWS = (1, 32, 4096)
QUICK_WIDTHS = (4096, 14336)
REPEATS = 30
EPS = 1e-6


# ---- timing ------------------------------------------------------------------------------

_FLUSH = None


def flush_l2() -> None:
    global _FLUSH
    if _FLUSH is None:   # 256 MiB: well past the H200's 50 MiB L2
        _FLUSH = torch.empty(64 << 20, dtype=torch.int32, device="cuda")
    _FLUSH.zero_()


def median_ms(fn, repeats: int = REPEATS) -> float:
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        flush_l2()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def copy_gbps() -> float:
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src), 10)
    return 2 * src.numel() / ms / 1e6


# ---- triton baselines (one program per row, the row in registers) -------------------------

def triton_norms():
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def rms(x, w, o, cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        xs = tl.load(x + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
        inv = tl.rsqrt(tl.sum(xs * xs, 0) / cols + eps)
        ws = tl.load(w + offs, mask=mask).to(tl.float32)
        normed = (xs * inv).to(o.dtype.element_ty).to(tl.float32)
        tl.store(o + row * cols + offs, (normed * ws).to(o.dtype.element_ty), mask=mask)

    @triton.jit
    def layer(x, w, b, o, cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        xs = tl.load(x + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(xs, 0) / cols
        d = tl.where(mask, xs - mean, 0.0)
        rstd = tl.rsqrt(tl.sum(d * d, 0) / cols + eps)
        ws = tl.load(w + offs, mask=mask).to(tl.float32)
        bs = tl.load(b + offs, mask=mask).to(tl.float32)
        tl.store(o + row * cols + offs, (d * rstd * ws + bs).to(o.dtype.element_ty), mask=mask)

    def launch(kernel, x, *args):
        rows, cols = x.shape
        o = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        kernel[(rows,)](x, *args, o, cols, EPS, BLOCK=block, num_warps=min(16, block // 256) or 1)
        return o
    return {"rms_norm": lambda x, w: launch(rms, x, w),
            "layer_norm": lambda x, w, b: launch(layer, x, w, b)}


# ---- the ops -----------------------------------------------------------------------------

def rand(*shape):
    return torch.randn(*shape, device="cuda").bfloat16()


def torch_rms_norm(x, w):
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, EPS)


def torch_fused(x, r, w):
    h = x + r
    return torch_rms_norm(h, w), h


def torch_layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, EPS)


def torch_ln_backward(dy, x, w, mean, rstd):
    return torch.ops.aten.native_layer_norm_backward(dy, x, (x.shape[-1],), mean, rstd, w, w,
                                                     (True, True, True))


def ln_backward_inputs(rows, cols):
    x, dy, w = rand(rows, cols), rand(rows, cols), rand(cols)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x.float(), (cols,), w.float(), None, EPS)
    return dy, x, w, mean, rstd


# name: (inputs(rows, cols), ktile, torch, triton name or None, bytes(rows, cols) in bf16)
BENCHES = {
    "rms_norm": (lambda r, c: (rand(r, c), rand(c)),
                 lambda x, w: ops.rms_norm(x, w, EPS), torch_rms_norm, "rms_norm",
                 lambda r, c: 2 * (2 * r * c + c)),
    "fused_add_rms_norm": (lambda r, c: (rand(r, c), rand(r, c), rand(c)),
                           lambda x, res, w: ops.fused_add_rms_norm(x, res, w, EPS),
                           torch_fused, None, lambda r, c: 2 * (4 * r * c + c)),
    "layer_norm": (lambda r, c: (rand(r, c), rand(c), rand(c)),
                   lambda x, w, b: ops.layer_norm(x, w, b, EPS), torch_layer_norm, "layer_norm",
                   lambda r, c: 2 * (2 * r * c + 2 * c)),
    "layer_norm_backward": (ln_backward_inputs, ops.layer_norm_backward, torch_ln_backward,
                            None, lambda r, c: 2 * (3 * r * c + 3 * c) + 8 * r),
}


def bench_op(name: str, rows_list, widths, copy: float, triton) -> list[dict]:
    make, ktile_fn, torch_fn, triton_name, nbytes = BENCHES[name]
    compiled = torch.compile(torch_fn)
    results = []
    for cols in widths:
        for rows in rows_list:
            args = make(rows, cols)
            row = {"rows": rows, "cols": cols, "bytes": nbytes(rows, cols)}
            callers = {"ktile": ktile_fn, "torch": torch_fn, "torch.compile": compiled}
            if triton is not None and triton_name is not None:
                callers["triton"] = triton[triton_name]
            for label, fn in callers.items():
                try:
                    ms = median_ms(lambda: fn(*args))
                except Exception as err:   # a baseline that cannot run this shape: recorded
                    row[label] = {"error": f"{type(err).__name__}: {err}"[:200]}
                    continue
                gbps = row["bytes"] / ms / 1e6
                row[label] = {"ms": ms, "gbps": gbps, "of_copy": gbps / copy}
            results.append(row)
            print(name, rows, cols, {k: round(v["ms"], 4) for k, v in row.items()
                                     if isinstance(v, dict) and "ms" in v}, flush=True)
    return results


def plot(name: str, results: list[dict], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax_time, ax_bw) = plt.subplots(1, 2, figsize=(12, 4.5))
    for cols in sorted({r["cols"] for r in results}):
        mine = [r for r in results if r["cols"] == cols]
        for label, style in (("ktile", "-o"), ("torch", "--"), ("torch.compile", ":"),
                             ("triton", "-.")):
            points = [(r["rows"], r[label]) for r in mine if "ms" in r.get(label, {})]
            if not points:
                continue
            xs = [p[0] for p in points]
            ax_time.plot(xs, [p[1]["ms"] * 1e3 for p in points], style, label=f"{label} {cols}")
            ax_bw.plot(xs, [100 * p[1]["of_copy"] for p in points], style,
                       label=f"{label} {cols}")
    for ax, ylabel in ((ax_time, "µs"), (ax_bw, "% of copy bandwidth")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("rows")
        ax.set_ylabel(ylabel)
    ax_time.set_yscale("log")
    ax_bw.legend(fontsize=6, ncol=2)
    fig.suptitle(f"{name} ({torch.cuda.get_device_name()})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for <op>.json and <op>.png")
    parser.add_argument("--quick", action="store_true", help="fewer shapes (about a minute)")
    parser.add_argument("--only", default="", help="comma-separated op names")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("benchmarks/ops.py needs a GPU", file=sys.stderr)
        return 2
    names = [n for n in args.only.split(",") if n] or list(BENCHES)
    unknown = sorted(set(names) - set(BENCHES))
    if unknown:
        print(f"unknown ops {unknown}; known: {sorted(BENCHES)}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    rows, widths = (QUICK_ROWS, QUICK_WIDTHS) if args.quick else (ROWS, WIDTHS)
    copy, triton = copy_gbps(), triton_norms()
    started = time.time()
    for name in names:
        results = bench_op(name, rows, widths, copy, triton)
        meta = {"op": name, "device": torch.cuda.get_device_name(), "torch": torch.__version__,
                "copy_gbps": copy, "flush": "L2 flushed before each call", "timing": "median"}
        with open(os.path.join(args.out, f"{name}.json"), "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
        try:
            plot(name, results, os.path.join(args.out, f"{name}.png"))
        except ImportError:
            print("matplotlib missing: no plot", file=sys.stderr)
    print(f"done in {time.time() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
