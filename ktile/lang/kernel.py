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
from ..errors import InputError, InternalError, KernelError, KernelWarning, SourceLoc
from .sources import source_lines
from .hk_options import apply_kernel_options, build_limits, constexpr_spec as hk_constexpr_spec
from .types import (CONSTEXPR_KINDS, SCALAR_DTYPES, Constexpr, ConstexprSpec, ScalarSpec,
                    TensorSpec)

DIM_NAMES = ("batch", "depth", "rows", "cols")


@dataclass(frozen=True)
class Param:
    name: str
    spec: TensorSpec


@dataclass(frozen=True)
class ScalarParam:
    """A runtime scalar parameter: its value is given at each call (by position among the
    tensors, or by keyword) and reaches the kernel as an f32 or i32 argument after the globals,
    so a new value is no new trace or build. `default`: inspect.Parameter.empty if none."""
    name: str
    dtype: Any                     # ktile.dtypes.fp32 or i32
    default: Any
    keyword_only: bool


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
    in_place: dict[int, int] = field(default_factory=dict)   # output index → input index
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
    def __init__(self, fn: Callable, grid: Callable | None, warps: int | str | dict,
                 arch: str | None,
                 requires: Sequence[tuple[Callable, str]] = (),
                 in_place: dict[str, str] | None = None):
        self.fn = fn
        self.name = fn.__name__
        self.grid = grid
        self.warps = warps
        self.arch = arch
        self.requires = _requirements(requires, self.name, fn)
        self.def_loc = SourceLoc(inspect.getsourcefile(fn) or "<unknown>",
                                 fn.__code__.co_firstlineno)
        source = _kernel_source(fn)
        self.params, self.scalars, self.constexprs, self.positional = \
            _signature(fn, self.def_loc)
        self._binding = _CallBinding(self)
        self._check_decorator()
        self._check_arch()
        from .in_place import declared_pairs
        self.in_place = declared_pairs(self, in_place)
        self._rewritten: Callable | None = None
        self._traces: dict[tuple, KernelTrace] = {}
        self._source_hash = hashlib.sha256(source.encode()).hexdigest()[:16]

    def __repr__(self) -> str:
        return f"<ktile kernel {self.name} at {self.def_loc}>"

    def _check_decorator(self) -> None:
        if self.grid is None:
            raise KernelError("a kernel needs a grid", loc=self.def_loc, kernel=self.name,
                              hint="@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), ...))")
        if not callable(self.grid) and not isinstance(self.grid, tuple):
            raise KernelError(f"grid must be a function of the parameters or a tuple, got "
                              f"{type(self.grid).__name__}", loc=self.def_loc, kernel=self.name)
        from .warps import check_spec
        check_spec(self)
        if callable(self.grid) and not _takes_one_argument(self.grid):
            raise KernelError("grid must be a function of one argument, the call's parameters",
                              loc=self.def_loc, kernel=self.name,
                              hint="grid=lambda p: (hk.cdiv(p.o.cols, 64), ...)")
        for item in self.requires:
            if not (isinstance(item, tuple) and len(item) == 2 and callable(item[0])
                    and isinstance(item[1], str) and _takes_one_argument(item[0])):
                raise KernelError(f"requires takes (predicate, message) pairs, each predicate "
                                  f"a function of one argument, got {item!r}",
                                  loc=self.def_loc, kernel=self.name,
                                  hint='requires=[(lambda p: p.WIDTH >= p.x.cols, "WIDTH must '
                                       'be at least the row length")]')

    def _check_arch(self) -> None:
        """`arch=` names a target ktile has a table for: a typo is refused at the decorator
        that holds it, not at the first trace."""
        if self.arch is not None:
            check_target(self.arch, "arch", loc=self.def_loc, kernel=self.name)

    # ---- constants and targets -----------------------------------------------------------

    def resolve_constants(self, given: dict[str, Any]) -> dict[str, Any]:
        """Every declared constant's value for one call: the given one, else the default, each
        of its declared kind. A mistake here is the call's, so an `InputError` naming the
        constant."""
        for name in given:
            if name not in self.constexprs:
                raise InputError(f"unknown constant {name!r}", kernel=self.name,
                                 hint=self._unknown_constant_fix(name, given[name]))
        values = {}
        for name, (spec, default) in self.constexprs.items():
            value = given.get(name, default)
            if value is inspect.Parameter.empty:
                raise InputError(f"constant {name!r} has no default and was not given",
                                 kernel=self.name, hint=f"pass {name}=... at the call")
            if not _is_kind(value, spec.kind):
                raise _wrong_kind(self.name, name, spec.kind, value, default)
            values[name] = value
        return values

    def _unknown_constant_fix(self, name: str, value: Any) -> str:
        known = f"this kernel's constants are: {', '.join(self.constexprs) or 'none'}"
        if name != "warps":
            return known
        if isinstance(self.warps, str):   # warps="WARPS": the call sets that constant
            return f"this kernel's warp count is its constant {self.warps!r}: pass " \
                   f"{self.warps}={value!r}"
        return (f"the warp count is the decorator's, not the call's; to choose it per call, "
                f"declare a constant and name it: @hk.kernel(..., warps=\"WARPS\") with "
                f"`*, WARPS: hk.Constexpr[int] = 4`, then pass WARPS={value!r} "
                f"(docs/language.md, warps); {known}")

    def target_name(self, target: str | None) -> str:
        """The call's target, else the kernel's arch, else the default. Only None means "not
        given": an empty name is refused, not read as the default."""
        if target is not None:
            return check_target(target, "target", kernel=self.name)
        return self.arch or config.default_target()

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
        from .warps import warps_for
        warps = warps_for(self, tgt, values)
        key = (self._source_hash, tgt.name, tuple(sorted((k, repr(v)) for k, v in values.items())),
               tensor_copies, warps)
        cached = self._traces.get(key)
        if cached is None:
            from .trace_kernel import trace_kernel
            cached = trace_kernel(self, tgt, values, tensor_copies=tensor_copies, warps=warps)
            cached.in_place = dict(self.in_place)
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
        rt = runtime()
        limits = limits or build_limits(self) or rt.BuildLimits()  # hk: max_vgprs=, min_occupancy=
        return rt.build_trace(self.trace(target, **constants), limits=limits)

    def rewritten(self) -> Callable:
        if self._rewritten is None:
            from .control import HELPERS
            from .rewrite import rewrite_function
            self._rewritten = rewrite_function(self.fn, HELPERS)
        return self._rewritten

    # ---- calling -------------------------------------------------------------------------

    def __call__(self, *args, target: str | None = None, **constants):
        """Run on the GPU holding the tensors (torch CUDA tensors), else on the interpreter."""
        # '' or a non-name is refused here: the GPU path would read '' as "the default"
        if target is not None and (target.__class__ is not str or not target):
            check_target(target, "target", kernel=self.name)
        if self.scalars:   # bind_arguments, inline: this is every call's path
            args = self._binding.bind(args, constants)
        return (_LAUNCH or _load_launch())(self, args, constants, target)

    def interpret(self, *args, target: str | None = None, **constants):
        """Run on the CPU interpreter, whatever hardware is present."""
        args = self.bind_arguments(args, constants)
        return runtime().launch(self, args, constants, target, backend="interpret")

    def bind_arguments(self, args: tuple, keywords: dict) -> tuple:
        """A call's arguments as every backend's launch takes them: the tensors in declaration
        order, then each runtime scalar's value (given by position or keyword, else its
        default). A scalar's keyword is taken out of `keywords`, leaving the constants. Values
        are checked by the launch, not here."""
        if not self.scalars:
            return args
        return self._binding.bind(args, keywords)


