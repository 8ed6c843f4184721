"""`scripts/engine-ab vllm [--json]`: vLLM stock vs vLLM with ktile's routes, greedy tokens on a
tiny random Qwen3 built here (vllm_models.py; `--moe` its MoE kind, `--awq` its AWQ kind), in
eager and compiled (torch.compile) modes.

One child process per mode, the two side by side (`--jobs 1`: one child for every mode), builds
its engines one after the other (importing vLLM costs more than an engine): "ktile" first
(vLLM loads the plugin, which installs: `plugin_loaded`), "stock" (the patches undone), and in
the first mode "broken" (a hooked signature changed, then installed again: the integration
must stay off, the engine stock, and warn). vLLM's engine core runs in the child
(VLLM_ENABLE_V1_MULTIPROCESSING=0), so the counters are read in place; the compile cache is off
(its key does not see the patches).
With `--tp N` (tensor parallelism on the CPU) the engine runs N worker processes instead, each
loading the plugin and routing its own shard; their counters come back through
`collective_rpc` (`counters_by_rank`, and summed in `counters`). The parent compares the arms'
tokens and prints a table, or with `--json` one JSON object last: tokens_identical, counters
(ktile arms, per mode), timings, contract.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

PROMPTS = ["Hello world, this is", "The quick brown fox", "Kernels written as tiles"]
MODES = ("eager", "compiled")


ENV = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_CPU_KVCACHE_SPACE": "1",
       "VLLM_DISABLE_COMPILE_CACHE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
       "VLLM_LOGGING_LEVEL": "WARNING"}
ARMS = ("ktile", "stock", "broken")     # ktile first: vLLM loads the plugin, which installs


def _break_contract():
    """Give a hooked method another signature, as a vLLM release that moved it would; returns
    the undo."""
    from vllm.model_executor.layers.linear import UnquantizedLinearMethod as Method
    stock = Method.__dict__["apply"]

    def apply(self, layer, inputs, bias=None):          # `x` renamed
        return stock(self, layer, inputs, bias)
    Method.apply = apply
    return lambda: setattr(Method, "apply", stock)


def _prepare(arm: str, mode: str):
    """Patch state for `arm` before its engine is built; returns (undo, warnings caught).
    The eager ktile arm runs in shadow mode: each routed call is also compared with vLLM's
    own path (counted as shadow_mismatch)."""
    from ktile.integrations import vllm as integration
    os.environ["KTILE_VLLM"] = "0" if arm == "stock" else "1"
    os.environ["KTILE_VLLM_SHADOW"] = "1" if (arm, mode) == ("ktile", "eager") else "0"
    if arm == "ktile":
        integration.install()        # a no-op where the plugin already installed
        return (lambda: None), []
    integration.uninstall()
    if arm == "stock":
        return (lambda: None), []
    undo = _break_contract()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        integration.install()
    return undo, [str(w.message) for w in caught if "ktile" in str(w.message)]


def _sum(by_rank: list[dict]) -> dict:
    total: dict = {}
    for counters in by_rank:
        for route, c in counters.items():
            row = total.setdefault(route, dict.fromkeys(c, 0))
            for kind, n in c.items():
                row[kind] = row.get(kind, 0) + n
    return total


def run_arm(llm_class, params, arm: str, mode: str, model: str, tp: int = 1) -> dict:
    """One engine: build, generate greedily; tokens, counters, timings."""
    import gc
    from ktile.integrations import vllm as integration
    started = time.perf_counter()
    undo, caught = _prepare(arm, mode)
    parallel = {"tensor_parallel_size": tp, "distributed_executor_backend": "mp"} if tp > 1 else {}
    llm = llm_class(model=model, dtype="bfloat16", max_model_len=128, max_num_seqs=4, seed=0,
                    enforce_eager=(mode == "eager"), max_num_batched_tokens=128, **parallel)
    ready = time.perf_counter()
    # vLLM ran the plugin's entry point while it built the engine (the process's first
    # engine only: vLLM loads plugins once per process; uninstall clears the flag)
    loaded = integration._REGISTERED
    if tp > 1:                                   # the workers' own counters
        llm.collective_rpc(integration.reset_counters)
    integration.reset_counters()                 # the profile and warm-up runs' calls
    outs = llm.generate(PROMPTS, params)
    done = time.perf_counter()
    by_rank = llm.collective_rpc(integration.counters) if tp > 1 else [integration.counters()]
    result = {"arm": arm, "mode": mode, "tp": tp, "plugin_loaded": loaded,
              "installed": integration._INSTALLED is not None,
              "shadow": os.environ["KTILE_VLLM_SHADOW"] == "1",
              "tokens": [list(o.outputs[0].token_ids) for o in outs],
              "logprobs": [[max(step.values(), key=lambda l: l.logprob).logprob
                            for step in o.outputs[0].logprobs] for o in outs],
              "counters": _sum(by_rank), "counters_by_rank": by_rank, "warnings": caught,
              "init_s": round(ready - started, 2), "generate_s": round(done - ready, 2)}
    if tp > 1:                 # the workers decide: installed where any rank routed a call
        result["installed"] = any(c.get("eager", 0) for c in result["counters"].values())
    undo()
    del llm
    gc.collect()
    return result


def run_setup(setup: str | None) -> None:
    """`FILE.py:FUNCTION` (or `module:FUNCTION`): called once in the engines' process before
    any engine is built, e.g. to route a user's own kernel (vllm_ops.use_kernel)."""
    if not setup:
        return
    where, _, name = setup.rpartition(":")
    if where.endswith(".py"):
        import runpy
        namespace = runpy.run_path(where, run_name="ktile_ab_setup")
    else:
        import importlib
        namespace = vars(importlib.import_module(where))
    namespace[name]()


