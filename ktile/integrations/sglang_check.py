"""SGLang's layers, patched vs stock, on the CPU (docs/integrations.md, "SGLang").

    python -m ktile.integrations.sglang_check [--json] [--break-contract | --compile]

Run in the engine venv (scripts/setup-engines: .venv-engines). Builds each hooked layer at a small
shape, computes SGLang's stock `forward_native`, installs the integration (`sglang.install`,
switches from the environment), then runs new instances through `forward` (SGLang's own
dispatch) and the CUDA forms (`forward_cuda`, in place) and compares each with stock within
ktile's op tolerance (the op's reference.py). Small calls run ktile's interpreter; one call
per route above `sglang_ops.CPU_ROWS` rows runs the op's reference. `--break-contract` first
changes a hooked signature: the integration must stay off, with one warning. `--compile`
runs SGLang's torch.compile mode instead (`check_compiled`).

Prints a table, or with `--json` one JSON object last: `installed`, `warnings`, `cases` (name
-> max_diff / tolerance / ok / routed), `counters`, `versions`. Exit status 0 when every case
is within tolerance.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

os.environ.setdefault("SGLANG_USE_CPU_ENGINE", "1")     # SGLang's CPU platform (before import)

import numpy as np  # noqa: E402
import torch  # noqa: E402

HIDDEN, INTER, HEADS, KV_HEADS, HEAD = 128, 128, 2, 1, 64


def _tolerance(route: str, want: torch.Tensor) -> float:
    w = want.float().numpy()
    if route in ("rms_norm", "fused_add_rms_norm"):
        from ..ops.rmsnorm.reference import tolerance
        return tolerance(w)
    if route in ("silu_and_mul", "gelu_and_mul"):
        from ..dtypes import lookup
        from ..ops.activations.reference import tolerance
        return tolerance(w, lookup(str(want.dtype).removeprefix("torch.")))
    from ..ops.rotary.reference import tolerance
    return tolerance(w)


def _layers(dtype):
    from sglang.srt.layers.activation import GeluAndMul, SiluAndMul
    from sglang.srt.layers.layernorm import RMSNorm
    from sglang.srt.layers.rotary_embedding.base import RotaryEmbedding
    torch.manual_seed(0)
    norm = RMSNorm(HIDDEN, eps=1e-6).to(dtype)
    with torch.no_grad():
        norm.weight.copy_(1 + 0.1 * torch.randn(HIDDEN))
    return {"norm": norm, "silu": SiluAndMul(), "gelu_tanh": GeluAndMul("tanh"),
            "gelu_none": GeluAndMul("none"),
            "rope_neox": RotaryEmbedding(HEAD, HEAD, 256, 10000, True, dtype),
            "rope_gptj": RotaryEmbedding(HEAD, HEAD, 256, 10000, False, dtype)}


def _inputs(rows: int, dtype):
    g = torch.Generator().manual_seed(rows)
    r = lambda *s: torch.randn(*s, generator=g).to(dtype)            # noqa: E731
    return {"x": r(rows, HIDDEN), "res": r(rows, HIDDEN), "act": r(rows, 2 * INTER),
            "pos": torch.randint(0, 256, (rows,), generator=g),
            "q": r(rows, HEADS * HEAD), "k": r(rows, KV_HEADS * HEAD)}


def _calls(layers, t):
    """case -> (route, thunk): each call on fresh copies of its inputs."""
    c = lambda name: t[name].clone()                                   # noqa: E731
    n, rn, rg = layers["norm"], layers["rope_neox"], layers["rope_gptj"]
    return {
        "rms_norm": ("rms_norm", lambda: n(c("x"))),
        "fused_add_rms_norm": ("fused_add_rms_norm", lambda: n(c("x"), c("res"))),
        "fused_add_rms_norm.forward_cuda": ("fused_add_rms_norm",
                                            lambda: n.forward_cuda(c("x"), c("res"))),
        "silu_and_mul": ("silu_and_mul", lambda: layers["silu"](c("act"))),
        "gelu_and_mul.tanh": ("gelu_and_mul", lambda: layers["gelu_tanh"](c("act"))),
        "gelu_and_mul.none": ("gelu_and_mul", lambda: layers["gelu_none"](c("act"))),
        "rotary_embedding.neox": ("rotary_embedding",
                                  lambda: rn(t["pos"], c("q"), c("k"))),
        "rotary_embedding.gptj": ("rotary_embedding",
                                  lambda: rg(t["pos"], c("q"), c("k"))),
        "rotary_embedding.forward_cuda": ("rotary_embedding",
                                          lambda: rn.forward_cuda(t["pos"], c("q"), c("k"))),
    }


def _stock(layers, t):
    """What SGLang's forward_native gives for each case (the CUDA forms included)."""
    out, n = {}, layers["norm"]
    out["rms_norm"] = type(n).forward_native(n, t["x"].clone())
    out["fused_add_rms_norm"] = type(n).forward_native(n, t["x"].clone(), t["res"].clone())
    out["fused_add_rms_norm.forward_cuda"] = out["fused_add_rms_norm"]
    for case, key in (("silu_and_mul", "silu"), ("gelu_and_mul.tanh", "gelu_tanh"),
                      ("gelu_and_mul.none", "gelu_none")):
        out[case] = type(layers[key]).forward_native(layers[key], t["act"].clone())
    for case, key in (("rotary_embedding.neox", "rope_neox"),
                      ("rotary_embedding.gptj", "rope_gptj"),
                      ("rotary_embedding.forward_cuda", "rope_neox")):
        layer = layers[key]
        out[case] = type(layer).forward_native(layer, t["pos"], t["q"].clone(), t["k"].clone())
    return out


