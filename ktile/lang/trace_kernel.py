"""Tracing one kernel: the grid function and the kernel body into a kt module, then the passes."""
from __future__ import annotations

import sysconfig
import time
import traceback
from contextlib import contextmanager
from numbers import Integral
from typing import Any

from xdsl.dialects.builtin import BoolAttr

from ..errors import InternalError, KernelError, KtileError, SourceLoc
from ..ir import emit
from ..ir import types as irt
from . import tracer
from .memory import Global
from .values import Scalar, as_index, describe


class _Extents:
    """`p.o` in a grid function: the extents of tensor parameter `o`."""

    def __init__(self, g: Global):
        self._g = g

    def __getattr__(self, name: str) -> Scalar:
        if name in ("batch", "depth", "rows", "cols"):
            return getattr(self._g, name)
        raise tracer.error(f"tensor '{self._g.name}' has extents batch, depth, rows and cols, "
                           f"not {name!r}")


class _GridParams:
    """`p` in a grid function: tensors by name (their extents) and constants by name."""

    def __init__(self, globals_: dict[str, Global], constants: dict[str, Any],
                 scalars: tuple[str, ...] = ()):
        self._globals, self._constants, self._scalars = globals_, constants, scalars

    def __getattr__(self, name: str):
        if name in self._globals:
            return _Extents(self._globals[name])
        if name in self._constants:
            return self._constants[name]
        if name in self._scalars:
            # the grid is computed once per tensor signature (the GPU's fast path launches the
            # same blocks at every call), so it cannot depend on a value each call passes
            raise tracer.error(f"the grid reads runtime scalar {name!r}: the grid is computed "
                               f"from the tensors' shapes and the constants only, once per "
                               f"tensor signature",
                               hint=f"make {name!r} a keyword-only constant (*, {name}: "
                                    f"hk.Constexpr[int]) if the block count depends on it")
        known = ", ".join([*self._globals, *self._constants])
        raise tracer.error(f"the grid refers to {name!r}, which is neither a tensor parameter nor "
                           f"a constant of the kernel", hint=f"known names: {known}")


def trace_kernel(kernel, target, constants: dict[str, Any], tensor_copies: bool = True,
                 warps: int | None = None):
    """`warps`: this trace's warp count (`Kernel.trace_copies` resolves it per target and
    constants); None: the decorator's, when that is an int."""
    from ..passes import run_pipeline
    from .kernel import KernelTrace

    start = time.perf_counter()
    holder: dict[str, tracer.Trace] = {}

    def loc_of():
        loc = holder["trace"].loc()
        return (loc.file, loc.line, loc.col) if loc else None

    b = emit.Builder(loc_of)
    warps = kernel.warps if warps is None else warps
    trace = tracer.Trace(b, kernel.name, target, warps, constants)
    trace.tensor_copies = tensor_copies   # a pipeline's form depends on it (pipeline_forms.py)
    trace.loc_override = kernel.def_loc
    holder["trace"] = trace
    global_types = [irt.global_(p.spec.dtype) for p in kernel.params]
    arg_types = global_types + [irt.scalar(s.dtype) for s in kernel.scalars]
    b.set_module_attr("kt.target", emit.string_attr(target.name))
    with tracer.tracing(trace), _python_errors_as_kernel_errors(kernel):
        _trace_grid(kernel, b, trace, global_types, constants)
        body = kernel.rewritten()
        fn = b.func(kernel.name, arg_types, [], {"kt.kernel": emit.string_attr(kernel.name),
                                                 "kt.warps": emit.int_attr(warps)})
        block = fn.body.block
        with b.at_end_of(block):
            positional, keywords = _body_arguments(kernel, block.args, constants)
            trace.loc_override = None
            result = body(*positional, **keywords)
            trace.loc_override = kernel.def_loc
            if result is not None:
                raise trace.error(f"a kernel returns nothing; it returned {describe(result)}",
                                  hint="store results into an output tensor: o[idx] = tile")
            b.ret()
    traced = time.perf_counter()
    coindexed = sorted({tuple(sorted(v)) for v in trace.coindexed.values() if len(v) > 1})
    result = KernelTrace(kernel.name, b.module, target, kernel.params, constants, warps,
                         coindexed)
    if not tensor_copies:
        b.module.attributes["kt.tensor_copies"] = BoolAttr.from_bool(False)
    result.warnings = run_pipeline(b.module, target)
    result.seconds = {"trace": traced - start, "passes": time.perf_counter() - traced}
    return result


def _body_arguments(kernel, block_args, constants: dict[str, Any]) -> tuple[list, dict]:
    """The kernel function's arguments while it is traced: each tensor a Global, each runtime
    scalar the Scalar of its function argument (after the globals), positional ones in
    declaration order; the constants and keyword-only scalars by keyword."""
    n = len(kernel.params)
    values: dict[str, Any] = {p.name: Global(a, p.name, i)
                              for i, (a, p) in enumerate(zip(block_args, kernel.params))}
    values.update({s.name: Scalar(a) for a, s in zip(block_args[n:], kernel.scalars)})
    keywords = {**constants, **{s.name: values[s.name] for s in kernel.scalars
                                if s.keyword_only}}
    return [values[name] for name in kernel.positional], keywords


