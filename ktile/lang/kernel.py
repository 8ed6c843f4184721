"""`@kernel` and `@func`: the kernel object, its trace, and its call.

    k.trace(**constants)      the checked kt module (`.dump()` gives its text)
    k.source(target=...)      the C++ it translates to
    k.build(target=...)       its code object, through the build cache and resource gate
    k(*tensors, **constants)  runs it: on the GPU holding the tensors, else on the interpreter

Traces are cached by source, constants and target.
"""
from __future__ import annotations

import hashlib
import inspect
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import config
from ..errors import KernelError, KernelWarning, SourceLoc
from .types import ConstexprSpec, TensorSpec

DIM_NAMES = ("batch", "depth", "rows", "cols")


@dataclass(frozen=True)
class Param:
    name: str
    spec: TensorSpec


@dataclass
class KernelTrace:
    """One kernel traced and checked for one target and one set of constants."""
    name: str
    module: Any                    # xdsl ModuleOp, after the pass pipeline
    target: Any                    # ktile.targets.Target
    params: tuple[Param, ...]
    constants: dict[str, Any]
    warps: int
    coindexed: list[tuple[int, ...]]
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    _cpp: dict[str, str] = field(default_factory=dict)

    def dump(self, generic: bool = False, locations: bool = False) -> str:
        from ..ir.printing import module_text
        return module_text(self.module, generic=generic, locations=locations)

    def source(self) -> str:
        if "cpp" not in self._cpp:
            from ..codegen import translate
            start = time.perf_counter()
            self._cpp["cpp"] = translate(self.module, self.target)
            self.seconds["translate"] = time.perf_counter() - start
        return self._cpp["cpp"]

    @property
    def written_params(self) -> list[int]:
        """Indices of the tensor parameters the kernel stores to."""
        from ..ir.ops import ScatterOp, StoreOp
        fn = self.module.body.block.ops.last
        args = list(fn.body.block.args)
        out = []
        for op in fn.walk():
            if isinstance(op, (StoreOp, ScatterOp)):
                idx = args.index(op.operands[0])
                if idx not in out:
                    out.append(idx)
        return out


class Kernel:
    def __init__(self, fn: Callable, grid: Callable | None, warps: int, arch: str | None,
                 requires: Sequence[tuple[Callable, str]] = ()):
        self.fn = fn
        self.name = fn.__name__
        self.grid = grid
        self.warps = warps
        self.arch = arch
        self.requires = tuple(requires)
        self.def_loc = SourceLoc(inspect.getsourcefile(fn) or "<unknown>",
                                 fn.__code__.co_firstlineno)
        self.params, self.constexprs = _signature(fn, self.def_loc)
        self._check_decorator()
        self._rewritten: Callable | None = None
        self._traces: dict[tuple, KernelTrace] = {}
        self._source_hash = hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()[:16]

    def __repr__(self) -> str:
        return f"<ktile kernel {self.name} at {self.def_loc}>"

    def _check_decorator(self) -> None:
        if self.grid is None:
            raise KernelError("a kernel needs a grid", loc=self.def_loc, kernel=self.name,
                              hint="@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), ...))")
        if not callable(self.grid) and not isinstance(self.grid, tuple):
            raise KernelError(f"grid must be a function of the parameters or a tuple, got "
                              f"{type(self.grid).__name__}", loc=self.def_loc, kernel=self.name)
        if not isinstance(self.warps, int) or isinstance(self.warps, bool) or self.warps <= 0:
            raise KernelError(f"warps must be a positive int, got {self.warps!r}",
                              loc=self.def_loc, kernel=self.name)
        for item in self.requires:
            if not (isinstance(item, tuple) and len(item) == 2 and callable(item[0])
                    and isinstance(item[1], str)):
                raise KernelError(f"requires takes (predicate, message) pairs, got {item!r}",
                                  loc=self.def_loc, kernel=self.name,
                                  hint='requires=[(lambda p: p.WIDTH >= p.x.cols, "WIDTH must '
                                       'be at least the row length")]')

    # ---- constants and targets -----------------------------------------------------------

    def resolve_constants(self, given: dict[str, Any]) -> dict[str, Any]:
        for name in given:
            if name not in self.constexprs:
                known = ", ".join(self.constexprs) or "none"
                raise KernelError(f"unknown constant {name!r}", loc=self.def_loc, kernel=self.name,
                                  hint=f"this kernel's constants are: {known}")
        values = {}
        for name, (spec, default) in self.constexprs.items():
            value = given.get(name, default)
            if value is inspect.Parameter.empty:
                raise KernelError(f"constant {name!r} has no default and was not given",
                                  loc=self.def_loc, kernel=self.name,
                                  hint=f"pass {name}=... at the call")
            if spec.kind in (int, float, bool) and not isinstance(value, spec.kind):
                if not (spec.kind is float and isinstance(value, int)):
                    raise KernelError(f"constant {name!r} must be {spec.kind.__name__}, got "
                                      f"{value!r}", loc=self.def_loc, kernel=self.name)
            values[name] = value
        return values

    def target_name(self, target: str | None) -> str:
        return target or self.arch or config.default_target()

    # ---- tracing -------------------------------------------------------------------------

    def trace(self, target: str | None = None, **constants) -> KernelTrace:
        return self.trace_copies(target, True, constants)

    def trace_copies(self, target: str | None, tensor_copies: bool,
                     constants: dict[str, Any]) -> KernelTrace:
        """`trace`, choosing whether group loads may be tensor (TMA) copies where the target
        has them: a GPU call whose tensors cannot have tensor maps traces without."""
        from .. import targets
        tgt = targets.get(self.target_name(target))
        values = self.resolve_constants(constants)
        key = (self._source_hash, tgt.name, tuple(sorted((k, repr(v)) for k, v in values.items())),
               tensor_copies)
        cached = self._traces.get(key)
        if cached is None:
            from .trace_kernel import trace_kernel
            cached = trace_kernel(self, tgt, values, tensor_copies=tensor_copies)
            for message in cached.warnings:
                warnings.warn(message, KernelWarning, stacklevel=3)
            self._traces[key] = cached
        return cached

    def source(self, target: str | None = None, **constants) -> str:
        return self.trace(target, **constants).source()

    def build(self, target: str | None = None, *, limits=None, **constants):
        """The code object for `target` (default: as `trace`), through the build cache and
        the resource gate: a `ktile.runtime.build.Build` (`.code_path`, `.report()`).
        `limits`: a `ktile.runtime.build.BuildLimits(max_vgprs=..., min_occupancy=...)` the
        build must also meet (AMD targets)."""
        from ..runtime.build import BuildLimits, build_trace
        return build_trace(self.trace(target, **constants), limits=limits or BuildLimits())

    def rewritten(self) -> Callable:
        if self._rewritten is None:
            from .control import HELPERS
            from .rewrite import rewrite_function
            self._rewritten = rewrite_function(self.fn, HELPERS)
        return self._rewritten

    # ---- calling -------------------------------------------------------------------------

    def __call__(self, *args, target: str | None = None, **constants):
        """Run on the GPU holding the tensors (torch CUDA tensors), else on the interpreter."""
        return (_LAUNCH or _load_launch())(self, args, constants, target)

    def interpret(self, *args, target: str | None = None, **constants):
        """Run on the CPU interpreter, whatever hardware is present."""
        from ..runtime.launch import launch
        return launch(self, args, constants, target, backend="interpret")