def _diff(got, want) -> tuple[float, float]:
    pairs = list(zip(got, want)) if isinstance(want, tuple) else [(got, want)]
    return (max(float((g.float() - w.float()).abs().max()) for g, w in pairs),
            max(float(w.float().abs().max()) for _, w in pairs))


def _routed_cuda(layers, route: str) -> bool:
    """Whether a forward_cuda case runs ktile's route (not SGLang's CUDA kernel)."""
    from . import _core
    key = {"fused_add_rms_norm": "norm", "rotary_embedding": "rope_neox"}[route]
    method = type(layers[key]).forward_cuda
    return (_core.enabled("sglang", route)
            and getattr(method, "__module__", "") == "ktile.integrations.sglang_hooks")


def check(break_contract: bool = False, dtype=torch.bfloat16) -> dict:
    import sglang
    from . import sglang as integration
    from .sglang_ops import CPU_ROWS
    from . import _core
    import sglang.srt.layers.layernorm  # noqa: F401 - the hooked modules, imported before
    import sglang.srt.layers.activation as activation
    import sglang.srt.layers.rotary_embedding.base  # noqa: F401

    small, large = _inputs(4, dtype), _inputs(CPU_ROWS + 8, dtype)
    stock_layers = _layers(dtype)
    stock = {"small": _stock(stock_layers, small), "large": _stock(stock_layers, large)}
    if break_contract:
        def forward_cuda(self, inputs):             # a renamed parameter
            return x
        activation.SiluAndMul.forward_cuda = forward_cuda
    _core.reset()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        installed = integration.install()
    layers = _layers(dtype)                         # new instances: dispatch resolved afresh
    cases = {}
    for size, t in (("small", small), ("large", large)):
        for case, (route, call) in _calls(layers, t).items():
            if case.endswith("forward_cuda") and not _routed_cuda(layers, route):
                continue                            # stock forward_cuda is SGLang's GPU kernel
            got, want = call(), stock[size][case]
            diff, scale = _diff(got, want)
            tol = _tolerance(route, want[0] if isinstance(want, tuple) else want)
            cases[f"{case}@{size}"] = {"route": route, "max_diff": diff, "tolerance": tol,
                                       "ok": bool(diff <= tol), "scale": scale}
    result = {"installed": installed is not None,
              "warnings": [str(w.message) for w in caught
                           if issubclass(w.category, RuntimeWarning)
                           and "ktile" in str(w.message)],
              "cases": cases, "counters": integration.counters(),
              "versions": {"sglang": sglang.__version__, "torch": torch.__version__,
                           "numpy": np.__version__}}
    integration.uninstall()
    return result


def check_compiled(dtype=torch.bfloat16) -> dict:
    """SGLang's torch.compile mode (`enter_torch_compile`: each layer runs forward_native) over
    a step calling the fused RMSNorm, SiluAndMul and RotaryEmbedding, compiled with
    fullgraph=True (AOT autograd, no Inductor): the routed ops are opaque, so the graph has no
    break and the counters count calls (two), not traces. Compared with the stock step."""
    from . import sglang as integration
    from . import _core
    t = _inputs(4, dtype)
    layers = _layers(dtype)
    norm, act, rope = layers["norm"], layers["silu"], layers["rope_neox"]

    def step(x, res, a, pos, q, k):
        y, h = norm(x, res)
        return (y, h, act(a), *rope(pos, q, k))
    args = (t["x"], t["res"], t["act"], t["pos"], t["q"], t["k"])
    want = step(*(a.clone() for a in args))
    _core.reset()
    installed = integration.install()
    layers = _layers(dtype)                         # new instances: dispatch resolved afresh
    norm, act, rope = layers["norm"], layers["silu"], layers["rope_neox"]
    for layer in (norm, act, rope):
        layer.enter_torch_compile(num_tokens=4)
    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    for _ in range(2):
        got = compiled(*(a.clone() for a in args))
    routes = ("fused_add_rms_norm", "fused_add_rms_norm", "silu_and_mul", "rotary_embedding",
              "rotary_embedding")
    cases = {}
    for i, (route, g, w) in enumerate(zip(routes, got, want)):
        diff, scale = _diff(g, w)
        tol = _tolerance(route, w)
        cases[f"compiled.{route}.{i}"] = {"route": route, "max_diff": diff, "tolerance": tol,
                                          "ok": bool(diff <= tol), "scale": scale}
    result = {"installed": installed is not None, "warnings": [], "cases": cases,
              "counters": integration.counters(), "versions": {"torch": torch.__version__}}
    integration.uninstall()
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object on the last line")
    parser.add_argument("--break-contract", action="store_true",
                        help="change SiluAndMul.forward_cuda's signature first")
    parser.add_argument("--compile", action="store_true",
                        help="SGLang's torch.compile mode instead (check_compiled)")
    args = parser.parse_args(argv)
    with torch.no_grad():                           # SGLang runs its models without grad
        result = check_compiled() if args.compile else check(args.break_contract)
    ok = all(c["ok"] for c in result["cases"].values())
    if args.json:
        print(json.dumps(result))
    else:
        print(f"installed: {result['installed']}  {result['versions']}")
        for w in result["warnings"]:
            print(f"warning: {w}")
        print(f"{'case':44} {'max |diff|':>11} {'tolerance':>10}  ok")
        for name, c in result["cases"].items():
            print(f"{name:44} {c['max_diff']:11.4g} {c['tolerance']:10.4g}  {c['ok']}")
        for route, c in sorted(result["counters"].items()):
            print(f"{route:30} {c}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
