"""ktile inside SGLang (0.5.23): a `sglang.srt.plugins` entry point (`register`) that routes
SGLang's own layers -- RMSNorm (with and without the fused residual add), SiluAndMul,
GeluAndMul and RotaryEmbedding -- to `torch.ops.ktile_sglang.*` (sglang_ops.py), which decide
per call between ktile's op, its reference (the CPU, above the interpreter's size) and SGLang's
own semantics (docs/integrations.md, "SGLang").

Every hooked method is checked first (`_core.install`): on any mismatch nothing is patched and
one warning names what moved. `KTILE_SGLANG=0` leaves SGLang stock, `KTILE_SGLANG_<OP>=0` one
route, `KTILE_SGLANG_SHADOW=1` compares each routed call with SGLang's `forward_native`.
SGLang loads general plugins in each of its processes (engine, scheduler, detokenizer):
`register` is idempotent and never raises. Install before the model's layers first run: each
layer caches the method it dispatches to on its first call.

Not routed: attention, fused MoE, the linear methods (unquantised, AWQ, fp8 / int8 GEMMs) and
SGLang's quantisation helpers.
"""
from __future__ import annotations

import warnings

from . import _core

ENGINE = "sglang"
ROUTES = ("rms_norm", "fused_add_rms_norm", "silu_and_mul", "gelu_and_mul",
          "rotary_embedding")

_INSTALLED: _core.Installed | None = None
_REGISTERED = False


def register() -> None:
    """The plugin entry point: install once per process; a failure warns, SGLang runs stock."""
    global _REGISTERED
    if _REGISTERED:
        return
    _REGISTERED = True
    try:
        install()
    except Exception as err:                     # a plugin never takes the engine down
        warnings.warn(f"ktile: the sglang integration failed to install and is off, the "
                      f"engine stays stock: {type(err).__name__}: {err}", RuntimeWarning)


def install() -> _core.Installed | None:
    """Check and apply every enabled route's hooks (all or nothing); None when off."""
    global _INSTALLED
    if _INSTALLED is not None:
        return _INSTALLED
    if not _core.enabled(ENGINE):
        return None
    from . import sglang_hooks
    hooks = sglang_hooks.hooks([op for op in ROUTES if _core.enabled(ENGINE, op)])
    _INSTALLED = _core.install(ENGINE, hooks)
    return _INSTALLED


def uninstall() -> None:
    """Undo every patch (the next `install` patches again)."""
    global _INSTALLED, _REGISTERED
    if _INSTALLED is not None:
        _INSTALLED.undo()
    _INSTALLED, _REGISTERED = None, False


def counters() -> dict[str, dict[str, int]]:
    """"sglang.<op>" -> {eager, captured, fallback, reference, shadow_mismatch}."""
    return {route: c for route, c in _core.counters().items()
            if route.startswith(f"{ENGINE}.")}


def reset_counters() -> None:
    _core.reset()