class _CallBinding:
    """A call's arguments as the launch takes them: the tensors in declaration order, then
    each runtime scalar's value, in declaration order (given by position among the tensors or
    by keyword, else its default). A scalar's keyword is taken out of the call's keywords, so
    the rest are the constants. Values are checked by the launch, not here
    (`runtime.arguments.check_scalars`)."""

    def __init__(self, kernel: "Kernel"):
        import operator
        self.kernel = kernel.name
        self.positional = kernel.positional
        self.tensors = tuple(p.name for p in kernel.params)
        self.scalars = kernel.scalars
        self.names = frozenset(s.name for s in kernel.scalars)
        # every scalar positional: a full positional call only reorders (the common call)
        self.simple = not any(s.keyword_only for s in kernel.scalars)
        order = [kernel.positional.index(n) for n in self.tensors]
        order += [kernel.positional.index(s.name) for s in kernel.scalars if not s.keyword_only]
        self.reorder = operator.itemgetter(*order) if len(order) > 1 else None

    def bind(self, args: tuple, keywords: dict) -> tuple:
        if self.simple and len(args) == len(self.positional) and self.names.isdisjoint(keywords):
            return self.reorder(args)
        return self._bind_each(args, keywords)

    def _bind_each(self, args: tuple, keywords: dict) -> tuple:
        if len(args) > len(self.positional):
            raise InputError(f"takes {len(self.positional)} positional arguments "
                             f"({', '.join(self.positional)}), got {len(args)}",
                             kernel=self.kernel,
                             hint=f"call {self.kernel}({', '.join(self.positional)}); constants "
                                  f"go by keyword")
        given = dict(zip(self.positional, args))
        for s in self.scalars:
            if s.name in keywords:
                if s.name in given:
                    raise InputError(f"runtime scalar '{s.name}' is given twice, by position "
                                     f"and by keyword", kernel=self.kernel,
                                     hint=f"pass '{s.name}' once")
                given[s.name] = keywords.pop(s.name)
            elif s.name not in given:
                if s.default is inspect.Parameter.empty:
                    raise InputError(f"runtime scalar '{s.name}' was not given",
                                     kernel=self.kernel,
                                     hint=f"pass {s.name}=<{s.dtype.kind} value> (or by position"
                                          f": {self.kernel}({', '.join(self.positional)}))")
                given[s.name] = s.default
        missing = [n for n in self.tensors if n not in given]
        if missing:
            raise InputError(f"tensor parameter '{missing[0]}' was not given",
                             kernel=self.kernel,
                             hint=f"call {self.kernel}({', '.join(self.positional)})")
        return (*(given[n] for n in self.tensors), *(given[s.name] for s in self.scalars))


