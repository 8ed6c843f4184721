"""Time `ktile.ops.fused_moe` against a per-expert cuBLAS loop in torch (issue #11's baseline)
and torch's gather-bmm formula, on a CUDA GPU, in one process.

    python3 benchmarks/moe.py --quick --json /tmp/moe.json   # tokens 1, 16, 256
    python3 benchmarks/moe.py --json /tmp/moe.json           # tokens 1, 4, 16, 64, 256
    python3 benchmarks/moe.py --check-only                   # correctness only, no timing
    python3 benchmarks/moe.py --quick --constants BN=32,UNROLL=2 --constants UNROLL=1 \
        --json /tmp/moe.json          # also the kernel at other constants (checked first)

Shapes: Qwen3-30B-A3B's MoE layer (hidden 2048, moe intermediate 768, 128 experts, top-8,
bf16; w13 [E, 1536, 2048], w2 [E, 2048, 768]), a seeded softmax router, its top-8 weights
renormalised. Every candidate's output is checked against the float64 reference
(ktile/ops/moe/reference.py, its tolerance) before it is timed: a wrong ktile result is
reported, not timed, and the exit code is 1. The loop's expert groups (which slots each expert
holds) are made once outside the timing, on the host: the timed loop is its GEMMs, SiLU and
index_add alone, its best case. torch's gather-bmm materialises each slot's weights (9.4 MB a
slot): it runs wherever they take at most GATHER_SHARE of the free device memory (every token
count on an H200). "torch grouped_mm" (where torch has `torch._grouped_mm`, CUTLASS's grouped
GEMM): the slots sorted by expert once outside the timing, both GEMMs grouped, SiLU and the
weighted top-k sum in torch. "ktile sorted" is fused_moe with the sorted layout at every token
count (the decode layout, one slot a block, is what "ktile" takes at 1-4 tokens: the two
show what it saves). "ktile gemm1" times the first grouped GEMM alone (the layout made once
outside). A candidate that raises is reported (its error as NaN), not timed. GB/s count the
active experts' weight bytes (each read once).

Timing: ktile.bench.timing (L2 flushed before each sample, median of CUDA-event times; a call
whose host work outlasts the 1 ms cover, the loop at many experts, shows its host time).
`run(args)` returns the rows for benchmarks/matmul.py to call."""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HIDDEN, INTER, EXPERTS, TOP_K = 2048, 768, 128, 8
TOKENS, QUICK_TOKENS = (1, 4, 16, 64, 256), (1, 16, 256)
GATHER_SHARE = 0.5
DEVICE = "cuda"          # a CPU test runs the checks on the interpreter at small shapes


_WEIGHTS: dict = {}      # (shape, device) -> the layer's weights, made once per process


def layer_weights(torch) -> tuple:
    """Seeded w13 and w2 (each made once: 0.6 G values on the CPU take seconds)."""
    key = (HIDDEN, INTER, EXPERTS, DEVICE)
    if key not in _WEIGHTS:
        gen = torch.Generator().manual_seed(1)
        w13 = torch.randn(EXPERTS, 2 * INTER, HIDDEN, generator=gen) * HIDDEN ** -0.5
        w2 = torch.randn(EXPERTS, HIDDEN, INTER, generator=gen) * INTER ** -0.5
        _WEIGHTS.clear()
        _WEIGHTS[key] = tuple(w.to(torch.bfloat16).to(DEVICE) for w in (w13, w2))
    return _WEIGHTS[key]


def inputs(torch, tokens: int, seed: int = 0) -> dict:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(tokens, HIDDEN, generator=gen).to(torch.bfloat16).to(DEVICE)
    logits = torch.randn(tokens, EXPERTS, generator=gen)
    weights, ids = logits.softmax(-1).topk(TOP_K)
    weights = weights / weights.sum(-1, keepdim=True)
    w13, w2 = layer_weights(torch)
    return {"x": x, "w13": w13, "w2": w2, "topk_weights": weights.to(DEVICE),
            "topk_ids": ids.to(DEVICE)}


