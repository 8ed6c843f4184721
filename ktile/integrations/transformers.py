"""ktile's ops inside a transformers model: `patch(model)` / `unpatch(model)` for Qwen3 and
Llama models (transformers 5.17; docs/integrations.md).

    from ktile.integrations import transformers as kt
    kt.patch(model)                     # after model.to(device) and the dtype are final
    model(...)                          # eager, torch.compile(fullgraph=True), CUDA graphs
    kt.counters()                       # "transformers.<op>" -> eager / captured / fallback
    kt.unpatch(model)

What is hooked, per op (`ops=` picks a subset; `KTILE_TRANSFORMERS_<OP>=0` turns one off,
`KTILE_TRANSFORMERS=0` all of them):

- rms_norm: each RMSNorm module's forward.
- fused_add_rms_norm: each decoder layer's forward (the residual add and the post-attention norm
  as one op).
- silu_and_mul: each MLP's forward; gate_proj and up_proj become views of one [gate; up] weight:
  one GEMM, then silu_and_mul, then down_proj.
- linear: each nn.Linear's forward in the decoder layers, and lm_head.
- rotary_embedding, kv_cache_write: each attention module's forward, its own code run with
  `apply_rotary_pos_emb` routed and `past_key_values.update` on a StaticCache layer routed.
- attention: the AttentionInterface implementation "ktile" (ktile has no attention kernel yet:
  SDPA).

Every hook is on this model's own modules (and "ktile" is registered as an attention
implementation name): other models, patched or not, are untouched.
Each hooked op then routes per call through `ROUTES` (transformers_forwards.py): "ktile" or
"stock". The engine contract: every hooked symbol's signature and every module the patch touches
is checked first; on any mismatch nothing changes and one warning names what moved.
"""
from __future__ import annotations

import sys
import types
import warnings
from dataclasses import dataclass, field

import torch

from ..errors import InputError
from . import _core
from . import transformers_forwards as fw
from . import transformers_ops  # noqa: F401  (registers torch.ops.ktile_transformers.*)
from .transformers_forwards import CHOICES, NO_KTILE_KERNEL, ROUTES, choose  # noqa: F401
from .transformers_ops import ENGINE, GRAPH, route_name  # noqa: F401

OPS = tuple(ROUTES)
FAMILIES = {"qwen3": "Qwen3", "llama": "Llama"}     # modeling module -> class-name prefix
ATTENTION = "ktile"                                 # the AttentionInterface name
LAYER_PARAMS = ("self", "hidden_states", "attention_mask", "position_ids", "past_key_values",
                "use_cache", "position_embeddings")
ATTENTION_PARAMS = ("self", "hidden_states", "position_embeddings", "attention_mask",
                    "past_key_values")


@dataclass
class _Patch:
    family: str
    ops: tuple[str, ...]
    forwards: list = field(default_factory=list)      # modules given an instance forward
    merged: list = field(default_factory=list)        # MLPs holding _ktile_gate_up
    attention: str | None = None                      # the implementation to restore
    routed_module: str | None = None                  # the attention code's routed globals


def counters() -> dict[str, dict[str, int]]:
    """This integration's routes ("transformers.<op>") -> eager / captured / fallback /
    shadow_mismatch calls."""
    return {k: v for k, v in _core.counters().items() if k.startswith(ENGINE + ".")}


def status(model) -> dict[str, object] | None:
    """op -> its route (ROUTES' entry) for each op patched into `model`; None when stock."""
    record = getattr(model, "_ktile_patch", None)
    return None if record is None else {op: fw.ROUTES.get(op, "stock") for op in record.ops}


def patch(model, *, ops=None):
    """Route `model`'s ops to ktile (see the module docstring); returns `model`. With
    `KTILE_TRANSFORMERS=0`, or when transformers no longer has what a hook expects (one
    warning), the model stays stock."""
    selected = _selected(ops)
    if getattr(model, "_ktile_patch", None) is not None:
        raise InputError("patch: 'model' is already patched", hint="call unpatch(model) first")
    family, modeling = _family(model)
    if not _core.enabled(ENGINE):
        return model
    selected = tuple(op for op in selected if _core.enabled(ENGINE, op))
    moved = [m for m in (h.mismatch() for h in _hooks(model, modeling, family, selected)) if m]
    moved += _structure(model, family, selected)
    if moved:
        warnings.warn(f"ktile: the {ENGINE} integration is off, the model stays stock: "
                      + "; ".join(moved), RuntimeWarning, stacklevel=2)
        return model
    record = _Patch(family, selected)
    _apply(model, modeling, family, record)
    model._ktile_patch = record
    fw.STATE["shadow"] = _core.shadow(ENGINE)
    return model


