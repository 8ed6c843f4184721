"""What `ktile check` checks: the items of an op of `ktile.ops` or of a user's kernel file.

An item is one kernel at one set of constants, for one target and (for an op) one element
type, with the reference check that covers it where there is one. An op's items are the routes
of its routing table for the target (and its `also` kernels, launched by every call); a user's
kernel gives one item per set of constants its file's KERNELS list names (else its defaults).

The references: an op's `Op.check` with the item's route pinned, at the route's sample shape or
the given one; a kernel file's `run_case` over its CASES (the convention of examples/common.py),
which runs every kernel of the file. Where neither exists the item is checked by trace, gates
and build only, and the report says so.
"""
from __future__ import annotations

import contextlib
import difflib
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import targets
from ..errors import InputError

ALL = "all"


@dataclass(frozen=True)
class Execution:
    """Where the reference check runs: the CPU `interpreter`, the `gpu`, or wave `emulation`
    of an AMD target; always for one target, whose routes and constants the run takes."""
    where: str
    target: str

    @property
    def device(self) -> str:
        return "cuda" if self.where == "gpu" else "cpu"

    @property
    def backend(self) -> str:
        """The examples harness's name for it (`run_case(..., backend=...)`)."""
        return {"interpreter": "interpret", "gpu": "auto", "emulation": "emulate"}[self.where]

    @contextlib.contextmanager
    def active(self):
        """Within the block, calls with no target (the ops' CPU calls) trace for this one, and
        under emulation the ops' kernels run emulated."""
        from ..config import TARGET
        from ..ops import _library as lib
        saved = os.environ.get(TARGET.name)
        os.environ[TARGET.name] = self.target
        try:
            with lib.emulating(self.target) if self.where == "emulation" else _nothing():
                yield
        finally:
            if saved is None:
                os.environ.pop(TARGET.name, None)
            else:
                os.environ[TARGET.name] = saved


@contextlib.contextmanager
def _nothing():
    yield


@dataclass(frozen=True)
class Reference:
    """A reference check: `run(execution)` gives (max error, tolerance) for each case it ran."""
    what: str
    run: Callable[[Execution], list[tuple[float, float]]]


@dataclass
class Item:
    name: str                       # op/route kernel/dtype/constants, or file:kernel/constants
    target: str
    kernel: Any                     # a ktile Kernel
    constants: dict
    dtype: str | None = None
    reference: Reference | None = None
    no_reference: str = ""          # why there is no reference check, where there is none
    notes: list[str] = field(default_factory=list)


def constants_text(constants: dict) -> str:
    return "-".join(f"{k}{v}" for k, v in sorted(constants.items())) or "defaults"


# ---- the subject: an op, or a kernel in a file ------------------------------------------------

def target_names(target: str) -> list[str]:
    """`--target`'s targets: one name, or every target for `all`."""
    if target == ALL:
        return list(targets.NAMES)
    if target in targets.NAMES:
        return [target]
    close = difflib.get_close_matches(target.strip().lower(), targets.NAMES, n=1)
    guess = f" (did you mean {close[0]}?)" if close else ""
    raise InputError(f"--target {target!r} names no target ktile has{guess}",
                     hint=f"pass one of {', '.join(targets.NAMES)}, or `all` for every one")


def parse_shape(text: str | None) -> tuple[int, int] | None:
    """`--shape ROWSxCOLS` (e.g. 4x4096)."""
    if text is None:
        return None
    rows, sep, cols = text.lower().partition("x")
    if sep and rows.strip().isdigit() and cols.strip().isdigit() and int(rows) and int(cols):
        return int(rows), int(cols)
    raise InputError(f"--shape {text!r} is not ROWSxCOLS with both at least 1",
                     hint="pass e.g. --shape 4x4096 (rows of the op's input x columns)")


def is_file_spec(subject: str) -> bool:
    """`path/to/file.py:kernel_name` rather than an op name."""
    path, sep, _ = subject.rpartition(":")
    return bool(sep) and (path.endswith(".py") or os.sep in path)


def find_op(name: str):
    """The op of ktile.ops named `name` (its op name or one of its functions' names)."""
    from ..ops import all_ops
    ops = all_ops()
    for op in ops:
        if name == op.name or name in op.functions:
            return op
    names = sorted({op.name for op in ops})
    close = difflib.get_close_matches(name, names, n=1)
    guess = f" (did you mean {close[0]}?)" if close else ""
    raise InputError(f"{name!r} is neither an op of ktile.ops{guess} nor a kernel file "
                     f"(path/to/file.py:kernel_name)",
                     hint=f"name one of the ops: {', '.join(names)}; or a kernel as "
                          f"path/to/file.py:kernel_name")


