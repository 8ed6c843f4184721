"""ktile inside vLLM (0.32): a `vllm.general_plugins` entry point (`register`) that routes
RMSNorm (with and without residual), SiLU-and-mul, rotary embedding, the unquantised linear
method, the KV-cache write, the unquantised fused MoE (SiLU, no bias) and AWQ's linear methods
(4-bit, group 128, zero points) to `torch.ops.ktile_vllm.*` (vllm_ops.py), which decide per
call between ktile's op, its reference (the CPU, above the interpreter's size) and the engine's
own path (docs/integrations.md, "vLLM").

Every hooked method is checked first (`_core.install`): on any mismatch nothing is patched and
one warning names what moved. `KTILE_VLLM=0` leaves vLLM stock, `KTILE_VLLM_<OP>=0` one route;
vLLM loads plugins in every process (front end, engine core, workers), possibly several times:
`register` is idempotent and never raises.

Not routed (ktile.ops has no such op yet): AWQ at another group size or bit width, other
quantised linear methods, quantised or biased fused MoE and expert parallelism (they take
vLLM's path, counted as fallbacks), attention.
"""
from __future__ import annotations

import warnings

from . import _core

ENGINE = "vllm"
ROUTES = ("rms_norm", "fused_add_rms_norm", "silu_and_mul", "rotary_embedding", "linear",
          "kv_cache_write", "fused_moe", "awq_gemm")
KTILE_DTYPES = ("torch.bfloat16", "torch.float16", "torch.float32")

_INSTALLED: _core.Installed | None = None
_REGISTERED = False


def register() -> None:
    """The plugin entry point: install once per process; a failure warns, vLLM runs stock."""
    global _REGISTERED
    if _REGISTERED:
        return
    _REGISTERED = True
    try:
        install()
    except Exception as err:                     # a plugin never takes the engine down
        warnings.warn(f"ktile: the vllm integration failed to install and is off, the engine "
                      f"stays stock: {type(err).__name__}: {err}", RuntimeWarning)


def install() -> _core.Installed | None:
    """Check and apply every enabled route's hooks (all or nothing); None when off."""
    global _INSTALLED
    if _INSTALLED is not None:
        return _INSTALLED
    if not _core.enabled(ENGINE):
        return None
    from . import vllm_hooks
    hooks = vllm_hooks.hooks([op for op in ROUTES if _core.enabled(ENGINE, op)])
    _INSTALLED = _core.install(ENGINE, hooks)
    if _INSTALLED is not None:
        vllm_hooks.register_engine_paths()
    return _INSTALLED


def uninstall() -> None:
    """Undo every patch (the next `install` patches again)."""
    global _INSTALLED, _REGISTERED
    if _INSTALLED is not None:
        _INSTALLED.undo()
    _INSTALLED, _REGISTERED = None, False


def counters(worker=None) -> dict[str, dict[str, int]]:
    """This process's counters; as `llm.collective_rpc(counters)`, each worker's."""
    return _core.counters()


def reset_counters(worker=None) -> None:
    _core.reset()