def unpatch(model):
    """Put `model` back to transformers' own code (its gate/up weights stay views of one
    tensor: the same values); returns it. A model that is not patched is left as it is."""
    record = model.__dict__.pop("_ktile_patch", None)
    if record is None:
        return model
    for module in reversed(record.forwards):
        del module.forward
    if record.routed_module is not None:
        sys.modules.pop(record.routed_module, None)
    for mlp in record.merged:
        del mlp._ktile_gate_up
    if record.attention is not None:
        model.set_attn_implementation(record.attention)
    return model


# ---- checks ---------------------------------------------------------------------------------

def _selected(ops) -> tuple[str, ...]:
    if ops is None:
        chosen = OPS
    else:
        chosen = (ops,) if isinstance(ops, str) else tuple(ops)
        unknown = [op for op in chosen if op not in OPS]
        if unknown:
            raise InputError(f"patch: 'ops' names {unknown}, which this integration does not "
                             f"route", hint=f"choose among {list(OPS)}, or pass ops=None for all")
    for op in chosen:
        route = fw.ROUTES.get(op)
        if not callable(route) and route not in CHOICES:
            raise InputError(f"patch: ROUTES[{op!r}] is {route!r}",
                             hint=f"set it to one of {CHOICES} or a function of the op's input")
        if route == "ktile" and op in NO_KTILE_KERNEL:
            raise InputError(f"patch: ROUTES[{op!r}] is 'ktile', but ktile has no {op} kernel "
                             f"yet", hint=f"set ROUTES[{op!r}] = 'stock'")
    return chosen


def _family(model):
    import importlib
    layers = getattr(getattr(model, "model", model), "layers", None)
    name = type(layers[0]).__module__ if layers is not None and len(layers) else ""
    for family, prefix in FAMILIES.items():
        if name == f"transformers.models.{family}.modeling_{family}":
            return family, importlib.import_module(name)
    raise InputError(f"patch: 'model' is a {type(model).__name__}; this integration patches "
                     f"Qwen3 and Llama models of transformers (decoder layers in "
                     f"model.model.layers)", hint="pass a Qwen3ForCausalLM, LlamaForCausalLM or "
                                                  "their base models")


def _hooks(model, modeling, family, selected) -> list[_core.Hook]:
    mod, prefix = modeling.__name__, FAMILIES[family]
    hooks = []
    if {"rms_norm", "fused_add_rms_norm"} & set(selected):
        hooks.append(_core.Hook(f"{mod}:{prefix}RMSNorm", "forward", ("self", "hidden_states")))
    if "fused_add_rms_norm" in selected:
        hooks.append(_core.Hook(f"{mod}:{prefix}DecoderLayer", "forward", LAYER_PARAMS))
    if "silu_and_mul" in selected:
        hooks.append(_core.Hook(f"{mod}:{prefix}MLP", "forward", ("self", "x")))
    if "linear" in selected:
        hooks.append(_core.Hook("torch.nn:Linear", "forward", ("self", "input")))
    if {"rotary_embedding", "kv_cache_write"} & set(selected):
        hooks.append(_core.Hook(f"{mod}:{prefix}Attention", "forward", ATTENTION_PARAMS))
    if "rotary_embedding" in selected:
        hooks.append(_core.Hook(mod, "apply_rotary_pos_emb", ("q", "k", "cos", "sin",
                                                              "unsqueeze_dim")))
    if "kv_cache_write" in selected:
        hooks.append(_core.Hook("transformers.cache_utils:Cache", "update",
                                ("self", "key_states", "value_states", "layer_idx")))
        for attr in ("update", "lazy_initialization"):
            hooks.append(_core.Hook("transformers.cache_utils:StaticLayer", attr,
                                    ("self", "key_states", "value_states")))
    if "attention" in selected:
        hooks += [_core.Hook("transformers:AttentionInterface", "register", ("key", "value")),
                  _core.Hook("transformers.masking_utils:AttentionMaskInterface", "register",
                             ("key", "value")),
                  _core.Hook("transformers.masking_utils", "sdpa_mask",
                             ("batch_size", "q_length", "kv_length")),
                  _core.Hook(model, "set_attn_implementation", ("attn_implementation",))]
    return hooks


def _layers(model):
    return list(getattr(model, "model", model).layers)


