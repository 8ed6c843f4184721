"""Warm-up: build, before the first call, every kernel the op calls of a model will launch.

    ktile.ops.warmup({"hidden_size": 4096, "intermediate_size": 14336, "vocab_size": 128256,
                      "num_heads": 32, "head_dim": 128, "max_tokens": 8192}, target="sm_90a")
    ktile.ops.warmup({"rms_norm": [(1, 4096), (512, 4096)]})       # op function -> shapes

Each op call is made as on a `target` GPU, on CPU tensors made by torch.empty (never
initialised), inside `runtime.builds.building(target)`: the op routes as it would on the GPU
(its measured table included), and each kernel call it makes checks its requirements and
traces what a GPU call loads, and runs nothing; the traces are then compiled in parallel.
The calls take the op's own path, not a copy of its routing: after warm-up an op call at
those shapes compiles nothing (tests/tier1/test_warmup_build.py counts with
`ktile.runtime.build_count()`; tests/tier3 on the H200, CUDA-graph capture included).
Loading the code objects onto a GPU is the first real call's work (it compiles nothing).

A shape that the op's measured table sends to an alternative (docs/tuning.md: a Triton kernel,
compiled by Triton's JIT at its first call) is called once more, for real (on CALLS' uninitialised inputs), on the
current CUDA device when it is the warmed target, with alternative routes on: that call is
where Triton compiles, so none is left for the first call after warm-up (or a CUDA-graph
capture). Elsewhere (no such device, another target) nothing of the alternatives runs.

`CALLS` (warmup_calls.py) says how to call each public op function, in each of its forms, at
a (rows, cols) problem: rows and cols as the op's routing table reads them ((rows, cols, inner)
for matmul and linear: M, N, K). The tuner times ops through the same calls.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from .warmup_calls import CALLS, OpCall  # noqa: F401 - OpCall: part of this module's API

MODEL_KEYS = ("hidden_size", "intermediate_size", "vocab_size", "num_heads", "head_dim",
              "max_tokens")


OPTIONAL_KEYS = {"num_kv_heads": "num_heads"}     # a key left out takes the other's value


def model_shapes(config: dict) -> dict[str, list[tuple[int, ...]]]:
    """The op calls of a decoder model's forward pass, by call name (CALLS), at every row count
    whose route may differ (1, max_tokens, and each side of every row bound of the op's
    table), for a config {hidden_size, intermediate_size, vocab_size, num_heads, head_dim,
    max_tokens} and optionally num_kv_heads (default num_heads): embedding; rms_norm and
    fused_add_rms_norm; the q/k/v, o, gate/up, down and lm-head projections (linear, M x N x
    K); rotary_embedding with a float32 cos/sin cache and one in the query's dtype (vLLM's);
    kv_cache_write; silu_and_mul; add; softmax over the vocabulary."""
    sizes = _model_sizes(config)
    hidden, inter, vocab = sizes["hidden_size"], sizes["intermediate_size"], sizes["vocab_size"]
    head = sizes["head_dim"]
    q_cols, kv_cols = sizes["num_heads"] * head, sizes["num_kv_heads"] * head
    widths = {"embedding": [hidden], "rms_norm": [hidden], "fused_add_rms_norm": [hidden],
              "add": [hidden], "rotary_embedding": [q_cols],
              "rotary_embedding_own_cache": [q_cols], "kv_cache_write": [kv_cols],
              "silu_and_mul": [inter], "softmax": [vocab],
              "linear": [(q_cols + 2 * kv_cols, hidden), (hidden, q_cols), (2 * inter, hidden),
                         (hidden, inter), (vocab, hidden)]}
    found = {}
    for name, shapes in widths.items():
        rows = _row_counts(CALLS[name].op, sizes["max_tokens"])
        found[name] = [(r, *s) if isinstance(s, tuple) else (r, s) for s in shapes for r in rows]
    return found


def _model_sizes(config: dict) -> dict:
    missing = [k for k in MODEL_KEYS if k not in config]
    if missing:
        raise InputError(f"warmup: the model config lacks {', '.join(missing)}",
                         hint=f"pass a dict with {', '.join(MODEL_KEYS)}, or a dict of op "
                              f"function -> [(rows, cols), ...]")
    sizes = {**{k: config.get(k, config.get(v)) for k, v in OPTIONAL_KEYS.items()},
             **{k: config[k] for k in MODEL_KEYS}}
    for key, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"warmup: model config '{key}' is {value!r}; it must be a "
                             f"positive int", hint=f"pass the model's {key}")
    return sizes


def _row_counts(op_name: str, max_tokens: int) -> list[int]:
    """1, max_tokens, and each side of each row bound of the op's routes below max_tokens."""
    rows = {1, max_tokens}
    for route in _op(op_name).table.routes:
        bound = route.max_rows
        if bound is not None and bound < max_tokens:
            rows |= {bound, bound + 1}
    return sorted(rows)


def _op(name: str):
    from ._library import all_ops
    for op in all_ops():
        if op.name == name:
            return op
    raise InputError(f"no op named {name!r}")


@dataclass(frozen=True)
class WarmupReport:
    target: str
    calls: int              # op calls made
    compiles: int           # compiler invocations they caused
    hits: int               # builds the cache served


