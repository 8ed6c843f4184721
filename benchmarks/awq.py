"""Time `ktile.ops.awq_gemm` (W4A16, AWQ layout, group 128) on a CUDA GPU against its
baselines, in one process (issue #11).

    python3 benchmarks/awq.py --quick --json /tmp/awq.json    # a subset (~1-2 min with builds)
    python3 benchmarks/awq.py --json /tmp/awq.json            # every shape (~4-6 min)
    python3 benchmarks/awq.py --check-only                    # correctness only, no timing
    python3 benchmarks/awq.py --constants BN=256,STAGES=4 --constants wgmma_ws_nn:BN=128
                                                              # also time pinned variants

Shapes: Qwen3-8B's linear layers, (N, K) in {(6144, 4096), (4096, 4096), (24576, 4096),
(4096, 12288)}; decode M in {1, 2, 4, 8, 16, 32}, prefill M in {512, 2048, 4096}. Inputs: x
bf16 (or --dtype fp16), random 4-bit codes and zeros packed in AWQ's order, scales in
[0.001, 0.021). Every timed function's result is checked first against x · w in fp32 (w
dequantised exactly in fp32 by torch: no 16-bit rounding) with the op reference's tolerance
(ktile/ops/awq/reference.py); a wrong result is reported and not timed.

Columns: decode: ktile (the op as routed: the GEMV and the split-K reduction), `triton` (a
plain Triton W4A16 GEMV, ktile/bench/triton_awq.py), `torch` (torch's dequantisation then
torch.matmul); GB/s on the bytes the product must read (qweight + scales + zeros + x) and %
of the device's copy bandwidth (read + written bytes of a 1 GiB copy, measured here).
Prefill: ktile (awq_dequantize then ktile.ops.matmul), `torch` (torch's dequantisation then
cuBLAS), and `cublas` (cuBLAS on the already dequantised weight: the floor); TFLOP/s.
`--constants [KERNEL:]NAME=VALUE,...` (repeatable) also times the op pinned to a variant: the
route the shape takes (or KERNEL's first route that fits it, else its first), its constants
overridden where given, at each shape whose route has every NAME; checked first like every
contender, reported as `ktile[SPEC]` (JSON and one table line each); an awq_dequant SPEC
(the dequantiser then ktile.ops.matmul) also times the dequantiser alone, `dequant[SPEC]`.
Prefill rows also time `dequant` (ktile.ops.awq_dequantize alone, checked exact to one
rounding) so the GEMM's share shows. Timing: ktile.bench.timing (L2 flushed before each
sample, median of CUDA-event times); decode is also replayed from a CUDA graph (ktile's
decode is a conversion of x and two launches plus Python checks). Exit code 1 when a result
was wrong, 2 without a CUDA GPU.
`run(args) -> list[dict]` is the entry benchmarks/matmul.py can call as a section.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ktile.bench.timing import graphed, timed  # noqa: E402

NK = ((6144, 4096), (4096, 4096), (24576, 4096), (4096, 12288))
DECODE_M = (1, 2, 4, 8, 16, 32)
PREFILL_M = (512, 2048, 4096)
QUICK = (("decode", 1, 4096, 4096), ("decode", 8, 6144, 4096), ("decode", 32, 24576, 4096),
         ("decode", 1, 4096, 12288), ("prefill", 512, 4096, 4096),
         ("prefill", 2048, 24576, 4096), ("prefill", 4096, 4096, 12288))
REVERSE = (0, 4, 1, 5, 2, 6, 3, 7)      # column j of a word sits at nibble REVERSE[j]


def shapes(quick: bool) -> list[tuple[str, int, int, int]]:
    """(kind, M, N, K) of the sweep."""
    if quick:
        return list(QUICK)
    decode = [("decode", m, n, k) for n, k in NK for m in DECODE_M]
    return decode + [("prefill", m, n, k) for n, k in NK for m in PREFILL_M]


def pack(codes):
    """Codes int32 [R, N] (0..15) → AWQ words int32 [R, N/8] (nibble REVERSE[j] ← column j)."""
    import torch
    words = torch.zeros((codes.shape[0], codes.shape[1] // 8), dtype=torch.int64,
                        device=codes.device)
    for j, nibble in enumerate(REVERSE):
        words |= codes[:, j::8].to(torch.int64) << (4 * nibble)
    return (words - (words >= 1 << 31).to(torch.int64) * (1 << 32)).to(torch.int32)


def inputs(m: int, n: int, k: int, dtype):
    import torch
    g = torch.Generator(device="cuda").manual_seed(m * 7 + n * 3 + k)
    x = torch.randn((m, k), generator=g, device="cuda").to(dtype)
    codes = torch.randint(0, 16, (k, n), generator=g, device="cuda", dtype=torch.int32)
    zeros = torch.randint(0, 16, (k // 128, n), generator=g, device="cuda", dtype=torch.int32)
    scales = (torch.rand((k // 128, n), generator=g, device="cuda") * 0.02 + 0.001).to(dtype)
    return x, pack(codes), scales, pack(zeros)


_SHIFTS: dict = {}


def nibble_shifts(device):
    """4 · REVERSE as an int32 tensor on `device`, made once (no copy inside a graph)."""
    import torch
    if device not in _SHIFTS:
        _SHIFTS[device] = torch.tensor([4 * r for r in REVERSE], dtype=torch.int32,
                                       device=device)
    return _SHIFTS[device]


def torch_dequantize(qweight, scales, qzeros, dtype=None):
    """w [K, N] = (q − z) · s by torch ops (the baseline's dequantisation); in fp32 when
    dtype is torch.float32 (the check's exact weights), else in the scales' dtype."""
    shifts = nibble_shifts(qweight.device)
    q = ((qweight[:, :, None] >> shifts) & 0xF).flatten(1)
    z = ((qzeros[:, :, None] >> shifts) & 0xF).flatten(1)
    dtype = dtype or scales.dtype
    z = z.repeat_interleave(128, dim=0).to(dtype)
    s = scales.to(dtype).repeat_interleave(128, dim=0)
    return (q.to(dtype) - z) * s


def check(x, w32, got, dtype: str, rounded_weights: bool) -> tuple[float, float]:
    """(max error, tolerance) against x · w in fp32: the reference's bound (reference.py)."""
    from ktile.ops.awq.reference import ULP
    want = x.float() @ w32
    k = x.shape[1]
    xw = k * float(x.abs().max()) * float(w32.abs().max())
    tol = xw * 2.0 ** -22 + float(want.abs().max()) * ULP[dtype] + 1e-3
    if rounded_weights:
        tol += float((x.float().abs() @ w32.abs()).max()) * ULP[dtype] / 2
    return float((got.float() - want).abs().max()), tol






def contenders(kind: str, x, qweight, scales, qzeros) -> dict:
    """name → (function, whether it rounds the weights to 16 bits first)."""
    import torch
    import ktile.ops as ops
    found = {"ktile": (lambda: ops.awq_gemm(x, qweight, scales, qzeros), kind == "prefill"),
             "torch": (lambda: torch.matmul(x, torch_dequantize(qweight, scales, qzeros)),
                       True)}
    if kind == "decode":
        try:
            from ktile.bench import triton_awq
            found["triton"] = (lambda: triton_awq.awq_gemv(x, qweight, scales, qzeros), False)
        except ImportError:
            pass
    else:
        w = torch_dequantize(qweight, scales, qzeros)
        found["cublas"] = (lambda: torch.matmul(x, w), True)
    return found


def pinned_route(spec: str, m: int, n: int):
    """The awq Route `spec` ([KERNEL:]NAME=VALUE,...) names at M = m on sm_90a, or None where
    it does not apply (KERNEL not this shape's kind of route, a NAME not among its constants)."""
    import dataclasses
    from ktile.ops.awq import config
    kernel, _, given = spec.rpartition(":")
    routed = config.TABLE.choose(m, n, "sm_90a")
    if kernel:
        mine = [r for r in config.TABLE.routes
                if r.kernel == kernel and (r.targets is None or "sm_90a" in r.targets)]
        if not mine:
            raise SystemExit(f"--constants {spec}: no {kernel} route for sm_90a in "
                             f"ktile/ops/awq/config.py")
        base = next((r for r in mine if r.fits(m, n, "sm_90a")), mine[0])
        if (base.kernel == "awq_gemv") != (routed.kernel == "awq_gemv"):
            return None                                 # a decode route at prefill M, or back
    else:
        base = routed
    constants = dict(base.constants)
    for item in filter(None, given.split(",")):
        name, _, value = item.partition("=")
        if name not in constants:
            return None
        constants[name] = int(value)
    return dataclasses.replace(base, constants=constants, max_rows=None, min_rows=None,
                               max_cols=None)


def variants(m: int, n: int, x, qweight, scales, qzeros, specs) -> dict:
    """`ktile[SPEC]` → (the op pinned to SPEC's route, rounds the weights first) where it
    applies to this shape."""
    import ktile.ops as ops
    from ktile.ops import _library as lib
    from ktile.ops.awq import config
    found = {}
    for spec in specs:
        route = pinned_route(spec, m, n)
        if route is None:
            continue

        def fn(route=route):
            with lib.pinned(config.TABLE, route):
                return ops.awq_gemm(x, qweight, scales, qzeros)
        found[f"ktile[{spec}]"] = (fn, route.kernel != "awq_gemv")
        if route.kernel == "awq_dequant":             # the dequantiser alone at SPEC too

            def dequant(route=route):
                with lib.pinned(config.TABLE, route):
                    return ops.awq_dequantize(qweight, scales, qzeros)
            found[f"dequant[{spec}]"] = (dequant, None)
    return found


def check_dequant(w32, got, dtype: str) -> tuple[float, float]:
    """(max error, tolerance) of a 16-bit w against the exact one: half an ulp of each."""
    from ktile.ops.awq.reference import ULP
    return (float((got.float() - w32).abs().max()),
            float(w32.abs().max()) * ULP[dtype] / 2)


def measure(kind: str, m: int, n: int, k: int, args, copy: float) -> dict:
    """One shape: check every contender's result, then time the correct ones."""
    import torch
    from ktile.bench.timing import gbps
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    x, qweight, scales, qzeros = inputs(m, n, k, dtype)
    w32 = torch_dequantize(qweight, scales, qzeros, torch.float32)
    row = {"kind": kind, "m": m, "n": n, "k": k, "dtype": args.dtype, "correct": True}
    nbytes = sum(t.numel() * t.element_size() for t in (qweight, scales, qzeros, x))
    found = contenders(kind, x, qweight, scales, qzeros)
    found.update(variants(m, n, x, qweight, scales, qzeros, args.constants))
    if kind == "prefill":
        import ktile.ops as ops
        found["dequant"] = (lambda: ops.awq_dequantize(qweight, scales, qzeros), None)
    for name, (fn, rounded) in found.items():
        try:
            got = fn()
            err, tol = (check_dequant(w32, got, args.dtype) if rounded is None
                        else check(x, w32, got, args.dtype, rounded))
        except Exception as failure:   # noqa: BLE001 - reported, not fatal
            row[name] = {"error": f"{type(failure).__name__}: {str(failure)[:300]}"}
            row["correct"] &= not name.startswith("ktile")
            continue
        row[name] = {"error_max": err, "tolerance": tol, "correct": err <= tol}
        if err > tol:
            row["correct"] = False
            continue
        if args.check_only:
            continue
        row[name].update(timed(fn, args.repeats))
        if kind == "decode":
            try:
                row[name + "_graph"] = timed(graphed(fn), args.repeats)
            except Exception as failure:   # noqa: BLE001 - a capture refused: reported
                row[name + "_graph"] = {"error": f"{type(failure).__name__}: "
                                                 f"{str(failure)[:300]}"}
    for key in [key for key in row if isinstance(row[key], dict) and "ms" in row[key]]:
        ms = row[key]["ms"]
        row[key]["gbps"] = gbps(nbytes, ms)
        row[key]["pct_copy"] = 100 * gbps(nbytes, ms) / copy
        row[key]["tflops"] = 2 * m * n * k / ms / 1e9
    row["bytes_read"] = nbytes
    return row


def best(row: dict, who: str) -> float | None:
    times = [row.get(key, {}).get("ms") for key in (who, who + "_graph")]
    times = [t for t in times if t]
    return min(times) if times else None


def print_table(rows: list[dict]) -> None:
    print(f"{'kind':8} {'M':>5} {'N':>6} {'K':>6} | {'ktile us':>9} {'triton':>8} "
          f"{'torch':>8} {'cublas':>8} | {'vs torch':>8} | {'ktile %copy/TF':>14} ok")
    for row in rows:
        us = {who: (best(row, who) or float("nan")) * 1e3
              for who in ("ktile", "triton", "torch", "cublas")}
        ratio = us["torch"] / us["ktile"]
        pick = min((row.get(key, {}) for key in ("ktile", "ktile_graph")),
                   key=lambda t: t.get("ms", float("inf")))
        figure = (f"{pick.get('pct_copy', 0):.0f}% copy" if row["kind"] == "decode"
                  else f"{pick.get('tflops', 0):.0f} TF/s")
        print(f"{row['kind']:8} {row['m']:5} {row['n']:6} {row['k']:6} | {us['ktile']:9.1f} "
              f"{us['triton']:8.1f} {us['torch']:8.1f} {us['cublas']:8.1f} | {ratio:7.2f}x | "
              f"{figure:>14} {'yes' if row['correct'] else 'NO'}")
        extra = [key for key in row if key.startswith(("ktile[", "dequant"))]
        for key in extra:
            t = row[key]
            us = (best(row, key) or float("nan")) * 1e3
            text = (t.get("error") if "error" in t and isinstance(t["error"], str)
                    else f"{us:9.1f} us  {us_ktile_ratio(row, key)}"
                    + ("" if t.get("correct", True) else "  WRONG"))
            print(f"{'':8} {'':>5} {'':>6} {'':>6} | {key}: {text}")


def us_ktile_ratio(row: dict, key: str) -> str:
    """`key`'s time against the routed op's (below 1: the variant is faster)."""
    mine, routed = best(row, key), best(row, "ktile")
    return f"{mine / routed:.2f}x routed" if mine and routed else ""


def run(args) -> list[dict]:
    """Every shape of the sweep `args` selects (quick, check_only, dtype, repeats)."""
    from ktile.bench.timing import copy_gbps
    copy = 0.0 if args.check_only else copy_gbps()
    return [measure(*shape, args, copy) | {"copy_gbps": copy} for shape in shapes(args.quick)]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmarks/awq.py", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="a subset of the shapes")
    p.add_argument("--json", metavar="PATH", help="write the rows to this JSON file")
    p.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16")
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--check-only", action="store_true", help="check results, time nothing")
    p.add_argument("--constants", action="append", default=[], metavar="[KERNEL:]NAME=V,...",
                   help="also time the op pinned to these constants (repeatable): the "
                        "shape's route or KERNEL's, e.g. BN=256,STAGES=4 or "
                        "awq_gemv:MB=2,UNROLL=2")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("benchmarks/awq.py: needs a CUDA GPU", file=sys.stderr)
        return 2
    rows = run(args)
    print_table(rows)
    if args.json:
        report = {"device": torch.cuda.get_device_name(), "host": platform.node(),
                  "torch": torch.__version__, "rows": rows}
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0 if all(row["correct"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
