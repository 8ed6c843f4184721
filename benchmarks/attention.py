"""Time `ktile.ops.scaled_dot_product_attention` against torch's
`F.scaled_dot_product_attention` (the backend torch picks) on a CUDA GPU, in one process.

    python3 benchmarks/attention.py --quick --out DIR     # n 1024 / 4096 (~1-2 min with builds)
    python3 benchmarks/attention.py --out DIR             # also n 16384
    python3 benchmarks/attention.py --check-only --quick  # correctness only, no timing
    python3 benchmarks/attention.py --quick --constants STAGES=2 --constants D64:BK=128 \
        --out DIR                   # also the kernel alone at other constants (D64: d 64 only)
    python3 benchmarks/attention.py --quick --constants OVERLAP=1 --constants VT=1 \
        --constants LONGEST_FIRST=0 --out DIR   # P·V under the softmax (docs/attention.md);
                                    # the Vᵀ form (its copy made once, outside the timing);
                                    # the causal blocks in launch order
    python3 benchmarks/attention.py --quick --constants PINGPONG=1 --constants PINGPONG=2 \
        --constants PINGPONG=1,OVERLAP=1 --out DIR   # the consumer warpgroups taking turns
                                    # at their MMAs (named barriers; 1: S, 2: P·V and S)
    python3 benchmarks/attention.py --quick --constants D64:BM=192,WARPS=16 \
        --out DIR                   # d 64: three consumer warpgroups of 64 rows
    python3 benchmarks/attention.py --quick --constants EXP2_FAST=1,FUSED_SCALE=1 \
        --constants PINGPONG=2,EXP2_FAST=1,FUSED_SCALE=1 --out DIR   # the softmax's exp2 one
                                    # MUFU.EX2, the scale in its FFMA
    python3 benchmarks/attention.py --all-sections --quick --out DIR   # issue #12 in one run:
                                    # prefill, then paged decode (~3-5 min with builds)
    python3 benchmarks/attention.py --paged --quick --out DIR   # paged decode alone

Shapes (issue #12): GQA 32 query / 8 key-value heads, d 64 and 128, causal and not, bf16,
batch × n = 16384 tokens (n 1024: batch 16; 4096: 4; 16384: 1), so batch × heads × query
blocks fill the GPU. Every ktile result is checked against SDPA's before it is timed (a wrong
result is reported, not timed). Each row times the op as called, the kernel alone (the same
unless a route reads Vᵀ, VT=1: then its copy is made once outside the timing) and SDPA. TFLOP/s count 4·B·H·n²·d (halved when causal), as FlashAttention reports.

Timing: ktile.bench.timing (L2 flushed before each sample, median of CUDA-event times).
Writes DIR/attention.json.

Sections (issue #12 in one run): `--prefill` is the sweep above, what runs when no section is
named; `--paged` times paged decode with benchmarks/paged_decode.py's cases and case runner
(ktile.ops.paged_attention_decode vs a Triton paged decode and a copy; this run's --quick and
--check-only; its --constants are that script's own); `--all-sections` runs both. The prefill
rows stay under "rows" of attention.json, the paged ones go under "paged", and "sections"
holds each one's status and wall time. A section that raises is reported (its error in the
JSON and the summary, the traceback on stderr) and the other still runs. --constants applies
to the prefill section only.
Exit code 1 when a ktile result was wrong or a section failed, 2 without a CUDA GPU.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HEADS, KV_HEADS, TOKENS = 32, 8, 16384
QUICK_N, FULL_N = (1024, 4096), (1024, 4096, 16384)
DIMS = (64, 128)


def cases(quick: bool):
    for n in (QUICK_N if quick else FULL_N):
        for d in DIMS:
            for causal in (False, True):
                yield {"batch": max(1, TOKENS // n), "heads": HEADS, "kv_heads": KV_HEADS,
                       "n": n, "d": d, "causal": causal}


def flops(case) -> float:
    full = 4.0 * case["batch"] * case["heads"] * case["n"] ** 2 * case["d"]
    return full / 2 if case["causal"] else full


def torch_sdpa(torch, q, k, v, causal):
    import torch.nn.functional as F
    try:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    except TypeError:            # torch before 2.5: no enable_gqa
        group = q.shape[1] // k.shape[1]
        return F.scaled_dot_product_attention(q, k.repeat_interleave(group, 1),
                                              v.repeat_interleave(group, 1), is_causal=causal)


def parse_constants(spec: str) -> tuple[int | None, dict]:
    """`[D64:]NAME=VALUE,...` -> (the head dim it is for or None, {NAME: int})."""
    d = None
    if ":" in spec:
        head, spec = spec.split(":", 1)
        d = int(head.lstrip("Dd"))
    return d, {k: int(v) for k, v in (kv.split("=") for kv in spec.split(","))}


def time_constants(torch, kernel, args, want, tol, constants) -> dict:
    """The kernel alone at `constants` (args: q, k, v, scale; v made Vᵀ first where VT asks
    for it): checked against SDPA's result, then timed."""
    from ktile.bench.timing import time_call
    from ktile.ops.attention.op import values_for
    out = torch.empty_like(args[0])
    try:
        args = (*args[:2], values_for(args[2], constants), args[3])
        kernel(*args[:3], out, args[3], **constants)
        torch.cuda.synchronize()
    except Exception as e:
        return {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    err = float((out.float() - want.float()).abs().max())
    if not err <= tol:
        return {"max_error": err, "correct": False}
    t = time_call(lambda: kernel(*args[:3], out, args[3], **constants))
    return {"max_error": err, "correct": True, **t.as_dict()}


def run_case(torch, case, check_only: bool, extra=(), device: str = "cuda") -> dict:
    import ktile.ops
    from ktile.bench.timing import time_call
    from ktile.ops import _library as lib
    from ktile.ops.attention import op as attention_op
    b, h, hk, n, d, causal = (case[key] for key in
                              ("batch", "heads", "kv_heads", "n", "d", "causal"))
    g = torch.Generator(device=device).manual_seed(0)
    q, k, v = (torch.randn(shape, device=device, generator=g).to(torch.bfloat16)
               for shape in ((b, h, n, d), (b, hk, n, d), (b, hk, n, d)))
    row = dict(case)
    sdpa = lambda: ktile.ops.scaled_dot_product_attention(q, k, v, is_causal=causal,  # noqa: E731
                                                           enable_gqa=True)
    try:
        got = sdpa()
        want = torch_sdpa(torch, q, k, v, causal)
        torch.cuda.synchronize()
    except Exception as e:               # a build or launch failure: reported, not timed
        row["error"] = f"{type(e).__name__}: {str(e)[:500]}"
        return row
    row["max_error"] = float((got.float() - want.float()).abs().max())
    # the reference's tolerance (max|V|·2⁻⁷ + 1e-3) plus SDPA's own bf16 rounding
    row["tolerance"] = float(v.abs().max()) * 2.0 ** -6 + 1e-3
    row["correct"] = row["max_error"] <= row["tolerance"]
    if check_only or not row["correct"]:
        return row
    target = lib.target_of(q)
    route = attention_op.route_for(d, causal, n, target)
    kernel = attention_op.OP.kernel(route, "bf16")
    values, out = attention_op.values_for(v, route.constants), torch.empty_like(q)
    scale = 1.0 / math.sqrt(d)
    timings = {"ktile": time_call(sdpa),
               "ktile_kernel": time_call(lambda: kernel(q, k, values, out, scale,
                                                        **route.constants)),
               "sdpa": time_call(lambda: torch_sdpa(torch, q, k, v, causal))}
    for name, t in timings.items():
        row[name] = t.as_dict()
        row[f"{name}_tflops"] = flops(case) / (t.ms * 1e-3) / 1e12
    row["speedup_vs_sdpa"] = timings["sdpa"].ms / timings["ktile"].ms
    row["route"] = {"kernel": route.kernel, **route.constants}
    for spec in extra:
        for_d, override = parse_constants(spec)
        if for_d not in (None, d):
            continue
        # VT=1, CAUSAL=0: the kernel's bool constants take bools
        override = {name: bool(value) if isinstance(route.constants.get(name), bool) else value
                    for name, value in override.items()}
        timed = time_constants(torch, kernel, (q, k, v, scale), want, row["tolerance"],
                               {**route.constants, **override})
        if "ms" in timed:
            timed["tflops"] = flops(case) / (timed["ms"] * 1e-3) / 1e12
        row[f"constants:{spec}"] = timed
    return row


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmarks/attention.py",
                                description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="n 1024 and 4096 only")
    p.add_argument("--check-only", action="store_true", help="correctness only, no timing")
    p.add_argument("--out", help="write attention.json into this folder")
    p.add_argument("--constants", action="append", default=[], metavar="[D64:]NAME=V,...",
                   help="also time the kernel alone with these constants overridden "
                        "(repeatable; a D prefix limits it to that head dim)")
    p.add_argument("--prefill", action="store_true",
                   help="the prefill sweep (what runs when no section is named)")
    p.add_argument("--paged", action="store_true",
                   help="the paged decode section: benchmarks/paged_decode.py's cases")
    p.add_argument("--all-sections", action="store_true",
                   help="every section: prefill, paged (issue #12 in one run)")
    return p


