"""The kernel library: one folder per op, each with its kernels, reference semantics,
configuration space and public function (docs/ops.md).

`ktile.ops.rms_norm(x, weight, eps)` and the other op functions are looked up lazily: the op
modules (and torch) are imported on first use, so `import ktile` stays fast.

Invariant: `ktile.ops.<name>` is the op function whenever an op exports `<name>`, even where an
op folder has the same name (softmax, embedding, dropout). Python binds a subpackage to its
parent's attribute when the subpackage is first imported; this module's class refuses those
bindings for op folders, so the name resolves through `__getattr__`: the function first, else
the folder. `from ktile.ops.softmax.reference import ...` and `from ktile.ops.softmax import
config` still reach the folder (they go through sys.modules, not the attribute).
"""
from __future__ import annotations

import sys
import types

_FUNCTIONS: dict[str, object] | None = None   # function name → function, once looked up
_FRAMEWORK = ("all_ops", "all_kernels", "op_modules", "warmup", "routing")


def _functions() -> dict[str, object]:
    global _FUNCTIONS
    if _FUNCTIONS is None:
        from ._library import all_ops
        _FUNCTIONS = {name: fn for op in all_ops() for name, fn in op.functions.items()}
    return _FUNCTIONS


def _op_folder(name: str):
    """The op folder `ktile.ops.<name>` (a package), imported; None when there is none."""
    import importlib
    import importlib.util
    if importlib.util.find_spec(f"{__name__}.{name}") is None:
        return None
    return importlib.import_module(f"{__name__}.{name}")


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(name)
    if name in _FRAMEWORK:
        from . import _library
        return getattr(_library, name)
    fn = _functions().get(name)
    if fn is not None:
        # cached as a plain module global, so torch.compile sees a function attribute
        globals()[name] = fn
        return fn
    folder = _op_folder(name)
    if folder is not None:
        return folder
    raise AttributeError(f"module 'ktile.ops' has no op function {name!r}; the ops are: "
                         f"{', '.join(sorted(_functions()))}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_functions()) | set(_FRAMEWORK))


class _OpsModule(types.ModuleType):
    """ktile.ops: an op folder's import does not bind the folder over the op function's name."""

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.{name}" \
                and not name.startswith("_"):
            return   # an op folder: reached through __getattr__ (function first) instead
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _OpsModule