# ---- the runtime ------------------------------------------------------------------------------
# lang sits above the runtime and never imports it: ktile/__init__.py binds a loader of what a
# kernel is built, launched and has its scalars checked with (ktile.runtime's), called once.
_RUNTIME_LOADER: Callable[[], Any] | None = None
_RUNTIME: Any = None
_LAUNCH: Callable | None = None   # runtime().launch, bound on the first call


def bind_runtime(loader: Callable[[], Any]) -> None:
    """Hand lang the runtime: `loader()` returns an object with `launch`, `build_trace`,
    `BuildLimits` and `scalar_value_refusal` (ktile/__init__.py's `_load_runtime`)."""
    global _RUNTIME_LOADER, _RUNTIME, _LAUNCH
    _RUNTIME_LOADER, _RUNTIME, _LAUNCH = loader, None, None


def runtime() -> Any:
    """The bound runtime, loaded on first use (importing ktile stays light)."""
    global _RUNTIME
    if _RUNTIME is None:
        if _RUNTIME_LOADER is None:
            raise InternalError("no runtime is bound to ktile.lang (ktile/__init__.py binds it)")
        _RUNTIME = _RUNTIME_LOADER()
    return _RUNTIME


def _load_launch() -> Callable:
    """Bind the launch function once: a call's host overhead is part of its cost."""
    global _LAUNCH
    _LAUNCH = runtime().launch
    return _LAUNCH


def check_target(name: object, what: str, *, loc: SourceLoc | None = None,
                 kernel: str | None = None) -> str:
    """`name`, a target ktile has a table for; else a KernelError that says so (`what` is the
    argument that gave it, `target` or `arch`), at `loc` where given."""
    from .. import targets
    if isinstance(name, str) and name in targets.NAMES:  # the common case, on every call
        return name
    if name == "":
        raise KernelError(f"{what}='' names no target", loc=loc, kernel=kernel,
                          hint=f"name one of {', '.join(targets.NAMES)}, or leave {what} out "
                               f"for the default")
    try:
        targets.get(name)
    except KernelError as exc:
        raise KernelError(exc.message, loc=loc, kernel=kernel, hint=exc.hint) from None
    return name


def _kernel_source(fn: Callable) -> str:
    """The kernel's source text: tracing rewrites it (its for/if/while), so a kernel whose
    source Python did not keep (defined by `python -c`, `exec`, a notebook's `exec`) cannot
    run, and is refused where it is decorated."""
    try:
        return "".join(source_lines(fn)[0])
    except (OSError, TypeError):
        raise KernelError(f"the source of kernel '{fn.__name__}' is not available (it was "
                          f"defined in {fn.__code__.co_filename}, no file Python can read "
                          f"back): ktile reads a kernel's source to trace it",
                          kernel=fn.__name__,
                          hint="define the kernel in a .py file and import it, rather than with "
                               "exec() or `python -c`") from None


def _wrong_kind(kernel: str, name: str, kind: type, value: Any, default: Any) -> InputError:
    """The error for constant `name` given a value that is not of its declared kind; the fix
    shows its default where it has one."""
    example = (repr(default) if default is not inspect.Parameter.empty else
               {int: "16", float: "1.0", bool: "True", str: "'row'"}.get(kind, "..."))
    extra = (f"; convert it with {kind.__name__}(...)"
             if type(value).__module__ == "numpy" else "")
    return InputError(f"constant {name!r} must be {kind.__name__} (it is hk.Constexpr["
                      f"{kind.__name__}]), got {type(value).__name__} {value!r}", kernel=kernel,
                      hint=f"pass {name}= a Python {kind.__name__}, e.g. {name}={example}{extra}")