@contextmanager
def _python_errors_as_kernel_errors(kernel):
    """A Python error raised by the author's code while tracing (a typo'd attribute, a bad
    index, a helper that opens a file, recursion without end) becomes a KernelError at their
    line; one raised inside ktile is our bug. An error raised inside a library (numpy, xDSL,
    the standard library) belongs to whoever called the library."""
    try:
        yield
    except KernelError as exc:
        if exc.loc is not None and exc.kernel is not None:
            raise
        user = _user_frames(exc)
        loc = SourceLoc(user[-1].filename, user[-1].lineno) if user else kernel.def_loc
        raise exc.with_context(kernel=kernel.name, loc=loc) from exc.__cause__
    except KtileError:
        raise
    except Exception as exc:  # noqa: BLE001 - every Python error is sorted: the user's or ours
        raise _sorted_error(exc, kernel) from exc


# Python errors that a ktile builtin raises on purpose for a bad argument (a call with the
# wrong number of arguments, a name the kernel never defined): the author's even from inside
_AUTHOR_ERRORS_FROM_KTILE = (TypeError, NameError, ZeroDivisionError, RecursionError)


def _sorted_error(exc: Exception, kernel) -> KtileError:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not _is_library(f.filename)]
    caller = frames[-1] if frames else None
    if caller is not None and _is_ktile(caller.filename) \
            and not isinstance(exc, _AUTHOR_ERRORS_FROM_KTILE):
        return InternalError(f"{type(exc).__name__}: {exc} (while tracing kernel "
                             f"'{kernel.name}')")
    user = [f for f in frames if not _is_ktile(f.filename)]
    loc = SourceLoc(user[-1].filename, user[-1].lineno) if user else kernel.def_loc
    if isinstance(exc, RecursionError):
        return KernelError("the kernel's Python code recurses without end while it is traced",
                           loc=loc, kernel=kernel.name,
                           hint="a helper (or @hk.func) that calls itself must stop on a Python "
                                "value (a depth argument), since it is inlined while tracing")
    return KernelError(f"{type(exc).__name__}: {exc}", loc=loc, kernel=kernel.name,
                       hint="this line runs as Python while the kernel is traced; only ktile's "
                            "builtins and Python values can be used here")


def _is_ktile(filename: str) -> bool:
    return filename.startswith(tracer._PACKAGE_DIR) or filename.startswith("<")


_LIBRARY_DIRS = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib",
                                                          "platlib")})


def _is_library(filename: str) -> bool:
    """Installed code (the standard library, numpy, xDSL): neither the author's nor ktile's."""
    return filename.startswith(_LIBRARY_DIRS) and not filename.startswith(tracer._PACKAGE_DIR)


def _user_frames(exc: BaseException) -> list:
    return [f for f in traceback.extract_tb(exc.__traceback__)
            if not _is_ktile(f.filename) and not _is_library(f.filename)]


GRID_FIX = "grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch)"


def _check_grid_counts(trace, grid) -> None:
    """The grid gives 1 to 3 block counts (x, y, z), each an integer: a Python int, or an
    int the call's extents compute."""
    if not isinstance(grid, (tuple, list)):
        raise trace.error(f"the grid must give 1 to 3 block counts, got {describe(grid)}",
                          hint=f"return a tuple of block counts: {GRID_FIX}")
    if not 1 <= len(grid) <= 3:
        raise trace.error(f"the grid must give 1 to 3 block counts (x, y, z), got "
                          f"{len(grid)} counts", hint="fold the extra dimensions into z, e.g. "
                                                      "p.o.batch * p.o.depth, and split the "
                                                      "block index in the kernel")
    for axis, count in enumerate(grid):
        if isinstance(count, Integral) or (isinstance(count, Scalar) and not count.is_float):
            continue
        raise trace.error(f"grid dimension {axis} must be an integer block count, got "
                          f"{describe(count)}",
                          hint="count blocks in integers: hk.cdiv(p.o.cols, 64) rounds up, "
                               "where `/` gives a float")


def _trace_grid(kernel, b, trace, arg_types, constants) -> None:
    fn = b.func(f"{kernel.name}__grid", arg_types, [emit.index] * 3,
                {"kt.grid": emit.string_attr(kernel.name)})
    with b.at_end_of(fn.body.block):
        globals_ = {p.name: Global(a, p.name, i)
                    for i, (a, p) in enumerate(zip(fn.body.block.args, kernel.params))}
        scalars = tuple(s.name for s in kernel.scalars)
        grid = (kernel.grid(_GridParams(globals_, constants, scalars)) if callable(kernel.grid)
                else kernel.grid)
        if isinstance(grid, (int, Scalar)):
            grid = (grid,)
        _check_grid_counts(trace, grid)
        dims = [as_index(g, f"grid dimension {i}") for i, g in enumerate(grid)]
        while len(dims) < 3:
            dims.append(as_index(1, "grid"))
        b.ret([d.v for d in dims])