def _structure(model, family, selected) -> list[str]:
    """What the model's modules lack for the selected ops (each a mismatch)."""
    moved = []
    need = {"self_attn": (), "mlp": ("gate_proj", "up_proj", "down_proj"),
            "input_layernorm": ("weight", "variance_epsilon"),
            "post_attention_layernorm": ("weight", "variance_epsilon")}
    for i, layer in enumerate(_layers(model)):
        for child, attrs in need.items():
            sub = getattr(layer, child, None)
            missing = [a for a in attrs if not hasattr(sub, a)] if sub is not None else [child]
            if missing:
                moved.append(f"layer {i}'s {child} has no {', '.join(missing)}")
    for name, module in _targets(model, family, set(selected)):
        if "forward" in module.__dict__:
            moved.append(f"{name} already has its own forward (another library's hook?)")
    moved += _attention_code(model, family, selected)
    if "silu_and_mul" in selected and getattr(model.config, "hidden_act", None) not in \
            ("silu", "swish"):
        moved.append(f"the MLP's activation is {model.config.hidden_act!r}, not silu")
    if "silu_and_mul" in selected and any(
            getattr(layer.mlp, p).bias is not None for layer in _layers(model)
            for p in ("gate_proj", "up_proj") if hasattr(layer, "mlp")):
        moved.append("gate_proj / up_proj have biases (silu_and_mul's merged GEMM has none)")
    return moved[:8]


def _attention_code(model, family, selected) -> list[str]:
    """The attention forward is run as its own code with routed names: it must be a plain
    function (no decorator's wrapper) that calls what the routes replace."""
    want = {"rotary_embedding": "apply_rotary_pos_emb", "kv_cache_write": "update"}
    want = [name for op, name in want.items() if op in selected]
    if not want:
        return []
    prefix = FAMILIES[family]
    layer = _layers(model)[0] if _layers(model) else None
    attn = getattr(layer, "self_attn", None)
    forward = getattr(type(attn), "forward", None)
    code = getattr(forward, "__code__", None)
    where = f"{prefix}Attention.forward"
    if code is None or forward.__closure__ is not None:
        return [f"{where} is wrapped (a decorator?); its own code cannot be run with routes"]
    missing = [name for name in want if name not in code.co_names]
    return [f"{where} no longer calls {', '.join(missing)}"] if missing else []


def _targets(model, family, selected):
    """(name, module) given an instance forward for the selected ops."""
    prefix = FAMILIES[family]
    for name, module in model.named_modules():
        kind = type(module).__name__
        if kind == f"{prefix}RMSNorm" and "rms_norm" in selected:
            yield name, module
        elif kind == f"{prefix}DecoderLayer" and "fused_add_rms_norm" in selected:
            yield name, module
        elif kind == f"{prefix}MLP" and "silu_and_mul" in selected:
            yield name, module
        elif kind == f"{prefix}Attention" and {"rotary_embedding", "kv_cache_write"} & selected:
            yield name, module
        elif isinstance(module, torch.nn.Linear) and "linear" in selected \
                and (".layers." in f".{name}" or name == "lm_head"):
            yield name, module


# ---- applying and undoing --------------------------------------------------------------------

_FORWARDS = {"RMSNorm": fw.rms_norm_forward, "DecoderLayer": fw.decoder_layer_forward,
             "MLP": fw.mlp_forward}


def _apply(model, modeling, family, record: _Patch) -> None:
    prefix = FAMILIES[family]
    forwards = dict(_FORWARDS)
    if {"rotary_embedding", "kv_cache_write"} & set(record.ops):
        forwards["Attention"] = fw.make_attention_forward(
            getattr(modeling, f"{prefix}Attention").forward, "rotary_embedding" in record.ops,
            "kv_cache_write" in record.ops)
        record.routed_module = forwards["Attention"].routed_module
    for _, module in list(_targets(model, family, set(record.ops))):
        kind = type(module).__name__.removeprefix(prefix)
        forward = fw.linear_forward if isinstance(module, torch.nn.Linear) else forwards[kind]
        if kind == "MLP":
            _merge_gate_up(module)
            record.merged.append(module)
        module.forward = types.MethodType(forward, module)
        record.forwards.append(module)
    if "attention" in record.ops:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
        AttentionInterface.register(ATTENTION, fw.attention)
        AttentionMaskInterface.register(ATTENTION, sdpa_mask)
        record.attention = model.config._attn_implementation
        model.set_attn_implementation(ATTENTION)


@torch.no_grad()
def _merge_gate_up(mlp) -> None:
    """gate_proj and up_proj's weights become views of one [gate; up] weight (no extra memory
    once the old tensors are freed), a non-persistent buffer: outside the state dict, and a
    static input of a CUDA graph (as parameters are) rather than one copied in per replay."""
    gate, up = mlp.gate_proj.weight, mlp.up_proj.weight
    merged = torch.cat([gate, up], dim=0)
    gate.data, up.data = merged[:gate.shape[0]], merged[gate.shape[0]:]
    mlp.register_buffer("_ktile_gate_up", merged, persistent=False)