def expert_groups(topk_ids) -> list:
    """(expert, its slots' token rows, its slots) for each active expert, on the device."""
    flat = topk_ids.reshape(-1)
    groups = []
    for e in sorted(set(flat.tolist())):
        slots = (flat == e).nonzero().reshape(-1)
        groups.append((e, slots // topk_ids.shape[1], slots))
    return groups


def cublas_loop(torch, case: dict, groups: list):
    """One cuBLAS GEMM pair per active expert, rounded where vLLM rounds."""
    x, w13, w2 = case["x"], case["w13"], case["w2"]
    weights = case["topk_weights"].reshape(-1)
    out = torch.zeros(x.shape[0], HIDDEN, dtype=torch.float32, device=x.device)
    for e, rows, slots in groups:
        h = x[rows] @ w13[e].t()
        act = (torch.nn.functional.silu(h[:, :INTER].float()) * h[:, INTER:].float()).bfloat16()
        y = (act @ w2[e].t()).float() * weights[slots, None]
        out.index_add_(0, rows, y)
    return out.bfloat16()


def torch_gather(torch, case: dict):
    """Each slot's expert weights gathered and multiplied as a batch (vLLM's naive MoE)."""
    x, ids = case["x"], case["topk_ids"].reshape(-1)
    rows = x.repeat_interleave(TOP_K, 0).unsqueeze(1)
    h = torch.bmm(rows, case["w13"][ids].transpose(1, 2)).squeeze(1)
    act = (torch.nn.functional.silu(h[:, :INTER].float()) * h[:, INTER:].float()).bfloat16()
    y = torch.bmm(act.unsqueeze(1), case["w2"][ids].transpose(1, 2)).squeeze(1)
    y = y.float() * case["topk_weights"].reshape(-1, 1)
    return y.view(-1, TOP_K, HIDDEN).sum(1).bfloat16()


def gather_fits(torch, tokens: int) -> bool:
    """Whether torch_gather's gathered weights fit GATHER_SHARE of the free device memory."""
    if DEVICE != "cuda":
        return True
    need = tokens * TOP_K * 3 * INTER * HIDDEN * 2
    return need <= GATHER_SHARE * torch.cuda.mem_get_info()[0]


def sorted_slots(torch, topk_ids):
    """(token row of each slot sorted by expert, the sort order, int32 end offsets per
    expert) for torch_grouped (made once outside the timing)."""
    flat = topk_ids.reshape(-1)
    order = torch.argsort(flat, stable=True)
    counts = torch.bincount(flat, minlength=EXPERTS)
    return order // TOP_K, order, torch.cumsum(counts, 0).to(torch.int32)


def torch_grouped(torch, case: dict, slots: tuple):
    """torch._grouped_mm over the expert-sorted slots (CUTLASS's grouped GEMM in torch)."""
    rows, order, offs = slots
    x = case["x"][rows]
    h = torch._grouped_mm(x, case["w13"].transpose(1, 2), offs=offs)
    act = (torch.nn.functional.silu(h[:, :INTER].float()) * h[:, INTER:].float()).bfloat16()
    y = torch._grouped_mm(act, case["w2"].transpose(1, 2), offs=offs)
    y = y.float() * case["topk_weights"].reshape(-1)[order, None]
    out = torch.zeros(case["x"].shape[0], HIDDEN, dtype=torch.float32, device=x.device)
    return out.index_add_(0, rows, y).bfloat16()


def sorted_call(case: dict):
    """fused_moe with the sorted layout at every token count."""
    import ktile.ops as ops
    from ktile.ops.moe import config

    def call():
        direct = config.direct
        config.direct = lambda *shape: False
        try:
            return ops.fused_moe(**case)
        finally:
            config.direct = direct
    return call


def reference(case: dict):
    """(float64 reference output, its tolerance) from ktile/ops/moe/reference.py."""
    from ktile import dtypes
    from ktile.ops.moe.reference import fused_moe, fused_tolerance
    args = [case[k].float().cpu().numpy() for k in ("x", "w13", "w2", "topk_weights")]
    ids = case["topk_ids"].cpu().numpy()
    want, stages = fused_moe(*args, ids, dtypes.bf16)
    return want, fused_tolerance(*args, ids, want, stages, "bf16")


def weight_bytes(case: dict) -> int:
    active = len(set(case["topk_ids"].reshape(-1).tolist()))
    return active * (2 * INTER * HIDDEN + HIDDEN * INTER) * 2


def parse_constants(spec: str) -> dict:
    """'BN=32,UNROLL=2' -> {'BN': 32, 'UNROLL': 2}."""
    pairs = [part.split("=") for part in spec.split(",") if part]
    if any(len(p) != 2 or not p[1].lstrip("-").isdigit() for p in pairs):
        raise SystemExit(f"benchmarks/moe.py: --constants {spec!r}: write NAME=INT,...")
    return {name: int(value) for name, value in pairs}


def pinned_call(case: dict, constants: dict):
    """fused_moe with both grouped GEMMs pinned to the first route at `constants` (BM 16:
    fused_moe's alignment)."""
    import ktile.ops as ops
    from ktile.ops import _library as lib
    from ktile.ops._library import Route
    from ktile.ops.moe import config
    base = config.ROUTES[0]
    route = Route(base.kernel, {**base.constants, **constants, "BM": config.FUSED_BLOCK_M})

    def call():
        with lib.pinned(config.TABLE, route):
            return ops.fused_moe(**case)
    return call


def candidates(torch, case: dict, tokens: int, args) -> dict:
    import ktile.ops as ops
    groups = expert_groups(case["topk_ids"])
    layout = ops.moe_align_block_size(case["topk_ids"], EXPERTS, 16)
    calls = {
        "ktile": lambda: ops.fused_moe(**case),
        "ktile gemm1": lambda: ops.moe_grouped_gemm(case["x"], case["w13"], *layout,
                                                    top_k=TOP_K),
        "cublas loop": lambda: cublas_loop(torch, case, groups),
    }
    if gather_fits(torch, tokens):
        calls["torch gather"] = lambda: torch_gather(torch, case)
    if hasattr(torch, "_grouped_mm") and DEVICE == "cuda":
        slots = sorted_slots(torch, case["topk_ids"])
        calls["torch grouped_mm"] = lambda: torch_grouped(torch, case, slots)
    calls["ktile sorted"] = sorted_call(case)
    for spec in getattr(args, "constants", None) or ():
        calls[f"ktile {spec}"] = pinned_call(case, parse_constants(spec))
    return calls


def measure(torch, tokens: int, args) -> dict:
    import numpy as np
    from ktile.bench.timing import gbps, time_call
    case = inputs(torch, tokens)
    calls = candidates(torch, case, tokens, args)
    want, tol = reference(case)
    row = {"tokens": tokens, "experts_active": len(set(case["topk_ids"].reshape(-1).tolist())),
           "tolerance": tol, "weight_bytes": weight_bytes(case), "error": {}, "ms": {},
           "noise": {}}
    for name, call in calls.items():
        if name == "ktile gemm1":
            continue                     # checked through fused_moe (its first stage)
        try:
            got = call().float().cpu().numpy()
        except Exception as err:             # reported, never timed
            row.setdefault("failed", {})[name] = f"{type(err).__name__}: {err}"[:300]
            row["error"][name] = float("nan")
            continue
        row["error"][name] = float(np.abs(got - want).max())
    wrong = {n for n, e in row["error"].items() if n.startswith("ktile") and not e <= tol}
    failed = set(row.get("failed", ())) | {n for n, e in row["error"].items() if not e <= tol}
    row["correct"] = not wrong
    if args.check_only:
        return row
    for name, call in calls.items():
        if name in failed or (name == "ktile gemm1" and "ktile" in wrong):
            continue                     # a wrong result is never timed
        timing = time_call(call, repeats=args.repeats)
        row["ms"][name], row["noise"][name] = timing.ms, timing.noise
    if "ktile" in row["ms"]:
        row["ktile_gbps"] = gbps(row["weight_bytes"], row["ms"]["ktile"])
        if "cublas loop" in row["ms"]:
            row["speedup_vs_loop"] = row["ms"]["cublas loop"] / row["ms"]["ktile"]
        others = {n: ms for n, ms in row["ms"].items() if not n.startswith("ktile")}
        if others:
            best = min(others, key=others.get)
            row["best_other"] = best
            row["speedup_vs_best_other"] = others[best] / row["ms"]["ktile"]
    return row


def print_table(rows: list[dict]) -> None:
    names = ["ktile", "ktile sorted", "ktile gemm1", "cublas loop", "torch gather",
             "torch grouped_mm"]
    names += sorted({n for r in rows for n in r["error"] if n not in names})
    print(f"{'tokens':>6} {'experts':>7} " + " ".join(f"{n + ' ms':>16}" for n in names)
          + f" {'vs loop':>8} {'vs best':>8} {'GB/s':>6} {'ok':>3}")
    for r in rows:
        cells = " ".join(f"{r['ms'].get(n, float('nan')):>16.4f}" for n in names)
        print(f"{r['tokens']:>6} {r['experts_active']:>7} {cells} "
              f"{r.get('speedup_vs_loop', float('nan')):>8.2f} "
              f"{r.get('speedup_vs_best_other', float('nan')):>8.2f} "
              f"{r.get('ktile_gbps', float('nan')):>6.0f} {'yes' if r['correct'] else 'NO':>3}")
        for name, why in r.get("failed", {}).items():
            print(f"       {name}: not timed: {why}")


def run(args) -> list[dict]:
    """Every case's row (what --json writes under "results"); needs a CUDA GPU."""
    import torch
    rows = []
    for tokens in (QUICK_TOKENS if args.quick else TOKENS):
        rows.append(measure(torch, tokens, args))
        print_table(rows[-1:])
    return rows


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmarks/moe.py", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="tokens 1, 16, 256 only")
    p.add_argument("--json", help="write the results to this path")
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--check-only", action="store_true", help="check results, time nothing")
    p.add_argument("--constants", action="append", default=[], metavar="NAME=V,...",
                   help="also time fused_moe with its grouped GEMMs pinned to the first route "
                        "at these constants (repeatable): BN=32,UNROLL=2")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("benchmarks/moe.py: needs a CUDA GPU (torch.cuda.is_available() is False)")
        return 2
    rows = run(args)
    print()
    print_table(rows)
    if args.json:
        folder = os.path.dirname(os.path.abspath(args.json))
        os.makedirs(folder, exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "host": platform.node(), "args": vars(args), "results": rows}, f,
                      indent=1)
        print(f"wrote {args.json}")
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
