"""Where an eager prefill's time goes, stock transformers against the model patched with ktile's
routes (issue #15): per arm, the prefill's GPU time (CUDA events), its host time (the forward's
Python, before the GPU is waited for), a torch.profiler summary (GPU kernel time by name, CPU
time by op) and a cProfile of the forward's Python (by function, own time).

    python3 benchmarks/transformers_prefill_profile.py --json /tmp/prefill_profile.json
    python3 benchmarks/transformers_prefill_profile.py --tokens 2048 --layers 8 --reps 5
    python3 benchmarks/transformers_prefill_profile.py --tiny        # a CPU: the interpreter

Qwen3-8B shapes with random weights (ktile.integrations.transformers_bench), `--layers` of its
36 (default 8), batch 1. An arm whose host time is near its GPU time is bound by Python: the
GPU waits for launches. Prints a summary; `--json PATH` writes everything.
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _prefill(model, cache, prompt):
    cache.reset()
    model(prompt, past_key_values=cache, use_cache=True, logits_to_keep=1)


def _timed(torch, model, cache, prompt, reps: int, cuda: bool) -> dict:
    """Best of `reps` prefills: GPU time (events; the host clock on a CPU) and host time."""
    gpu, host = [], []
    for _ in range(reps):
        if cuda:
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(True), torch.cuda.Event(True)
            start.record()
        t0 = time.perf_counter()
        _prefill(model, cache, prompt)
        host.append((time.perf_counter() - t0) * 1e3)
        if cuda:
            end.record()
            end.synchronize()
            gpu.append(start.elapsed_time(end))
        else:
            gpu.append((time.perf_counter() - t0) * 1e3)
    return {"ms": min(gpu), "host_ms": min(host), "all_ms": gpu, "all_host_ms": host}


def _profiled(torch, model, cache, prompt, cuda: bool, top: int) -> dict:
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        _prefill(model, cache, prompt)
        if cuda:
            torch.cuda.synchronize()
    events = prof.key_averages()
    kernels = sorted(((e.key, e.count, e.self_device_time_total / 1e3) for e in events
                      if getattr(e, "self_device_time_total", 0) > 0), key=lambda r: -r[2])
    cpu = sorted(((e.key, e.count, e.cpu_time_total / 1e3) for e in events),
                 key=lambda r: -r[2])
    return {"gpu_kernels_ms": [list(r) for r in kernels[:top]],
            "gpu_total_ms": sum(r[2] for r in kernels),
            "cpu_ops_ms": [list(r) for r in cpu[:top]],
            "ktile_dispatcher_entries": sorted({e.key for e in events
                                                if e.key.startswith("ktile")})}


def _python(model, cache, prompt, cuda: bool, torch, top: int) -> list:
    """The forward's Python by function: [name, calls, own ms, cumulative ms], by own time."""
    prof = cProfile.Profile()
    prof.enable()
    _prefill(model, cache, prompt)
    prof.disable()
    if cuda:
        torch.cuda.synchronize()
    stats = pstats.Stats(prof).stats
    rows = [[f"{os.path.basename(f)}:{line}({name})", calls, own * 1e3, cum * 1e3]
            for (f, line, name), (_, calls, own, cum, _) in stats.items()]
    return sorted(rows, key=lambda r: -r[2])[:top]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=2048)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--top", type=int, default=25, help="rows kept per table")
    p.add_argument("--tiny", action="store_true", help="the 2-layer width-64 model, for a CPU")
    p.add_argument("--json", help="write the results here")
    a = p.parse_args(argv)

    import torch
    from ktile.integrations import transformers as kt
    from ktile.integrations import transformers_bench as bench

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    size, tokens = ("tiny", min(a.tokens, 16)) if a.tiny or not cuda else ("8b", a.tokens)
    stock = bench.build(size, None if size == "tiny" else a.layers, device)
    patched = kt.patch(bench.twin(stock))
    prompt = torch.randint(0, stock.config.vocab_size, (1, tokens),
                           generator=torch.Generator().manual_seed(0)).to(device)
    result = {"device": torch.cuda.get_device_name() if cuda else "cpu", "size": size,
              "layers": stock.config.num_hidden_layers, "tokens": tokens,
              "routes": kt.status(patched), "torch": torch.__version__, "arms": {}}
    with torch.no_grad():
        for name, model in (("stock", stock), ("ktile", patched)):
            cache = bench._cache(model, tokens + 8)
            for _ in range(2):                     # warm-up: ktile's first calls build
                _prefill(model, cache, prompt)
            kt._core.reset()
            arm = _timed(torch, model, cache, prompt, a.reps, cuda)
            arm.update(_profiled(torch, model, cache, prompt, cuda, a.top))
            arm["python"] = _python(model, cache, prompt, cuda, torch, a.top)
            arm["counters"] = kt.counters()
            result["arms"][name] = arm
            print(f"== {name}: prefill {arm['ms']:.3f} ms (host {arm['host_ms']:.3f} ms), GPU "
                  f"kernels {arm['gpu_total_ms']:.3f} ms; ktile ops through torch's dispatcher: "
                  f"{arm['ktile_dispatcher_entries'] or 'none'}")
            for row in arm["python"][:8]:
                print(f"   {row[0][:60]:<60} {row[1]:>6} calls {row[2]:8.3f} ms own")
    s, k = result["arms"]["stock"], result["arms"]["ktile"]
    result["speedup"] = s["ms"] / k["ms"]
    print(f"prefill {tokens} tokens: stock {s['ms']:.3f} ms, ktile {k['ms']:.3f} ms "
          f"({result['speedup']:.2f}x); host {s['host_ms']:.3f} / {k['host_ms']:.3f} ms")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