# ---- an op's items ---------------------------------------------------------------------------

def op_items(op, target: str, *, sweep: bool, shape: tuple[int, int] | None) -> list[Item]:
    """The op's routes for `target` (the one its table chooses at `shape`, where given) and its
    `also` kernels; in its first dtype, or every dtype with `sweep`."""
    routed = [op.table.choose(*shape, target)] if shape else \
        [r for r in op.table.routes if _for_target(r, target)]
    also = [r for r in op.also if _for_target(r, target)]
    dtypes = op.dtypes if sweep else op.dtypes[:1]
    items: dict[str, Item] = {}
    for route, is_also in [*((r, False) for r in routed), *((r, True) for r in also)]:
        for dtype in dtypes:
            name = f"{op.name}/{route.kernel}/{dtype}/{constants_text(route.constants)}"
            if name in items:      # a table may list one kernel at one set of constants twice
                continue
            item = Item(name, target, op.kernel(route, dtype), dict(route.constants), dtype)
            if is_also:
                item.no_reference = "launched by every call of the op: its routes' checks run it"
            else:
                _attach_op_reference(item, op, route, dtype, shape or route.sample)
            items[name] = item
    return list(items.values())


def _for_target(route, target: str) -> bool:
    return route.targets is None or target in route.targets


def _attach_op_reference(item: Item, op, route, dtype: str, shape: tuple[int, int]) -> None:
    if op.case is None:
        item.no_reference = f"{op.name} declares no reference case (Op.case)"
        return
    from ..ops import _library as lib
    rows, cols = shape

    def run(execution: Execution) -> list[tuple[float, float]]:
        with lib.pinned(op.table, route), execution.active():
            return [op.check(rows, cols, dtype, execution.device)]
    item.reference = Reference(f"{op.name}'s reference at {rows}x{cols}", run)


# ---- a user's kernel file ---------------------------------------------------------------------

def file_items(spec: str, target: str) -> list[Item]:
    """The kernel `name` of `path` (spec `path:name`) at each set of constants its file's
    KERNELS names; the file's run_case over CASES as the reference of the first."""
    path, _, name = spec.rpartition(":")
    module = load_kernel_file(path)
    kernel = _kernel_named(module, name, path)
    listed = [c for k, c in getattr(module, "KERNELS", []) if k is kernel] or [{}]
    items = [Item(f"{Path(path).name}:{name}/{constants_text(c)}", target, kernel, dict(c))
             for c in listed]
    cases = getattr(module, "CASES", None)
    if callable(getattr(module, "run_case", None)) and cases:
        items[0].reference = _file_reference(module, list(cases))
        for item in items[1:]:
            item.no_reference = "the file's run_case is checked once (first item)"
    else:
        for item in items:
            item.no_reference = ("no reference: the file defines no run_case and CASES, so the "
                                 "kernel is checked by trace, gates and build only")
    return items


def _file_reference(module, cases: list) -> Reference:
    def run(execution: Execution) -> list[tuple[float, float]]:
        with execution.active():
            return [module.run_case(case, backend=execution.backend, target=execution.target,
                                    device=execution.device) for case in cases]
    return Reference(f"the file's run_case over its {len(cases)} CASES (every kernel of the "
                     f"file)", run)


def load_kernel_file(path: str):
    """Import the Python file at `path` as a module, with its folder on sys.path (as when it
    runs as a script: examples import their `common` so)."""
    file = Path(path)
    if file.suffix != ".py" or not file.is_file():
        raise InputError(f"no Python file at {path!r}",
                         hint="name a kernel as path/to/file.py:kernel_name, the path relative "
                              "to this folder or absolute")
    folder = str(file.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(f"ktile_check_{file.stem}", file)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:    # the user's file: anything may fail to import
        raise InputError(f"importing {path} failed: {type(error).__name__}: {error}",
                         hint=f"run `python {path}` and fix what it reports") from error
    return module


def _kernel_named(module, name: str, path: str):
    from ..lang.kernel import Kernel
    kernels = sorted(n for n, v in vars(module).items() if isinstance(v, Kernel))
    found = getattr(module, name, None)
    if isinstance(found, Kernel):
        return found
    what = "is not a ktile kernel" if found is not None else "is not defined"
    listed = ", ".join(kernels) or "none"
    raise InputError(f"{name!r} {what} in {path} (its kernels: {listed})",
                     hint=f"name a function decorated with @ktile.kernel: {path}:"
                          f"{kernels[0] if kernels else 'kernel_name'}")