def run_modes(modes, model: str, tokens: int, contract: bool, setup: str | None = None,
              tp: int = 1) -> list[dict]:
    """Every arm of every mode in this process, one engine after the other (vLLM's import
    costs more than an engine): ktile, stock, and in the first mode broken."""
    run_setup(setup)
    os.environ.update(ENV)
    if tp > 1:      # one NUMA node here: vLLM's automatic thread binding refuses 2 workers
        os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
        os.environ["VLLM_ALLOW_INSECURE_SERIALIZATION"] = "1"   # collective_rpc(counters)
    os.environ["KTILE_VLLM"] = "1"
    from vllm import LLM, SamplingParams
    params = SamplingParams(temperature=0.0, max_tokens=tokens, logprobs=1)
    return [run_arm(LLM, params, arm, mode, model, tp) for mode in modes for arm in ARMS
            if arm != "broken" or (contract and mode == modes[0])]


def _start(modes, model: str, tokens: int, contract: bool, setup: str | None,
           tp: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "ktile.integrations.ab_vllm", "--child", ",".join(modes),
           "--model", model, "--tokens", str(tokens), "--tp", str(tp)]
    cmd += ["--setup", setup] if setup else []
    cmd += [] if contract else ["--no-contract"]
    # run outside the checkout: its ktile.egg-info (the main venv's) would hide the engine
    # venv's ktile metadata, and with it the plugin's entry point
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tempfile.gettempdir())


def _results(proc: subprocess.Popen) -> list[dict]:
    out, err = proc.communicate()
    lines = [l for l in out.splitlines() if l.startswith("[")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"engine-ab vllm: the engines failed "
                           f"(exit {proc.returncode}):\n{err[-4000:]}")
    return json.loads(lines[-1])


def _run_children(modes, model: str, tokens: int, contract: bool, setup: str | None, tp: int,
                  jobs: int) -> list[dict]:
    """Every engine in child processes: one per mode at once (`jobs` > 1; each imports vLLM,
    but the two modes run side by side on two cores), else one for every mode. The contract
    arm runs in the first mode's child."""
    groups = [modes[i::jobs] for i in range(min(jobs, len(modes)))]
    procs = [_start(group, model, tokens, contract and modes[0] in group, setup, tp)
             for group in groups]
    return [r for proc in procs for r in _results(proc)]


def _max_diff(a: list, b: list) -> float:
    return max((abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb)), default=0.0)


def compare(model: str, tokens: int, modes=MODES, contract: bool = True,
            setup: str | None = None, tp: int = 1, jobs: int = 2) -> dict:
    """Every arm (`_run_children`); the verdict."""
    contract = contract and tp == 1       # the broken arm patches this process, not workers
    arms = {f"{r['arm']}/{r['mode']}": r
            for r in _run_children(modes, model, tokens, contract, setup, tp, jobs)}
    same = {mode: arms[f"stock/{mode}"]["tokens"] == arms[f"ktile/{mode}"]["tokens"]
            for mode in modes}
    result = {"engine": "vllm", "model": model, "prompts": len(PROMPTS), "max_tokens": tokens,
              "tokens_identical": all(same.values()), "tokens_identical_by_mode": same,
              "max_logprob_diff": {mode: _max_diff(arms[f"stock/{mode}"]["logprobs"],
                                                   arms[f"ktile/{mode}"]["logprobs"])
                                   for mode in modes},
              "tp": tp, "installed": {mode: arms[f"ktile/{mode}"]["installed"] for mode in modes},
              # vLLM loads plugins once per process: each child's first engine (the ktile
              # arm of its first mode, modes[:jobs]) says
              "plugin_loaded": all(arms[f"ktile/{m}"]["plugin_loaded"] for m in modes[:jobs]),
              "counters": {mode: arms[f"ktile/{mode}"]["counters"] for mode in modes},
              "counters_by_rank": {mode: arms[f"ktile/{mode}"]["counters_by_rank"]
                                   for mode in modes},
              "stock_counters": {mode: arms[f"stock/{mode}"]["counters"] for mode in modes},
              "timings": {name: {"init_s": a["init_s"], "generate_s": a["generate_s"]}
                          for name, a in arms.items()}}
    if contract:
        broken, stock = arms[f"broken/{modes[0]}"], arms[f"stock/{modes[0]}"]
        result["contract"] = {
            "installed": broken["installed"], "warnings": broken["warnings"],
            "counters": broken["counters"], "tokens_identical": broken["tokens"] == stock["tokens"]}
    return result