def selected(args) -> list[str]:
    """The sections `args` asks for, in run order; prefill where none is named. The prefill
    section's --constants without it are refused before anything runs."""
    names = ["prefill", "paged"]
    chosen = names if args.all_sections else [n for n in names if getattr(args, n)]
    chosen = chosen or ["prefill"]
    if "prefill" not in chosen and args.constants:
        raise SystemExit("benchmarks/attention.py: --constants is an option of the prefill "
                         "section, which this run leaves out: add --prefill (or "
                         "--all-sections) or drop it")
    return chosen


def label(case) -> str:
    return (f"B{case['batch']} {case['heads']}/{case['kv_heads']} n {case['n']} "
            f"d {case['d']} {'causal' if case['causal'] else 'full  '}")


def show(row, constants) -> None:
    """A prefill row's line (and one per `constants` variant)."""
    if "error" in row:
        print(f"{label(row)}: ERROR {row['error']}", flush=True)
    elif "ktile" in row:
        print(f"{label(row)}: ktile {row['ktile']['ms'] * 1e3:8.1f} us "
              f"({row['ktile_tflops']:5.1f} TFLOP/s; kernel alone "
              f"{row['ktile_kernel_tflops']:5.1f}), SDPA {row['sdpa']['ms'] * 1e3:8.1f} us "
              f"({row['sdpa_tflops']:5.1f}): {row['speedup_vs_sdpa']:.2f}x; "
              f"max err {row['max_error']:.4f}", flush=True)
        for spec in constants:
            timed = row.get(f"constants:{spec}")
            if timed is not None:
                shown = (f"{timed['ms'] * 1e3:8.1f} us ({timed['tflops']:5.1f} TFLOP/s)"
                         if "ms" in timed else timed.get("error", "WRONG"))
                print(f"    kernel at {spec}: {shown}", flush=True)
    else:
        print(f"{label(row)}: max err {row['max_error']:.4f} (tolerance "
              f"{row['tolerance']:.4f}) {'ok' if row['correct'] else 'WRONG'}", flush=True)