def warmup(shapes_or_model_config: dict, *, target: str | None = None,
           dtypes: tuple[str, ...] = ("bf16",)) -> WarmupReport:
    """Build every kernel the op calls of `shapes_or_model_config` launch on `target` (None:
    the current CUDA device's) for each of `dtypes` (ktile names)."""
    from .. import targets
    from ..runtime.builds import build_count, build_traces, building
    shapes = _shapes(shapes_or_model_config)
    target = _target(target)
    targets.get(target)
    sizes = _model_sizes(shapes_or_model_config) if _is_model(shapes_or_model_config) else {}
    before, calls, traces = build_count(), 0, []
    with building(target, compile=False, collect=traces):
        for name, problems in shapes.items():
            for dtype in _torch_dtypes(dtypes):
                for shape in problems:
                    call_shape(name, shape, dtype, sizes)
                    calls += 1
    build_traces(traces)
    done = build_count() - before
    for name, rows, cols, dtype in alternative_calls(shapes, target, _torch_dtypes(dtypes)):
        call_op(name, rows, cols, dtype, sizes, "cuda")      # Triton's JIT compiles here
    return WarmupReport(target, calls, done.compiles, done.hits)


def alternative_calls(shapes: dict, target: str, dtypes: list) -> list[tuple]:
    """(call name, rows, cols, torch dtype) of the warm-up problems that `target`'s measured
    tables route to an alternative, when the current CUDA device is `target` and alternative
    routes are on; [] otherwise. Matmul-like calls (rows, cols, inner) have no alternatives."""
    from .alternatives_dispatch import enabled
    if not enabled() or _cuda_target() != target:
        return []
    found = []
    for name, problems in shapes.items():
        table = _op(CALLS[name].op).table
        routes = table.measured.alternatives(target)
        for shape in problems:
            if len(shape) == 2 and any(r.fits(shape[0], shape[1], target) for r in routes):
                found += [(name, shape[0], shape[1], dtype) for dtype in dtypes]
    return found


def _cuda_target() -> str | None:
    import torch
    if not torch.cuda.is_available():
        return None
    from ..runtime.devices import device, target_of
    return target_of(device(torch.cuda.current_device()))


def call_shape(name: str, shape: tuple, dtype, sizes: dict | None = None, device: str = "cpu"):
    """`call_op` at a warm-up problem: (rows, cols), or (rows, cols, inner) for matmul."""
    return call_op(name, shape[0], shape[1], dtype, sizes, device,
                   inner=shape[2] if len(shape) > 2 else None)


def call_op(name: str, rows: int, cols: int, dtype, sizes: dict | None = None,
            device: str = "cpu", inner: int | None = None):
    """Call the op function of CALLS[name] once at rows x cols (x inner: K of a matmul) of
    torch `dtype`, with CALLS' arguments."""
    from .. import ops
    call = CALLS[name]
    sizes = {**(sizes or {}), **({"inner": inner} if inner is not None else {})}
    args = call.make(rows, cols, dtype, sizes, device)
    return getattr(ops, call.function)(*args)


def _is_model(given: dict) -> bool:
    return any(k in given for k in MODEL_KEYS)


def _shapes(given) -> dict[str, list[tuple[int, ...]]]:
    if not isinstance(given, dict):
        raise InputError(f"warmup: expected a model config dict or a dict of op function -> "
                         f"[(rows, cols), ...], got {type(given).__name__}",
                         hint=f"pass {{'rms_norm': [(1, 4096)]}} or a config with "
                              f"{', '.join(MODEL_KEYS)}")
    if _is_model(given):
        return model_shapes(given)
    for name, problems in given.items():
        if name not in CALLS:
            raise InputError(f"warmup: no warm-up call named {name!r}",
                             hint=f"warm up one of: {', '.join(sorted(CALLS))}")
        size = 3 if CALLS[name].inner else 2
        form = "(rows, cols, inner)" if CALLS[name].inner else "(rows, cols)"
        for shape in problems:
            if (not isinstance(shape, tuple) or len(shape) != size
                    or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1
                               for v in shape)):
                raise InputError(f"warmup: {name}'s shape {shape!r} is not {form} of positive "
                                 f"ints", hint=f"pass [{form}, ...]"
                                               + ("  (M, N, K)" if CALLS[name].inner else ""))
    return {name: list(problems) for name, problems in given.items()}


def _target(target: str | None) -> str:
    if target is not None:
        return target
    import torch
    if not torch.cuda.is_available():
        raise InputError("warmup: no CUDA device to take the target from",
                         hint="pass target='sm_90a' (or another ktile target)")
    from ..runtime.devices import device, target_of
    return target_of(device(torch.cuda.current_device()))


def _torch_dtypes(dtypes) -> list:
    import torch
    from .. import dtypes as kt
    names = []
    for name in dtypes:
        found = getattr(kt, name, None) if isinstance(name, str) else None
        if found is None or not hasattr(found, "torch_name"):
            raise InputError(f"warmup: unknown dtype {name!r}",
                             hint="pass ktile dtype names: dtypes=('bf16', 'fp16')")
        names.append(getattr(torch, found.torch_name))
    return names