def model_routes(model: str) -> tuple:
    """The switched-on routes a checkpoint's layers call: a MoE model's (every layer sparse)
    has no dense MLP (no silu_and_mul: the experts' SiLU is inside fused_moe), a dense one no
    fused_moe; an AWQ one no linear, a plain one no awq_gemm."""
    from . import _core
    from .vllm import ENGINE, ROUTES
    with open(os.path.join(model, "config.json")) as f:
        config = json.load(f)
    experts = config.get("num_experts") or config.get("num_local_experts") or 0
    absent = {"silu_and_mul" if experts and not config.get("mlp_only_layers") else "fused_moe"}
    # an AWQ checkpoint's projections take the AWQ method (the head is tied to the embedding)
    awq = config.get("quantization_config", {}).get("quant_method") == "awq"
    absent.add("linear" if awq else "awq_gemm")
    return tuple(route for route in ROUTES
                 if route not in absent and _core.enabled(ENGINE, route))


def routed_everywhere(result: dict) -> bool:
    """Every route of the model was called in every mode and on every rank (its kernel,
    reference or the engine's path)."""
    return all(route in counters and sum(counters[route].values()) > 0
               for ranks in result["counters_by_rank"].values() for counters in ranks
               for route in model_routes(result["model"]))


def table(result: dict) -> str:
    rows = [f"vLLM A/B on {result['model']} (tensor parallel {result['tp']}): tokens identical: "
            f"{result['tokens_identical']} {result['tokens_identical_by_mode']}; plugin loaded "
            f"by vLLM: {result['plugin_loaded']}",
            f"{'mode':<9} {'route':<20} {'eager':>6} {'captured':>8} {'reference':>9} "
            f"{'fallback':>8}"]
    for mode, counters in result["counters"].items():
        for route, c in sorted(counters.items()):
            rows.append(f"{mode:<9} {route:<20} {c['eager']:>6} {c['captured']:>8} "
                        f"{c['reference']:>9} {c['fallback']:>8}")
    for name, t in result["timings"].items():
        rows.append(f"{name:<16} init {t['init_s']:>6.1f} s  generate {t['generate_s']:>6.1f} s")
    if "contract" in result:
        rows.append(f"contract (a hooked signature changed): installed="
                    f"{result['contract']['installed']}, warned="
                    f"{bool(result['contract']['warnings'])}")
    return "\n".join(rows)


def _absolute(setup: str) -> str:
    """A FILE.py setup's path made absolute (the engines run in another folder)."""
    where, _, name = setup.rpartition(":")
    return f"{os.path.abspath(where)}:{name}" if where.endswith(".py") else setup


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="engine-ab vllm", description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="one JSON object, last line")
    parser.add_argument("--model", help="a checkpoint folder (default: the tiny Qwen3)")
    parser.add_argument("--moe", action="store_true",
                        help="the tiny Qwen3-MoE (vllm_models.py --moe) as the default model")
    parser.add_argument("--awq", action="store_true",
                        help="the tiny AWQ Qwen3 (vllm_models.py --awq) as the default model")
    parser.add_argument("--tokens", type=int, default=6, help="greedy tokens per prompt")
    parser.add_argument("--modes", default=",".join(MODES), help="eager,compiled")
    parser.add_argument("--no-contract", action="store_true", help="skip the broken arm")
    parser.add_argument("--setup", help="FILE.py:FUNCTION or module:FUNCTION, called in the "
                                            "engines' process first (e.g. use_kernel)")
    parser.add_argument("--tp", type=int, default=1,
                        help="tensor_parallel_size (worker processes on the CPU; no contract arm)")
    parser.add_argument("--jobs", type=int, default=2,
                        help="child processes at once (one per mode; 1: every mode in one)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    modes = tuple((args.child or args.modes).split(","))
    if any(mode not in MODES for mode in modes) or args.tp < 1 or args.jobs < 1:
        from ..errors import InputError
        raise InputError(f"engine-ab vllm: --modes takes eager and/or compiled (got "
                         f"{args.child or args.modes!r}); --tp (got {args.tp}) and --jobs (got "
                         f"{args.jobs}) take a count >= 1")
    if args.child:                                   # the child: every engine
        print(json.dumps(run_modes(modes, args.model, args.tokens, not args.no_contract,
                                   args.setup, args.tp)))
        return 0
    from .vllm_models import tiny_model
    kind = "qwen3-moe" if args.moe else "qwen3-awq" if args.awq else "qwen3"
    model = args.model or str(tiny_model(kind))
    result = compare(model, args.tokens, modes, not args.no_contract,
                     args.setup and _absolute(args.setup), args.tp, args.jobs)
    print(json.dumps(result) if args.json else table(result))
    contract = result.get("contract", {"installed": False, "warnings": ["not run"]})
    ok = (result["tokens_identical"] and all(result["installed"].values())
          and result["plugin_loaded"] and routed_everywhere(result) and not contract["installed"]
          and bool(contract["warnings"]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