def _requirements(requires, name: str, fn: Callable) -> tuple:
    """`requires` as a tuple of its entries (checked one by one in `_check_decorator`)."""
    if isinstance(requires, (list, tuple)):
        return tuple(requires)
    loc = SourceLoc(inspect.getsourcefile(fn) or "<unknown>", fn.__code__.co_firstlineno)
    raise KernelError(f"requires takes a list of (predicate, message) pairs, got "
                      f"{type(requires).__name__}", loc=loc, kernel=name,
                      hint='requires=[(lambda p: p.WIDTH >= p.x.cols, "WIDTH must be at least '
                           'the row length")]')


def _takes_one_argument(fn: Callable) -> bool:
    try:
        inspect.signature(fn).bind(None)
    except TypeError:
        return False
    except ValueError:  # no signature to read (a builtin): let the call tell
        return True
    return True


def _signature(fn: Callable, loc: SourceLoc):
    """(tensors, runtime scalars, constants, the positional parameters' names in declaration
    order) of a kernel function."""
    params: list[Param] = []
    scalars: list[ScalarParam] = []
    positional: list[str] = []
    constexprs: dict[str, tuple[ConstexprSpec, Any]] = {}
    lines = _parameter_lines(fn, loc)
    try:  # eval_str: annotations stay types under `from __future__ import annotations`
        signature = inspect.signature(fn, eval_str=True)
    except NameError as exc:
        raise KernelError(f"an annotation of kernel '{fn.__name__}' names something undefined "
                          f"({exc})", loc=loc, kernel=fn.__name__) from exc
    except KernelError as exc:  # a bad hk.Tensor[...] / hk.Constexpr[...] in a string annotation
        raise KernelError(exc.message, loc=loc, kernel=fn.__name__, hint=exc.hint) from None
    for p in signature.parameters.values():
        at = lines.get(p.name, loc)
        hk_constant = hk_constexpr_spec(p, ConstexprSpec, Constexpr)  # hk-dsl's looser forms
        scalar = None if hk_constant else _scalar_param(fn, p, at)
        if hk_constant is not None:
            constexprs[p.name] = (hk_constant, p.default)
        elif scalar is not None:
            scalars.append(scalar)
            if not scalar.keyword_only:
                positional.append(p.name)
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            params.append(Param(p.name, _tensor_spec(fn, p, at)))
            positional.append(p.name)
        elif p.kind == p.KEYWORD_ONLY:
            constexprs[p.name] = (_constexpr_spec(fn, p, at), p.default)
        else:
            raise KernelError(f"kernels take no *args or **kwargs ('{p.name}')", loc=at,
                              kernel=fn.__name__,
                              hint="name each tensor as a positional parameter and each constant "
                                   "as a keyword-only hk.Constexpr after `*`")
    if not params:
        raise KernelError("a kernel needs at least one tensor parameter", loc=loc,
                          kernel=fn.__name__)
    return tuple(params), tuple(scalars), constexprs, tuple(positional)


def _scalar_param(fn: Callable, p: inspect.Parameter, at: SourceLoc) -> ScalarParam | None:
    """The runtime scalar `p` declares, or None: a parameter annotated hk.Scalar[...], or a
    positional one annotated `float` or `int` (keyword-only, those are constants, as in
    hk-dsl). Its default, if any, is a value the call could pass."""
    ann, keyword_only = p.annotation, p.kind == p.KEYWORD_ONLY
    if not isinstance(ann, ScalarSpec):
        if keyword_only or not isinstance(ann, type) or ann not in SCALAR_DTYPES:
            return None
        ann = ScalarSpec(SCALAR_DTYPES[ann])
    if p.default is not inspect.Parameter.empty:
        why = runtime().scalar_value_refusal(ann.dtype, p.default)
        if why is not None:
            raise KernelError(f"runtime scalar '{p.name}' is {ann!r} but its default "
                              f"{p.default!r} {why}", loc=at, kernel=fn.__name__,
                              hint=f"give it a default the call could pass, or none")
    return ScalarParam(p.name, ann.dtype, p.default, keyword_only)