def prefill(torch, args):
    """The prefill section's body: a row per case, printed as it is measured."""
    def body(rows: list) -> None:
        for case in cases(args.quick):
            start = time.time()
            row = run_case(torch, case, args.check_only, args.constants)
            row["wall_s"] = round(time.time() - start, 1)
            rows.append(row)
            show(row, args.constants)
    return body


def paged(torch, args):
    """The paged decode section's body: benchmarks/paged_decode.py's cases through its
    run_case, each row printed with its show()."""
    from ktile.bench import sections

    def body(rows: list) -> None:
        bench = sections.load("paged_decode.py")
        print("\n== paged decode (paged_decode.py) ==", flush=True)
        for spec in bench.cases(args.quick):
            start = time.time()
            row = bench.run_case(torch, spec, args.check_only)
            row["wall_s"] = round(time.time() - start, 1)
            rows.append(row)
            print(bench.show(row), f"[{row['route']['kernel']} {row['wall_s']} s]", flush=True)
            torch.cuda.empty_cache()
    return body


def paged_correct(row) -> bool:
    return bool(row["ktile"]["correct"]) and row.get("triton", {"correct": True})["correct"]


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    chosen = selected(args)
    import torch
    if not torch.cuda.is_available():
        print("benchmarks/attention.py needs a CUDA GPU", file=sys.stderr)
        return 2
    from ktile.bench import sections
    bodies = {"prefill": (prefill(torch, args), lambda row: row.get("correct", False)),
              "paged": (paged(torch, args), paged_correct)}
    done = {name: sections.run(name, *bodies[name]) for name in chosen}
    if len(done) > 1 or "error" in done.get("prefill", {}):
        sections.print_summary(done)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                  "host": platform.node(), "rows": done.get("prefill", {"rows": []})["rows"],
                  **({"paged": done["paged"]} if "paged" in done else {}),
                  "sections": sections.summary(done)}
        with open(os.path.join(args.out, "attention.json"), "w") as f:
            json.dump(result, f, indent=1)
    return 0 if all(s["correct"] for s in done.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
