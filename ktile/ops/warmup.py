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

`CALLS` says how to call each op function at a (rows, cols) problem: rows and cols as the op's
routing table reads them. The tuner times ops through the same calls.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import InputError

MODEL_KEYS = ("hidden_size", "intermediate_size", "vocab_size", "num_heads", "head_dim",
              "max_tokens")


@dataclass(frozen=True)
class OpCall:
    """How to call `ktile.ops.<function>` (of op `op`) at `rows` x `cols`: `make(rows, cols,
    dtype, sizes)` returns the arguments (tensors of torch `dtype`, on the CPU unless `device`
    says otherwise); `sizes` holds the model's other sizes (vocab_size...)."""
    function: str
    op: str
    make: Callable[..., tuple]


def _empty(shape, dtype, device):
    import torch
    return torch.empty(shape, dtype=dtype, device=device)


def _zeros(shape, dtype, device):
    import torch
    return torch.zeros(shape, dtype=dtype, device=device)


def _norm(rows, cols, dtype, sizes, device="cpu"):
    return _empty((rows, cols), dtype, device), _zeros((cols,), dtype, device)


def _fused(rows, cols, dtype, sizes, device="cpu"):
    return (_empty((rows, cols), dtype, device), _empty((rows, cols), dtype, device),
            _zeros((cols,), dtype, device))


def _layer_norm(rows, cols, dtype, sizes, device="cpu"):
    return (_empty((rows, cols), dtype, device), _zeros((cols,), dtype, device),
            _zeros((cols,), dtype, device))


def _gated(rows, cols, dtype, sizes, device="cpu"):
    return (_empty((rows, 2 * cols), dtype, device),)


def _one(rows, cols, dtype, sizes, device="cpu"):
    return (_empty((rows, cols), dtype, device),)


def _two(rows, cols, dtype, sizes, device="cpu"):
    return _empty((rows, cols), dtype, device), _empty((rows, cols), dtype, device)


def _embedding(rows, cols, dtype, sizes, device="cpu"):
    import torch
    vocab = sizes.get("vocab_size", 1)
    return _zeros((rows,), torch.int32, device), _empty((vocab, cols), dtype, device)


def _rotary(rows, cols, dtype, sizes, device="cpu"):
    import torch
    head = sizes.get("head_dim", 128)
    return (_zeros((rows,), torch.int64, device), _empty((rows, cols), dtype, device),
            _empty((rows, cols), dtype, device), head,
            _zeros((1, head), torch.float32, device))


CALLS = {call.function: call for call in (
    OpCall("rms_norm", "rms_norm", _norm),
    OpCall("fused_add_rms_norm", "fused_add_rms_norm", _fused),
    OpCall("layer_norm", "layer_norm", _layer_norm),
    OpCall("silu_and_mul", "act_and_mul", _gated),
    OpCall("softmax", "softmax", _one),
    OpCall("add", "elementwise", _two),
    OpCall("embedding", "embedding", _embedding),
    OpCall("rotary_embedding", "rotary_embedding", _rotary),
)}


def model_shapes(config: dict) -> dict[str, list[tuple[int, int]]]:
    """The op calls of a decoder model's forward pass, by op function, at every row count
    whose route may differ (1, max_tokens, and each side of every row bound of the op's
    table), for a config {hidden_size, intermediate_size, vocab_size, num_heads, head_dim,
    max_tokens}."""
    missing = [k for k in MODEL_KEYS if k not in config]
    if missing:
        raise InputError(f"warmup: the model config lacks {', '.join(missing)}",
                         hint=f"pass a dict with {', '.join(MODEL_KEYS)}, or a dict of op "
                              f"function -> [(rows, cols), ...]")
    for key in MODEL_KEYS:
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"warmup: model config '{key}' is {value!r}; it must be a "
                             f"positive int", hint=f"pass the model's {key}")
    hidden, heads = config["hidden_size"], config["num_heads"] * config["head_dim"]
    widths = {"embedding": hidden, "rms_norm": hidden, "fused_add_rms_norm": hidden,
              "add": hidden, "rotary_embedding": heads,
              "silu_and_mul": config["intermediate_size"], "softmax": config["vocab_size"]}
    return {fn: [(rows, cols) for rows in _row_counts(CALLS[fn].op, config["max_tokens"])]
            for fn, cols in widths.items()}


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
    sizes = shapes_or_model_config if "max_tokens" in shapes_or_model_config else {}
    before, calls, traces = build_count(), 0, []
    with building(target, compile=False, collect=traces):
        for function, problems in shapes.items():
            for dtype in _torch_dtypes(dtypes):
                for rows, cols in problems:
                    call_op(function, rows, cols, dtype, sizes)
                    calls += 1
    build_traces(traces)
    done = build_count() - before
    return WarmupReport(target, calls, done.compiles, done.hits)


def call_op(function: str, rows: int, cols: int, dtype, sizes: dict | None = None,
            device: str = "cpu"):
    """Call `ktile.ops.<function>` once at rows x cols of torch `dtype` (CALLS' arguments)."""
    from .. import ops
    args = CALLS[function].make(rows, cols, dtype, sizes or {}, device)
    return getattr(ops, function)(*args)


def _shapes(given) -> dict[str, list[tuple[int, int]]]:
    if not isinstance(given, dict):
        raise InputError(f"warmup: expected a model config dict or a dict of op function -> "
                         f"[(rows, cols), ...], got {type(given).__name__}",
                         hint=f"pass {{'rms_norm': [(1, 4096)]}} or a config with "
                              f"{', '.join(MODEL_KEYS)}")
    if any(k in given for k in MODEL_KEYS):
        return model_shapes(given)
    for function, problems in given.items():
        if function not in CALLS:
            raise InputError(f"warmup: no warm-up call for op function {function!r}",
                             hint=f"warm up one of: {', '.join(sorted(CALLS))}")
        for shape in problems:
            if (not isinstance(shape, tuple) or len(shape) != 2
                    or not all(isinstance(v, int) and v >= 1 for v in shape)):
                raise InputError(f"warmup: {function}'s shape {shape!r} is not (rows, cols) "
                                 f"of positive ints", hint="pass [(rows, cols), ...]")
    return {function: list(problems) for function, problems in given.items()}


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