def _tensor_spec(fn: Callable, p: inspect.Parameter, at: SourceLoc) -> TensorSpec:
    ann = p.annotation
    if not isinstance(ann, TensorSpec):
        shown = ("no annotation" if ann is inspect.Parameter.empty else
                 ann.__name__ if isinstance(ann, type) else repr(ann))
        raise KernelError(
            f"positional parameter '{p.name}' must be a tensor (hk.Tensor[dtype]) or a runtime "
            f"scalar (int, float), got {shown}", loc=at, kernel=fn.__name__,
            hint=f"annotate it `{p.name}: hk.Tensor[hk.bf16]`, make it a runtime scalar "
                 f"(`{p.name}: float` or `{p.name}: int`), or a keyword-only constant after "
                 f"`*`: `*, {p.name}: hk.Constexpr[int] = ...`")
    if p.default is not inspect.Parameter.empty:
        raise KernelError(f"tensor parameter '{p.name}' has a default ({p.default!r}); every "
                          f"call passes each tensor", loc=at, kernel=fn.__name__,
                          hint=f"drop the default of '{p.name}'")
    return ann


def _constexpr_spec(fn: Callable, p: inspect.Parameter, at: SourceLoc) -> ConstexprSpec:
    """A keyword-only parameter's Constexpr, its default (if any) of the declared kind."""
    ann = p.annotation
    if isinstance(ann, type) and ann in CONSTEXPR_KINDS:   # hk-dsl: `*, EPS: float = 1e-6`
        ann = ConstexprSpec(ann)
    if not isinstance(ann, ConstexprSpec):
        raise KernelError(f"keyword-only parameter '{p.name}' must be a constant "
                          f"(hk.Constexpr[T])", loc=at, kernel=fn.__name__,
                          hint=f"annotate it `{p.name}: hk.Constexpr[int] = ...`")
    if p.default is not inspect.Parameter.empty and not _is_kind(p.default, ann.kind):
        raise KernelError(f"constant '{p.name}' is hk.Constexpr[{ann.kind.__name__}] but its "
                          f"default is {p.default!r}", loc=at, kernel=fn.__name__,
                          hint=f"give it a {ann.kind.__name__} default, or no default (then "
                               f"every call passes {p.name}=...)")
    return ann


def _is_kind(value: Any, kind: type) -> bool:
    """`value` is a constant of `kind` (an int is a float constant too; a bool is no int)."""
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _parameter_lines(fn: Callable, loc: SourceLoc) -> dict[str, SourceLoc]:
    """Each parameter's own line in the kernel's source (a long signature spans several)."""
    import ast
    import textwrap
    try:
        lines, first = source_lines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return {}
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    a = fdef.args
    every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]
    return {arg.arg: SourceLoc(loc.file, first + arg.lineno - 1) for arg in every}


def kernel(fn: Callable | None = None, *, grid=None, warps: int | str | dict = 1,
           arch: str | None = None, requires: Sequence[tuple[Callable, str]] = (),
           in_place: dict[str, str] | None = None, **hk_options):
    """Decorate a tile kernel: `@hk.kernel(grid=lambda p: (...), warps=4)`. `warps`: an int,
    the name of an int constant each call sets (`warps="WARPS"`), or a dict per target
    (`{"gfx942": 4, "default": 8}`; see `ktile.lang.warps`). `requires`: the
    call's preconditions, (predicate, message) pairs; a predicate reads `p` as the grid
    function does (`p.x.cols`, `p.WIDTH`) and a call that fails one is refused before it runs,
    on every backend. `in_place`: {output: input} pairs the caller may pass as one tensor,
    because every lane reads the input's elements before it writes them to the output
    (docs/runtime.md, "Aliasing and in-place"). hk-dsl's options (`name`, `max_vgprs`, ...):
    `hk_compat.KERNEL_OPTIONS`."""
    def wrap(f: Callable) -> Kernel:
        k = Kernel(f, grid, warps, arch, requires, in_place)
        apply_kernel_options(k, hk_options)
        return k
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
        trace = tracer.current()
        if trace.func_depth >= MAX_FUNC_DEPTH:
            raise tracer.error(
                f"@hk.func '{self.fn.__name__}' is called {MAX_FUNC_DEPTH} calls deep: a "
                f"device function is inlined where it is called, so one that calls itself "
                f"must stop on a Python value", op=self.fn.__name__,
                hint="end the recursion on a Python int (a depth argument), or loop instead")
        if self._rewritten is None:
            from .control import HELPERS
            from .rewrite import rewrite_function
            self._rewritten = rewrite_function(self.fn, HELPERS)
        trace.func_depth += 1
        try:
            return self._rewritten(*args, **kwargs)
        finally:
            trace.func_depth -= 1


# @hk.func calls nested deeper than this are taken for recursion without end (each level is a
# few Python frames: well inside Python's recursion limit)
MAX_FUNC_DEPTH = 64


def func(fn: Callable) -> DeviceFunction:
    return DeviceFunction(fn)
