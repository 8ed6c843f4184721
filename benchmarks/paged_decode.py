"""Time `ktile.ops.paged_attention_decode` against a plain Triton paged decode kernel
(ktile/bench/triton_paged_decode.py) and a device copy of the same bytes, on a CUDA GPU, in
one process (issue #12).

    python3 benchmarks/paged_decode.py --quick --json OUT.json    # ~30 s of timing + builds
    python3 benchmarks/paged_decode.py --json OUT.json            # the whole sweep
    python3 benchmarks/paged_decode.py --check-only               # correctness only
    python3 benchmarks/paged_decode.py --quick --constants WARPS=2,STAGES=4 \
        --constants KERNEL=streams --constants D128:PART_PAGES=32 --json OUT.json
                                    # also the kernels at pinned constants, beside the route

Cases: requests {1, 4, 16, 64, 256} x context {512, 4096, 32768} at GQA 32 query / 8 kv heads,
head size 128, bf16, every request at the full context (combinations whose K and V pass 8 GiB
are skipped), and one head size 64 point (16 x 4096). The cache's blocks are shuffled (a
sequence's pages lie anywhere) and its unused rows hold NaN. Every case first checks ktile
and Triton against torch (the pages gathered, then SDPA): a wrong result is reported, never
timed. Then ktile (the op as called: partials and combine included), Triton and the copy are
timed with ktile.bench.timing (L2 flushed before each sample, median of CUDA-event times).

Bytes: the K and V of every request's context (what a decode step must read; the query and
output are under 0.1% and not counted). GB/s = bytes / time; the copy's GB/s counts its read
and its write (2 x bytes / time), so "% of copy" is the share of the device's copy bandwidth
with which the kernel reads the cache. Exit code 1 when a result was wrong, 2 without a GPU.

`--constants [D64:]NAME=V,...` (repeatable) also times the decode kernel and its combine at
the route's constants with these overridden (op.launch, what a call runs), each checked
against torch first; a `D` prefix limits it to that head size. KERNEL=ring, streams or
paged picks paged_decode_ring, paged_decode_streams or paged_decode (kernels.py's
column-split form, the AMD route) at op.SM90's constants (paged: WARPS D / 64); PAGES is
the streams kernel's, STAGES the ring's (a name the kernel lacks is dropped);
PART_PAGES=0 runs one partition a (seq, kv head) (unsplit). A variant that fails to build
(the ring's STAGES x WARPS x 2 <= 16 TMA copies, say) is shown with its error, not timed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HEADS, KV_HEADS, HEAD_SIZE = 32, 8, 128
REQUESTS = (1, 4, 16, 64, 256)
CONTEXTS = (512, 4096, 32768)
QUICK = ((1, 32768), (16, 4096), (64, 4096), (256, 512))
MAX_BYTES = 8 << 30


def kv_bytes(requests: int, context: int, d: int = HEAD_SIZE) -> int:
    return requests * context * KV_HEADS * d * 2 * 2          # K and V, 2 bytes an element


def cases(quick: bool) -> list[dict]:
    grid = QUICK if quick else [(r, c) for r in REQUESTS for c in CONTEXTS]
    rows = [{"requests": r, "context": c, "d": HEAD_SIZE} for r, c in grid
            if kv_bytes(r, c) <= MAX_BYTES]
    return rows + [{"requests": 16, "context": 4096, "d": 64}]


KERNELS = {"ring": "paged_decode_ring", "streams": "paged_decode_streams",
           "paged": "paged_decode"}


def parse_constants(spec: str) -> tuple[int | None, str | None, dict]:
    """`[D64:]NAME=V,...` -> (the head size it is for or None, the kernel KERNEL names or None,
    {NAME: int})."""
    d = None
    if ":" in spec:
        head, spec = spec.split(":", 1)
        d = int(head.lstrip("Dd"))
    pairs = dict(kv.split("=", 1) for kv in spec.split(","))
    kernel = pairs.pop("KERNEL", None)
    if kernel is not None and kernel not in KERNELS:
        raise SystemExit(f"--constants {spec}: KERNEL must be one of {sorted(KERNELS)}")
    unknown = set(pairs) - {"WARPS", "PAGES", "STAGES", "PART_PAGES"}
    if unknown:
        raise SystemExit(f"--constants {spec}: {sorted(unknown)} are no constants of the "
                         f"decode kernels; give WARPS, PAGES (streams), STAGES (ring), "
                         f"PART_PAGES or KERNEL")
    return d, kernel and KERNELS[kernel], {k: int(v) for k, v in pairs.items()}


def variant(route, d: int, kernel: str | None, override: dict) -> tuple[str, dict]:
    """(kernel, constants): the route's, with `kernel`'s own constants where it names
    another, then `override` (PART_PAGES 0: unsplit)."""
    from ktile.ops.paged_attention import op
    c = dict(route.constants)
    kernel = kernel or route.kernel
    if kernel != route.kernel:
        own = {"WARPS": d // 64} if kernel == "paged_decode" else op.SM90[kernel][d]
        c = {"D": d, **own, "PART_PAGES": c["PART_PAGES"], "SPLIT": c["SPLIT"]}
    c.update(override)
    if c["PART_PAGES"] in (0, op.WHOLE):
        c["PART_PAGES"] = op.WHOLE
    c["SPLIT"] = c["PART_PAGES"] != op.WHOLE
    if kernel != "paged_decode_streams":
        c.pop("PAGES", None)
    if kernel != "paged_decode_ring":
        c.pop("STAGES", None)
    return kernel, c


def triton_decode():
    """The Triton baseline's launcher, or None where triton is missing."""
    try:
        from ktile.bench.triton_paged_decode import paged_decode
    except ImportError:
        return None
    return paged_decode


