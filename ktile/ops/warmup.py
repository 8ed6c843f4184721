"""Warm-up: build, before the first call, every kernel the op calls of a model will launch.

    ktile.ops.warmup({"hidden_size": 4096, "intermediate_size": 14336, "vocab_size": 128256,
                      "num_heads": 32, "head_dim": 128, "max_tokens": 8192}, target="sm_90a")
    ktile.ops.warmup({"rms_norm": [(1, 4096), (512, 4096)]})       # op function -> shapes

A model config may add num_kv_heads, max_context (paged decode), MoE sizes (num_experts,
num_experts_per_tok, moe_intermediate_size) and a quantization_config (fp8, AWQ):
`model_shapes` says which calls each brings.

Each op call is made as on a `target` GPU, on CPU tensors made by torch.empty (never
initialised), inside `runtime.builds.building(target)`: the op routes as it would on the GPU
(its measured table included), and each kernel call it makes checks its requirements and
traces what a GPU call loads, and runs nothing; the traces are then compiled in parallel.
The calls take the op's own path, not a copy of its routing: after warm-up an op call at
those shapes compiles nothing (tests/tier1/test_warmup_build.py counts with
`ktile.runtime.build_count()`; tests/tier3 on the H200, CUDA-graph capture included).
Loading the code objects onto a GPU is the first real call's work (it compiles nothing).

A shape that the op's measured table sends to an alternative (docs/tuning.md: a Triton kernel,
compiled by Triton's JIT at its first call) is called once more, for real (on CALLS'
uninitialised inputs), on the current CUDA device when it is the warmed target, with
alternative routes on: that call is
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
from .warmup_calls_layers import AWQ_GROUP, HEAD_DIMS, PAGE

MODEL_KEYS = ("hidden_size", "intermediate_size", "vocab_size", "num_heads", "head_dim",
              "max_tokens")


OPTIONAL_KEYS = {"num_kv_heads": "num_heads",    # a key left out takes the other's value
                 "max_context": "max_tokens"}      # paged decode's longest context
FP8_QUANT = ("scaled_fp8_quant", "scaled_fp8_quant_static")     # dynamic, static activations
MOE_KEYS = {"num_experts": ("num_experts", "num_local_experts"),     # Qwen's, Mixtral's name
            "top_k": ("num_experts_per_tok",),
            "moe_intermediate_size": ("moe_intermediate_size", "intermediate_size")}


def model_shapes(config: dict, target: str | None = None) -> dict[str, list[tuple[int, ...]]]:
    """The op calls of a decoder model's forward pass, by call name (CALLS), at every row count
    whose route may differ (1, max_tokens, and each side of every row bound of the op's
    table), for a config {hidden_size, intermediate_size, vocab_size, num_heads, head_dim,
    max_tokens} and optionally num_kv_heads (default num_heads): embedding; rms_norm and
    fused_add_rms_norm; the q/k/v, o, gate/up, down and lm-head projections (linear, M x N x
    K); rotary_embedding with a float32 cos/sin cache and one in the query's dtype (vLLM's);
    kv_cache_write; silu_and_mul; add; softmax over the vocabulary; at head_dim 64 or 128,
    causal prefill attention (L x head_dim) and paged decode (seqs x context, up to
    max_context tokens, default max_tokens). MoE (num_experts or num_local_experts,
    num_experts_per_tok, moe_intermediate_size or intermediate_size): the router's linear and
    fused_moe instead of the dense MLP. quantization_config (vLLM's / transformers'): "fp8"
    (per tensor; activation_scheme "dynamic" or "static") takes the projections but the lm
    head and the router to scaled_mm after scaled_fp8_quant; "awq" (bits 4, group_size 128)
    to awq_gemm; quantised experts are left out (fused_moe takes 16-bit ones).
    With `target`, calls whose op does not route there are left out (the model takes torch's
    op there)."""
    sizes = _model_sizes(config)
    hidden, inter, vocab = sizes["hidden_size"], sizes["intermediate_size"], sizes["vocab_size"]
    head, tokens = sizes["head_dim"], sizes["max_tokens"]
    q_cols, kv_cols = sizes["num_heads"] * head, sizes["num_kv_heads"] * head
    moe = "num_experts" in sizes
    projections = [(q_cols + 2 * kv_cols, hidden), (hidden, q_cols)]
    if not moe:
        projections += [(2 * inter, hidden), (hidden, inter)]
    unquantised = [(vocab, hidden)] + ([(sizes["num_experts"], hidden)] if moe else [])
    widths = {"embedding": [hidden], "rms_norm": [hidden], "fused_add_rms_norm": [hidden],
              "add": [hidden], "rotary_embedding": [q_cols],
              "rotary_embedding_own_cache": [q_cols], "kv_cache_write": [kv_cols],
              "softmax": [vocab], "linear": unquantised}        # the lm head, the router
    for name, shapes in _projection_widths(config.get("quantization_config"),
                                           projections).items():
        widths[name] = widths.get(name, []) + shapes
    if not moe:
        widths["silu_and_mul"] = [inter]
    found = {}
    for name, shapes in widths.items():
        rows = _row_counts(CALLS[name].op, tokens)
        found[name] = [(r, *s) if isinstance(s, tuple) else (r, s) for s in shapes for r in rows]
    if head in HEAD_DIMS:
        found["scaled_dot_product_attention_causal"] = [
            (r, head) for r in _row_counts("scaled_dot_product_attention", tokens)]
        found["paged_attention_decode"] = [
            (seqs, context)
            for seqs in _row_counts("paged_attention_decode", tokens, sizes["num_kv_heads"])
            for context in _col_counts("paged_attention_decode", sizes["max_context"], PAGE)]
    if moe and not config.get("quantization_config"):    # fused_moe's experts: unquantised
        found["fused_moe"] = [(r, hidden) for r in
                              _row_counts("moe_grouped_gemm", tokens, sizes["top_k"])]
    if target is not None:       # an fp8 model's activation quantisation goes with scaled_mm
        routes = {name: CALLS[name].routes_on(target) for name in found}
        found = {name: shapes for name, shapes in found.items() if routes[name]
                 and not (name in FP8_QUANT and not CALLS["scaled_mm"].routes_on(target))}
    return found


def _projection_widths(quant, projections: list) -> dict:
    """The calls of the projections but the lm head (N, K each), by the quantisation config."""
    if not quant:
        return {"linear": projections}
    method = quant.get("quant_method") if isinstance(quant, dict) else None
    if method == "fp8":
        if quant.get("weight_block_size"):
            raise InputError("warmup: quantization_config has weight_block_size "
                             f"{quant['weight_block_size']}; ktile's scaled_mm takes per-tensor "
                             "or per-token / per-channel scales, not blocks",
                             hint="warm up with a shapes dict, leaving the block-scaled GEMMs "
                                  "to torch")
        scheme = quant.get("activation_scheme", "dynamic")
        if scheme not in ("dynamic", "static"):
            raise InputError(f"warmup: quantization_config's activation_scheme is {scheme!r}",
                             hint="pass 'dynamic' or 'static' (vLLM's fp8 config)")
        quantise = FP8_QUANT[scheme == "static"]
        return {"scaled_mm": projections, quantise: sorted({k for _, k in projections})}
    if method == "awq":
        bits, group = quant.get("bits", quant.get("w_bit")), \
            quant.get("group_size", quant.get("q_group_size"))
        if bits != 4 or group != AWQ_GROUP:
            raise InputError(f"warmup: quantization_config is AWQ with bits {bits!r} and "
                             f"group_size {group!r}; ktile's awq_gemm takes bits 4, group_size "
                             f"{AWQ_GROUP}", hint="warm up with a shapes dict, leaving these "
                                                  "projections to torch")
        return {"awq_gemm": projections}
    raise InputError(f"warmup: quantization_config's quant_method is {method!r}",
                     hint="pass 'fp8' or 'awq', or leave quantization_config out")


def _model_sizes(config: dict) -> dict:
    missing = [k for k in MODEL_KEYS if k not in config]
    if missing:
        raise InputError(f"warmup: the model config lacks {', '.join(missing)}",
                         hint=f"pass a dict with {', '.join(MODEL_KEYS)}, or a dict of op "
                              f"function -> [(rows, cols), ...]")
    sizes = {**{k: config.get(k, config.get(v)) for k, v in OPTIONAL_KEYS.items()},
             **{k: config[k] for k in MODEL_KEYS}}
    if any(config.get(name) for name in MOE_KEYS["num_experts"]):
        sizes.update({key: next((config[n] for n in names if config.get(n) is not None), None)
                      for key, names in MOE_KEYS.items()})
    for key, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"warmup: model config '{key}' is {value!r}; it must be a "
                             f"positive int", hint=f"pass the model's {key}"
                             + (" (num_experts_per_tok)" if key == "top_k" else ""))
    return sizes


def _row_counts(op_name: str, max_rows: int, per_row: int = 1) -> list[int]:
    """1, max_rows, and each side of each row bound of the op's routes below max_rows: rows
    of the call, each `per_row` of the table's rows (a sequence's kv heads, a token's top-k
    slots)."""
    rows = {1, max_rows}
    for route in _op(op_name).table.routes:
        if route.max_rows is not None:
            rows |= {route.max_rows // per_row, route.max_rows // per_row + 1}
        if route.min_rows is not None:
            rows |= {-(-route.min_rows // per_row) - 1, -(-route.min_rows // per_row)}
    return sorted(r for r in rows if 1 <= r <= max_rows)


def _col_counts(op_name: str, max_cols: int, step: int) -> list[int]:
    """step, max_cols rounded up to `step`, and each side of each column bound of the op's
    routes below it (multiples of `step`: paged decode's pages)."""
    top = -(-max_cols // step) * step
    cols = {step, top}
    for route in _op(op_name).table.routes:
        if route.max_cols is not None:
            edge = route.max_cols // step * step
            cols |= {edge, edge + step}
    return sorted(c for c in cols if step <= c <= top)


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


SIZE_KEYS = ("num_heads", "num_kv_heads", "head_dim", "num_experts", "top_k",
             "moe_intermediate_size", "vocab_size")


def warmup(shapes_or_model_config: dict, *, target: str | None = None,
           dtypes: tuple[str, ...] = ("bf16",), sizes: dict | None = None) -> WarmupReport:
    """Build every kernel the op calls of `shapes_or_model_config` launch on `target` (None:
    the current CUDA device's) for each of `dtypes` (ktile names). `sizes` (a shapes dict's
    only) gives the calls the model sizes their problems leave out (SIZE_KEYS: paged
    decode's head_dim, the MoE calls' num_experts and top_k, ...; defaults in
    warmup_calls_layers.py)."""
    from .. import targets
    from ..runtime.builds import build_count, build_traces, building
    target = _target(target)
    targets.get(target)
    shapes = _shapes(shapes_or_model_config, target)
    sizes = _model_sizes(shapes_or_model_config) if _is_model(shapes_or_model_config) \
        else _given_sizes(sizes or {})
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


def _given_sizes(sizes: dict) -> dict:
    for key, value in sizes.items() if isinstance(sizes, dict) else [("sizes", sizes)]:
        if key not in SIZE_KEYS or isinstance(value, bool) or not isinstance(value, int) \
                or value < 1:
            raise InputError(f"warmup: sizes' {key!r} is {value!r}",
                             hint=f"pass sizes={{key: positive int}} for keys of "
                                  f"{', '.join(SIZE_KEYS)}")
    return sizes


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
    return getattr(ops, call.function)(*args, **(call.keywords(sizes) if call.keywords else {}))


def _is_model(given: dict) -> bool:
    return any(k in given for k in MODEL_KEYS)


def _shapes(given, target: str | None = None) -> dict[str, list[tuple[int, ...]]]:
    if not isinstance(given, dict):
        raise InputError(f"warmup: expected a model config dict or a dict of op function -> "
                         f"[(rows, cols), ...], got {type(given).__name__}",
                         hint=f"pass {{'rms_norm': [(1, 4096)]}} or a config with "
                              f"{', '.join(MODEL_KEYS)}")
    if _is_model(given):
        return model_shapes(given, target)
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