_LAUNCH: Callable | None = None   # ktile.runtime.launch.launch, bound on the first call


def _load_launch() -> Callable:
    """Bind the launch function once: a call's host overhead is part of its cost."""
    global _LAUNCH
    from ..runtime.launch import launch
    _LAUNCH = launch
    return launch


def _signature(fn: Callable, loc: SourceLoc):
    params: list[Param] = []
    constexprs: dict[str, tuple[ConstexprSpec, Any]] = {}
    try:  # eval_str: annotations stay types under `from __future__ import annotations`
        signature = inspect.signature(fn, eval_str=True)
    except NameError as exc:
        raise KernelError(f"an annotation of kernel '{fn.__name__}' names something undefined "
                          f"({exc})", loc=loc, kernel=fn.__name__) from exc
    for p in signature.parameters.values():
        ann = p.annotation
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            if not isinstance(ann, TensorSpec):
                shown = "no annotation" if ann is inspect.Parameter.empty else repr(ann)
                raise KernelError(
                    f"positional parameter '{p.name}' must be a tensor (hk.Tensor[dtype]), got "
                    f"{shown}", loc=loc, kernel=fn.__name__,
                    hint=f"annotate it `{p.name}: hk.Tensor[hk.bf16]`, or make it a keyword-only "
                         f"constant after `*`: `*, {p.name}: hk.Constexpr[int] = ...`")
            params.append(Param(p.name, ann))
        elif p.kind == p.KEYWORD_ONLY:
            if not isinstance(ann, ConstexprSpec):
                raise KernelError(f"keyword-only parameter '{p.name}' must be a constant "
                                  f"(hk.Constexpr[T])", loc=loc, kernel=fn.__name__,
                                  hint=f"annotate it `{p.name}: hk.Constexpr[int] = ...`")
            constexprs[p.name] = (ann, p.default)
        else:
            raise KernelError(f"kernels take no *args or **kwargs ('{p.name}')", loc=loc,
                              kernel=fn.__name__)
    if not params:
        raise KernelError("a kernel needs at least one tensor parameter", loc=loc,
                          kernel=fn.__name__)
    return tuple(params), constexprs


def kernel(fn: Callable | None = None, *, grid=None, warps: int = 1, arch: str | None = None,
           requires: Sequence[tuple[Callable, str]] = ()):
    """Decorate a tile kernel: `@hk.kernel(grid=lambda p: (...), warps=4)`. `requires`: the
    call's preconditions, (predicate, message) pairs; a predicate reads `p` as the grid
    function does (`p.x.cols`, `p.WIDTH`) and a call that fails one is refused before it runs,
    on every backend."""
    def wrap(f: Callable) -> Kernel:
        return Kernel(f, grid, warps, arch, requires)
    if fn is not None:
        return wrap(fn)
    return wrap


class DeviceFunction:
    """`@hk.func`: a helper called from kernels, inlined where it is called."""

    def __init__(self, fn: Callable):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self._rewritten: Callable | None = None

    def __call__(self, *args, **kwargs):
        from . import tracer
        if tracer.active() is None:
            raise KernelError(f"@hk.func '{self.fn.__name__}' can only be called from a kernel",
                              loc=tracer.user_frame_loc())
        if self._rewritten is None:
            from .control import HELPERS
            from .rewrite import rewrite_function
            self._rewritten = rewrite_function(self.fn, HELPERS)
        return self._rewritten(*args, **kwargs)


def func(fn: Callable) -> DeviceFunction:
    return DeviceFunction(fn)