def check(torch, fn, case, want, tol) -> dict:
    try:
        got = fn(*case.args)
        torch.cuda.synchronize() if got.is_cuda else None
    except Exception as e:               # a build or launch failure: reported, not timed
        return {"error": f"{type(e).__name__}: {str(e)[:400]}", "correct": False}
    err = float((got.float() - want.float()).abs().max())
    return {"max_error": err, "correct": bool(err <= tol)}


def run_case(torch, spec: dict, check_only: bool, device: str = "cuda", timer=None,
             extra=()) -> dict:
    """One case: checked (ktile, Triton, and each `extra` variant against torch), then timed
    unless `check_only`."""
    import ktile.ops
    from ktile.ops import _library as lib
    from ktile.ops.paged_attention import cases as paged, op
    r, c, d = spec["requests"], spec["context"], spec["d"]
    case = paged.make_case([c] * r, HEADS, KV_HEADS, d, device=device, seed=r + c)
    want = paged.torch_reference(case)
    tol = float(torch.nan_to_num(case.value_cache).abs().max()) * 2.0 ** -6 + 1e-3
    ktile_fn, triton_fn = ktile.ops.paged_attention_decode, triton_decode()
    row = {**spec, "bytes": kv_bytes(r, c, d), "tolerance": tol,
           "ktile": check(torch, ktile_fn, case, want, tol)}
    if triton_fn is not None:
        row["triton"] = check(torch, triton_fn, case, want, tol)
    route = op.route_for(d, r * KV_HEADS, case.block_tables.shape[1] * 16,
                         lib.target_of(case.query))
    row["route"] = {"kernel": route.kernel, **route.constants}
    variants = {}
    for text in extra:
        for_d, kernel, override = parse_constants(text)
        if for_d not in (None, d):
            continue
        kernel, constants = variant(route, d, kernel, override)

        def run(*args, kernel=kernel, constants=constants):   # args: the case's, as ktile's
            out = torch.empty_like(args[0])
            op.launch(kernel, constants, *args, d ** -0.5, out)
            return out
        variants[f"constants:{text}"] = lambda run=run: run(*case.args)
        row[f"constants:{text}"] = {"kernel": kernel, "constants": constants,
                                    **check(torch, run, case, want, tol)}
    if check_only:
        return row
    if timer is None:
        from ktile.bench.timing import time_call as timer
    src = torch.empty(row["bytes"], dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    timed = {"copy": lambda: dst.copy_(src)}
    for name, fn in (("ktile", ktile_fn), ("triton", triton_fn)):
        if fn is not None and row[name]["correct"]:
            timed[name] = (lambda f: lambda: f(*case.args))(fn)
    for name, fn in variants.items():
        if row[name]["correct"]:
            timed[name] = fn
    for name, fn in timed.items():
        t = timer(fn)
        moved = 2 * row["bytes"] if name == "copy" else row["bytes"]
        row.setdefault(name, {}).update({**t.as_dict(), "us": t.ms * 1e3,
                                         "gbps": moved / t.ms / 1e6})
    del src, dst
    for name in ("ktile", "triton", *variants):
        if "gbps" in row.get(name, {}):
            row[name]["pct_of_copy"] = 100 * row[name]["gbps"] / row["copy"]["gbps"]
            if "us" in row.get("triton", {}):
                row[name]["speed_vs_triton"] = row["triton"]["us"] / row[name]["us"]
    if "us" in row["ktile"] and "us" in row.get("triton", {}):
        row["speedup_vs_triton"] = row["triton"]["us"] / row["ktile"]["us"]
    return row


def verdict(result: dict) -> str:
    """A checked, untimed result in words."""
    if "error" in result:
        return f"ERROR {result['error']}"
    word = "ok" if result["correct"] else "WRONG"
    return f"max err {result['max_error']:.4f} {word}"


def show_variants(row: dict) -> list[str]:
    """A line per `--constants` variant of the row."""
    lines = []
    for name, v in row.items():
        if not name.startswith("constants:"):
            continue
        shown = (f"{v['us']:9.1f} us {v['gbps']:7.0f} GB/s {v['pct_of_copy']:5.1f}% of copy"
                 + (f", {v['speed_vs_triton']:.2f}x triton" if "speed_vs_triton" in v else "")
                 if "us" in v else verdict(v))
        lines.append(f"    {v['kernel']} {v['constants']}: {shown}")
    return lines


def show(row: dict) -> str:
    label = f"{row['requests']:4d} x {row['context']:6d} d {row['d']:3d}"
    k, t = row["ktile"], row.get("triton", {})
    if "us" not in k:
        return f"{label}: ktile {verdict(k)}" + (f" | triton {verdict(t)}" if t else "")
    line = (f"{label}: ktile {k['us']:9.1f} us {k['gbps']:7.0f} GB/s {k['pct_of_copy']:5.1f}% "
            f"of copy")
    if "us" in t:
        line += (f" | triton {t['us']:9.1f} us {t['gbps']:7.0f} GB/s {t['pct_of_copy']:5.1f}%"
                 f" | ktile/triton speed {row['speedup_vs_triton']:.2f}x")
    elif t:
        line += f" | triton {verdict(t)}"
    return line


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmarks/paged_decode.py",
                                description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help=f"only {QUICK} and the d 64 point")
    p.add_argument("--check-only", action="store_true", help="correctness only, no timing")
    p.add_argument("--json", metavar="PATH", help="write the rows as JSON to PATH")
    p.add_argument("--constants", action="append", default=[], metavar="[D64:]NAME=V,...",
                   help="also time the decode kernel at the route's constants with these "
                        "overridden (repeatable; WARPS, PAGES, STAGES, PART_PAGES; "
                        "KERNEL=ring|streams|paged picks the kernel; "
                        "a D prefix limits it to that head size)")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    for text in args.constants:          # a bad spec is refused before anything runs
        parse_constants(text)
    import torch
    if not torch.cuda.is_available():
        print("benchmarks/paged_decode.py needs a CUDA GPU", file=sys.stderr)
        return 2
    rows, wrong = [], False
    for spec in cases(args.quick):
        start = time.time()
        row = run_case(torch, spec, args.check_only, extra=args.constants)
        row["wall_s"] = round(time.time() - start, 1)
        rows.append(row)
        wrong |= not row["ktile"]["correct"] or not row.get("triton", {"correct": True})["correct"]
        # a variant that ran and was wrong fails the run; one refused (a build limit) is shown
        wrong |= any("max_error" in v and not v["correct"]
                     for k, v in row.items() if k.startswith("constants:"))
        print(show(row), f"[{row['route']['kernel']} {row['wall_s']} s]", flush=True)
        for line in show_variants(row):
            print(line, flush=True)
        torch.cuda.empty_cache()
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                  "host": platform.node(), "rows": rows}
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
