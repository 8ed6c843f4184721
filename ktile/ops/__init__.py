"""The kernel library: one folder per op, each with its kernels, reference semantics,
configuration space and public function (docs/ops.md).

`ktile.ops.rms_norm(x, weight, eps)` and the other op functions are looked up lazily: the op
modules (and torch) are imported on first use, so `import ktile` stays fast.
"""
from __future__ import annotations

_FUNCTIONS: dict[str, object] | None = None   # function name → function, once looked up


def _functions() -> dict[str, object]:
    global _FUNCTIONS
    if _FUNCTIONS is None:
        from ._library import all_ops
        _FUNCTIONS = {name: fn for op in all_ops() for name, fn in op.functions.items()}
    return _FUNCTIONS


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(name)
    if name in ("all_ops", "all_kernels", "op_modules"):
        from . import _library
        return getattr(_library, name)
    try:
        return _functions()[name]
    except KeyError:
        raise AttributeError(f"module 'ktile.ops' has no op function {name!r}; the ops are: "
                             f"{', '.join(sorted(_functions()))}") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_functions()) | {"all_ops", "all_kernels", "op_modules"})
