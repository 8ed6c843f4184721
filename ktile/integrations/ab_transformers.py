"""`python -m ktile.integrations.ab_transformers [--quick | --tiny] [--json]` (also
`scripts/engine-ab transformers`): stock transformers against the same model patched with
ktile's routes (ktile.integrations.transformers), end to end.

1. Builds a Qwen3-8B-shaped model with random weights from its config (no download) and a
   copy of it, patched; `--quick` keeps 8 of its 36 layers (every shape is the same, only the
   depth changes), `--tiny` builds a 2-layer model of width 64 for a CPU.
2. Checks the patched logits against stock: teacher-forced greedy decoding (eager,
   StaticCache), max |diff| within 5% of max |logit|, and whether every argmax agrees
   (`tokens_identical`; random weights give flat logits, so a flip near a tie is possible).
3. Times decode per token at each batch (context 512) with StaticCache and
   `torch.compile(mode="reduce-overhead", fullgraph=True)` (CUDA graphs), and an eager prefill
   of 2048 tokens (with its host time: the forward's Python, before the GPU is waited for);
   arms alternate round by round (order swapped every round), best of N.

Prints a table; with `--json` one JSON object last: tokens_identical, logits_max_diff,
counters, timings. Exit status 0 when the logits check passes. Budget (H200): `--quick` is
meant to fit one 8-minute device call, model build and four compiles included; rounds stop
early (at least one each) once `--deadline` seconds have passed.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

PLANS = {   # batches, decode context, prefill tokens, decode steps timed, rounds, checked steps
    "full": dict(size="8b", layers=None, batches=(1, 32), context=512, prefill=2048, gen=32,
                 reps=5, check=8),
    "quick": dict(size="8b", layers=8, batches=(1, 32), context=512, prefill=2048, gen=16,
                  reps=3, check=4),
    "tiny": dict(size="tiny", layers=None, batches=(1, 2), context=8, prefill=16, gen=2,
                 reps=1, check=2),
}


def _log(message: str, started: float) -> None:
    print(f"[ab_transformers {time.perf_counter() - started:6.1f}s] {message}", file=sys.stderr,
          flush=True)


def run(args) -> dict:
    import torch
    import transformers
    from ktile.errors import InputError
    from . import transformers as kt
    from . import transformers_bench as bench

    plan = dict(PLANS["tiny" if args.tiny else "quick" if args.quick else "full"])
    for key in ("layers", "reps"):
        if getattr(args, key) is not None:
            plan[key] = getattr(args, key)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu" and not args.tiny:
        raise InputError("ab_transformers: no GPU here, and the 8B-shaped model is for one",
                         hint="run it on the H200, or pass --tiny for the CPU model")
    mode = args.compile or ("reduce-overhead" if device == "cuda" else "aot_eager")
    for limit in ("cache_size_limit", "recompile_limit"):   # 2 arms x batches compiled steps
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, max(getattr(torch._dynamo.config, limit), 64))
    started = time.perf_counter()
    _preflight(torch, device)
    _log("ktile's rms_norm runs here", started)
    stock = bench.build(plan["size"], plan["layers"], device)
    patched = kt.patch(bench.twin(stock), ops=args.ops)
    _log(f"built {plan['size']} ({stock.config.num_hidden_layers} layers) on {device}; "
         f"patched: {kt.status(patched)}", started)
    kt._core.reset()
    vocab = stock.config.vocab_size
    prompt = torch.randint(0, vocab, (2, min(plan["context"], 32)),
                           generator=torch.Generator().manual_seed(1)).to(device)
    checked = bench.check(stock, patched, prompt, plan["check"])
    check_counters = kt.counters()
    _log(f"check: {checked}", started)

    arms = [bench.Arm("stock", stock, device, mode), bench.Arm("ktile", patched, device, mode)]
    for batch in plan["batches"]:
        for arm in arms:
            arm.prepare(batch, plan["context"], plan["gen"], vocab)
            _log(f"compiled {arm.name} decode, batch {batch}", started)
    rounds = 0
    for rnd in range(plan["reps"]):
        if rnd and time.perf_counter() - started > args.deadline:
            _log(f"deadline: {rounds} rounds", started)
            break
        for arm in arms if rnd % 2 == 0 else arms[::-1]:
            for batch in plan["batches"]:
                arm.time_decode(batch, plan["gen"])
            arm.time_prefill(plan["prefill"], vocab)
        rounds += 1
        _log(f"round {rounds} done", started)
    return _result(plan, arms, checked, check_counters, kt.counters(), mode, device, rounds,
                   time.perf_counter() - started, torch, transformers)


def _preflight(torch, device: str) -> None:
    """One small ktile op before the model is built: a machine without what ktile needs (xDSL,
    nvcc) fails here, in seconds, not after the build."""
    import ktile.ops
    x = torch.ones(2, 64, dtype=torch.bfloat16, device=device)
    ktile.ops.rms_norm(x, torch.ones(64, dtype=torch.bfloat16, device=device), 1e-6)


def _result(plan, arms, checked, check_counters, counters, mode, device, rounds, wall,
            torch, transformers) -> dict:
    from .transformers import ROUTES
    from .transformers_bench import best
    stock, ktile = arms
    timings = {"decode_ms_per_token": {}, "prefill_ms": {}, "prefill_host_ms": {}}
    keys = [("decode_ms_per_token", str(b), f"decode_b{b}") for b in plan["batches"]]
    keys.append(("prefill_ms", str(plan["prefill"]), f"prefill_{plan['prefill']}"))
    keys.append(("prefill_host_ms", str(plan["prefill"]), f"prefill_{plan['prefill']}_host"))
    for group, label, key in keys:
        s, k = best(stock, key), best(ktile, key)
        timings[group][label] = {"stock": s, "ktile": k, "speedup": s / k if s and k else None}
    return {"engine": "transformers", "model": f"qwen3-{plan['size']} random",
            "layers": stock.model.config.num_hidden_layers, "device": _device_name(torch, device),
            "compile": mode, "context": plan["context"], "decode_steps": plan["gen"],
            "rounds": rounds, "method": "alternating arms, best of rounds; decode: StaticCache "
                                        "+ compiled step; prefill: eager, batch 1",
            "tokens_identical": checked["tokens_identical"],
            "logits_max_diff": checked["logits_max_diff"], "check": checked,
            "counters_check": check_counters, "counters": counters, "timings": timings,
            "routes": {op: str(r) for op, r in ROUTES.items()},
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
            "wall_s": round(wall, 1)}


def _device_name(torch, device: str) -> str:
    return torch.cuda.get_device_name() if device == "cuda" else "cpu"


def table(result: dict) -> str:
    check = result["check"]
    rows = [f"transformers A/B on {result['model']} ({result['layers']} layers, "
            f"{result['device']}, compile {result['compile']}, {result['rounds']} rounds)",
            f"logits: max |diff| {check['logits_max_diff']:.4g} of {check['logits_scale']:.4g} "
            f"({'ok' if check['logits_ok'] else 'TOO LARGE'}); top-1 agreement "
            f"{check['top1_agreement']:.3f}; tokens identical: {result['tokens_identical']}",
            f"{'measure':<28}{'stock ms':>10}{'ktile ms':>10}{'speedup':>9}"]
    for group, per in result["timings"].items():
        for label, t in per.items():
            name = f"decode/token, batch {label}" if group.startswith("decode") \
                else f"prefill host, {label} tok" if group == "prefill_host_ms" \
                else f"prefill, {label} tokens"
            cells = [f"{v:10.3f}" if v is not None else f"{'-':>10}"
                     for v in (t["stock"], t["ktile"])]
            speed = f"{t['speedup']:8.2f}x" if t["speedup"] else f"{'-':>9}"
            rows.append(f"{name:<28}{cells[0]}{cells[1]}{speed}")
    rows.append("counters (route: eager / captured / fallback):")
    for route, c in sorted(result["counters"].items()):
        rows.append(f"  {route:<36}{c['eager']:>8}{c['captured']:>8}{c['fallback']:>8}")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ktile.integrations.ab_transformers",
                                     description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="8 of the 36 layers, 3 rounds")
    size.add_argument("--tiny", action="store_true", help="a 2-layer model for a CPU")
    parser.add_argument("--json", action="store_true", help="one JSON object, last line")
    parser.add_argument("--layers", type=int, help="decoder layers (default: the plan's)")
    parser.add_argument("--reps", type=int, help="timed rounds (best of)")
    parser.add_argument("--ops", nargs="+", help="patch only these ops (default: all)")
    parser.add_argument("--compile", choices=("reduce-overhead", "default", "aot_eager",
                                              "eager", "none"),
                        help="decode step: torch.compile mode or backend (default: "
                             "reduce-overhead on a GPU, aot_eager on a CPU)")
    parser.add_argument("--deadline", type=float, default=420.0,
                        help="seconds after which no new round starts (default 420)")
    args = parser.parse_args(argv)
    result = run(args)
    print(json.dumps(result) if args.json else table(result), flush=True)
    return 0 if result["check"]["logits_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
