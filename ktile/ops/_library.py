"""The ops framework: how an op folder declares its kernels, configurations and reference, and
the checks its public function makes before anything runs.

An op folder `ktile/ops/<folder>/` holds `op.py`, which defines `OPS`: a list of `Op`. An `Op`
names its public functions (looked up lazily by `ktile.ops.<name>`), its routing table (which
kernel, at which constants, for which shapes and targets) and where its reference lives. The
invariant: every kernel an op can launch is a `Route` of its table, so `all_kernels()` lists
exactly what the build and emulation tests must check, and nothing is compiled at run time that
no test compiled.

Torch is imported only by the op modules, never by this file at import time, so `import ktile`
stays fast.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..errors import InputError

TARGETS = ("gfx1100", "gfx1201", "gfx942", "gfx950", "sm_90a")
AMD_TARGETS = ("gfx1100", "gfx1201", "gfx942", "gfx950")
MAX_RANK = 4
PLAN_LIMIT = 4096      # plans a routing table memoizes before it starts over


# ---- the configuration space --------------------------------------------------------------

@dataclass(frozen=True)
class Route:
    """One kernel at one set of constants, for the shapes `(rows, cols)` it fits: rows up to
    `max_rows`, columns up to `max_cols` (None: any) and a multiple of `cols_multiple`, on
    `targets` (None: every target and the interpreter). `sample` is a small (rows, cols) the
    build and emulation tests run it at. `min_rows` / `min_cols`: the low ends of a measured
    table's shape bucket (None: 1). `occupancy_exempt`: why the route may run below the
    target's occupancy floor, with the measurement that says it is faster there (the routes'
    budget test, tests/tier0/test_ops_routes.py, allows it and prints it); None: no exemption.
    `estimate_exempt`: why the budgets pass's register estimate (close to spilling) may be
    over its warning line: the compiler's own count, checked by a build test named there."""
    kernel: str
    constants: dict = field(default_factory=dict)
    max_rows: int | None = None
    max_cols: int | None = None
    targets: tuple[str, ...] | None = None
    sample: tuple[int, int] = (3, 300)
    cols_multiple: int = 1
    min_rows: int | None = None
    min_cols: int | None = None
    occupancy_exempt: str | None = None
    estimate_exempt: str | None = None

    def fits(self, rows: int, cols: int, target: str | None) -> bool:
        if self.max_rows is not None and rows > self.max_rows:
            return False
        if (self.min_rows is not None and rows < self.min_rows) or \
                (self.min_cols is not None and cols < self.min_cols):
            return False
        if cols % self.cols_multiple:
            return False
        if self.max_cols is not None and cols > self.max_cols:
            return False
        if self.targets is None:
            return True
        # the interpreter (target None) traces for the default target (KTILE_TARGET, else
        # gfx1100), so it takes that target's routes: the constants it traces are ones the
        # target's build was checked at
        if target is None:
            from ..config import default_target
            target = default_target()
        return target in self.targets


class RoutingTable:
    """An op's configuration space: routes tried in order, the first that fits wins. A
    measured table (`measured[target]`) is consulted before the built-in routes, and falls
    back to them where no measured route fits (an unseen shape). The measured routes of a
    target are the package's table `ktile/ops/routes/<target>/<op>.json` (written by `ktile
    tune`, read on the first look at that target: docs/tuning.md), unless `override(target,
    routes)` set them first."""

    def __init__(self, routes: list[Route]):
        self.routes = list(routes)
        self.plans: dict = {}                 # `plan`'s memo; cleared when the routes change
        self.measured: dict[str, list[Route]] = MeasuredRoutes(self.plans)
        self._pins: dict[int, Route] = {}     # thread id -> the route `pinned(...)` set

    def bind(self, op: "Op") -> None:
        """The op whose shipped tables `measured` reads (its first `Op`, at import)."""
        if self.measured.op is None:
            self.measured.op = op

    def override(self, target: str, routes: list[Route]) -> None:
        self.measured[target] = list(routes)

    def plan(self, target: str | None, key, make: Callable[[], Any]):
        """`make()` (what a call launches: its route, kernel, views' shapes), memoized under
        (`target`, `key`): `key` must hold everything else the plan depends on (shapes,
        dtypes, which optional arguments are given). Not memoized while a route is pinned;
        forgotten when the measured routes change (`override`, a shipped table read) and
        when the memo holds PLAN_LIMIT plans. An InputError of `make` is raised each call."""
        if self._pins:
            return make()
        if target is None:           # the interpreter routes as KTILE_TARGET's target
            target = (None, os.environ.get("KTILE_TARGET", ""))
        plans = self.plans
        found = plans.get((target, key))
        if found is None:
            found = make()
            if len(plans) >= PLAN_LIMIT:
                plans.clear()
            plans[(target, key)] = found
        return found

    @property
    def pinned(self) -> Route | None:
        """The route `pinned(...)` set for this thread: every call takes it (tests, tuner)."""
        return self._pins.get(threading.get_ident()) if self._pins else None

    def choose(self, rows: int, cols: int, target: str | None) -> Route:
        """The route for a problem of `rows` rows of `cols` columns on `target` (None: the CPU
        interpreter)."""
        if self._pins:
            pin = self._pins.get(threading.get_ident())
            if pin is not None:
                return pin
        for route in self.measured.get(target, []) + self.routes:
            if route.fits(rows, cols, target):
                return route
        where = target or "the CPU"
        widest = max((r.max_cols for r in self.measured.get(target, []) + self.routes
                      if r.max_cols is not None and r.fits(1, r.max_cols, target)), default=None)
        if widest is not None and cols > widest and all(
                r.max_cols is not None for r in self.routes if r.fits(1, 1, target)):
            raise InputError(f"no kernel of this op handles rows of {cols} columns on {where}: "
                             f"its widest route there holds {widest} columns in registers",
                             hint=f"rows up to {widest} columns run on {where}; wider ones are "
                                  f"future work (docs/ops.md): file an issue with the shape")
        raise InputError(f"no kernel of this op handles {rows} rows of {cols} columns on "
                         f"{where}",
                         hint="split the rows into smaller calls, or file an issue with the shape")


class MeasuredRoutes(dict):
    """target -> measured routes, read from the op's shipped table on the first look at a
    target (`ktile.ops._shipped`); a target set by hand (`override`) is not read."""

    def __init__(self, plans: dict | None = None):
        super().__init__()
        self.op: Op | None = None
        self.plans = {} if plans is None else plans     # the table's memo: cleared on a change
        self._looked: set = set()
        self._lock = threading.RLock()
        self._alternatives: dict = {}    # target -> its "torch"/"triton" routes (not chosen here)

    def _look(self, target) -> None:
        if target in self._looked or self.op is None or target is None:
            return
        with self._lock:
            if target in self._looked:
                return
            self._looked.add(target)     # first: reading the table runs the op's own calls
            from ._shipped import shipped_routes
            routes = shipped_routes(self.op, target)
            if routes and not super().__contains__(target):
                self._store(target, routes)

    def _store(self, target, routes) -> None:
        """ktile routes where `choose` reads them; alternative routes (kernel "torch" or
        "triton") aside, for the registered op's dispatch (`alternatives`)."""
        from .alternatives import KINDS
        self._alternatives[target] = [r for r in routes if r.kernel in KINDS]
        super().__setitem__(target, [r for r in routes if r.kernel not in KINDS])
        self.plans.clear()

    def alternatives(self, target) -> list:
        """The alternative routes of `target`'s table (read on the first look)."""
        if target not in self._looked:
            self._look(target)
        return self._alternatives.get(target, ())

    def get(self, target, default=None):     # every op call: the set test, then the dict's
        if target not in self._looked:
            self._look(target)
        return dict.get(self, target, default)

    def __getitem__(self, target):
        self._look(target)
        return super().__getitem__(target)

    def __contains__(self, target) -> bool:
        self._look(target)
        return super().__contains__(target)

    def __setitem__(self, target, routes) -> None:
        self._looked.add(target)
        self._store(target, list(routes))


@contextlib.contextmanager
def pinned(table: RoutingTable, route: Route):
    """Within the block every call of the table's op in this thread takes `route` (a test
    of each route; the tuner's candidates)."""
    key = threading.get_ident()
    table._pins[key] = route
    try:
        yield
    finally:
        del table._pins[key]


# How op functions launch their kernels: `run(kernel, *args, **constants)`; a test swaps it
# for wave emulation of an AMD target (`emulating`), so an op runs end to end on emulated AMD.
_RUNNER: list[Callable] = []


def run(kernel, *args, **constants):
    if _RUNNER:
        return _RUNNER[-1](kernel, *args, **constants)
    return kernel(*args, **constants)


@contextlib.contextmanager
def emulating(target: str):
    """Within the block, op kernels on CPU tensors run under wave emulation of `target`."""
    from ..emulate import emulate
    _RUNNER.append(lambda kernel, *args, **constants:
                   emulate(kernel, *args, target=target, **constants))
    try:
        yield
    finally:
        _RUNNER.pop()


# ---- an op --------------------------------------------------------------------------------

@dataclass
class Op:
    """One op: its name (`torch.ops.ktile.<name>`), the public functions it exports
    (`ktile.ops.<function>`), its kernels by name (each a factory of dtype, or a kernel), the
    dtypes it accepts, its routing table and its reference module's dotted name. `also`: routes
    of kernels every call launches besides the routed one (a final reduction), built and
    tested alike."""
    name: str
    functions: dict[str, Callable]
    kernels: dict[str, Callable[[Any], Any]]
    dtypes: tuple[str, ...]
    table: RoutingTable
    reference: str
    also: tuple[Route, ...] = ()
    case: Callable[..., tuple[float, float]] | None = None

    def __post_init__(self) -> None:
        self.table.bind(self)
        _OPS_BY_NAME.setdefault(self.name, self)

    def check(self, rows: int, cols: int, dtype: str, device: str = "cpu") -> tuple[float, float]:
        """(max error, tolerance) of the op's public function against its reference on random
        inputs of `rows` rows of `cols` columns: what the emulation and GPU tests assert."""
        return self.case(rows, cols, dtype, device)

    def kernel(self, route: Route, dtype: str):
        """The kernel of `route` for elements of `dtype` (a ktile dtype name: 'bf16')."""
        return self.kernels[route.kernel](dtype)


_OPS_BY_NAME: dict[str, Op] = {}     # every Op constructed, by name (its first)


def op_named(name: str) -> Op:
    """The op called `name`, importing the library when it is not loaded yet."""
    if name not in _OPS_BY_NAME:
        all_ops()
    return _OPS_BY_NAME[name]


def routing(*, alternatives: bool):
    """`ktile.ops.routing(alternatives=False)`: within the block every op call runs ktile's
    own kernels, not the routing tables' torch/triton routes (alternatives_dispatch.py)."""
    from .alternatives_dispatch import routing as switch
    return switch(alternatives=alternatives)


def op_modules() -> list[str]:
    """Every op folder's `op` module, by dotted name: a folder is an op when it has op.py."""
    from . import __path__ as ops_path
    names = []
    for info in pkgutil.iter_modules(ops_path):
        if info.ispkg and not info.name.startswith("_"):
            spec = importlib.util.find_spec(f"ktile.ops.{info.name}.op")
            if spec is not None:
                names.append(f"ktile.ops.{info.name}.op")
    return sorted(names)


def all_ops() -> list[Op]:
    """Every op of the library (importing their modules, and so torch)."""
    return [op for name in op_modules() for op in importlib.import_module(name).OPS]


@dataclass(frozen=True)
class ShippedKernel:
    """One kernel at its shipped constants for one target: what tier 1 compiles and tier 2
    emulates. `id` reads op/route kernel/dtype/constants/target, unique over `all_kernels()`:
    it names the route's kernel (the op's key), not the traced kernel's name, which variants
    of one factory share (dequantize's int8 and fp8 forms are both `dequant_per_token_of`)."""
    op: str
    kernel: Any
    dtype: str
    constants: dict
    target: str
    sample: tuple[int, int]
    route: Route | None = None

    @property
    def id(self) -> str:
        consts = "-".join(f"{k}{v}" for k, v in sorted(self.constants.items()))
        name = self.route.kernel if self.route is not None else self.kernel.name
        return f"{self.op}/{name}/{self.dtype}/{consts or 'defaults'}/{self.target}"


def all_kernels(targets: tuple[str, ...] = TARGETS) -> Iterator[ShippedKernel]:
    """Every (op, kernel, dtype, constants, target) a shipped routing table can launch, each
    once (a table may route two shapes to one kernel at the same constants: softmax_rows)."""
    seen: set[str] = set()
    for op in all_ops():
        for route in [*op.table.routes, *op.also]:
            for target in targets:
                if route.targets is not None and target not in route.targets:
                    continue
                for dtype in op.dtypes:
                    shipped = ShippedKernel(op.name, op.kernel(route, dtype), dtype,
                                            dict(route.constants), target, route.sample, route)
                    if shipped.id not in seen:
                        seen.add(shipped.id)
                        yield shipped


def warmup(shapes_or_model_config: dict, *, target: str | None = None,
           dtypes: tuple[str, ...] = ("bf16",)):
    """`ktile.ops.warmup`: build every kernel those op calls launch (ktile/ops/warmup.py)."""
    from .warmup import warmup as build_all
    return build_all(shapes_or_model_config, target=target, dtypes=dtypes)


# ---- the checks of an op's public function ------------------------------------------------

def dtype_name(t) -> str:
    return str(t.dtype).removeprefix("torch.")


_KT_DTYPES: dict = {}      # torch.dtype -> ktile dtype name, filled on the first call


def _kt_dtypes() -> dict:
    if not _KT_DTYPES:
        import torch
        from .. import dtypes as kt
        _KT_DTYPES.update({getattr(torch, d.torch_name): d.name
                           for d in (kt.bf16, kt.fp16, kt.fp32, kt.fp8, kt.i32, kt.i8)})
    return _KT_DTYPES


def kt_dtype(t) -> str | None:
    """The ktile dtype name of a torch tensor's elements ('bf16'), None when ktile has none."""
    return (_KT_DTYPES or _kt_dtypes()).get(t.dtype)


_TORCH = None              # the torch module, once an op has been called (imported lazily)


def _torch():
    global _TORCH, _PARAMETER
    if _TORCH is None:
        import torch
        _PARAMETER = torch.nn.Parameter
        _TORCH = torch
    return _TORCH


def check_tensor(op: str, param: str, t, dtypes: tuple[str, ...], *, ranks=(1, MAX_RANK)):
    """`t` is a dense torch tensor of one of `dtypes` (ktile names: 'bf16'), of 1 to 4
    dimensions, not empty, on a CPU or GPU, its rows contiguous. Every op call makes it, so
    it asks the tensor only what it must (no imports, no dtype-name strings on success)."""
    torch = _TORCH or _torch()
    if not isinstance(t, torch.Tensor):
        raise InputError(f"{op}: '{param}' must be a torch.Tensor, got {type(t).__name__}",
                         hint=f"pass torch.as_tensor({param})")
    if (_KT_DTYPES or _kt_dtypes()).get(t.dtype) not in dtypes:
        from .. import dtypes as kt
        torch_names = [getattr(kt, d).torch_name for d in dtypes]
        raise InputError(f"{op}: '{param}' holds {dtype_name(t)} elements; this op takes "
                         f"{', '.join(torch_names)}",
                         hint=f"convert it: {param}.to(torch.{torch_names[0]})")
    low, high = ranks
    if not low <= t.dim() <= high:
        raise InputError(f"{op}: '{param}' has {t.dim()} dimensions; this op takes "
                         f"{low} to {high}",
                         hint=f"reshape it: {param}.reshape(-1, {param}.shape[-1])")
    if t.layout != torch.strided:
        raise InputError(f"{op}: '{param}' is a {t.layout} tensor; this op takes dense ones",
                         hint=f"pass {param}.to_dense()")
    if t.numel() == 0:
        raise InputError(f"{op}: '{param}' is empty (shape {tuple(t.shape)}); the op has no "
                         f"element to compute", hint="skip the call for empty inputs")
    kind = t.device.type
    if kind not in ("cpu", "cuda", "meta"):
        raise InputError(f"{op}: '{param}' is on {t.device}; ktile runs on the CPU "
                         f"(interpreter) and on CUDA or ROCm GPUs",
                         hint=f"move it: {param}.cpu() or {param}.cuda()")
    if kind != "meta" and not t.is_contiguous():
        raise InputError(f"{op}: '{param}' is not contiguous (strides {t.stride()}); this op "
                         f"reads it as rows of one contiguous run each",
                         hint=f"pass {param}.contiguous()")


def check_last_dim(op: str, param: str, t, cols, like: str) -> None:
    """`t` is one row of `cols` values (a weight or bias vector for rows of `like`)."""
    if t.dim() != 1 or t.shape[0] != cols:
        raise InputError(f"{op}: '{param}' has shape {tuple(t.shape)}; it must hold one value "
                         f"per column of '{like}', shape ({cols},)",
                         hint=f"pass a 1-D tensor of {like}.shape[-1] = {cols} values")


def check_like(op: str, param: str, t, like, like_name: str, *, dtype=True) -> None:
    """`t` has `like`'s shape, device and (with `dtype`) dtype."""
    if tuple(t.shape) != tuple(like.shape):
        raise InputError(f"{op}: '{param}' has shape {tuple(t.shape)}, '{like_name}' "
                         f"{tuple(like.shape)}; they must be equal",
                         hint=f"pass a tensor shaped like '{like_name}'")
    check_same_device(op, {param: t, like_name: like})
    if dtype and t.dtype != like.dtype:
        raise InputError(f"{op}: '{param}' holds {dtype_name(t)}, '{like_name}' "
                         f"{dtype_name(like)}; they must be equal",
                         hint=f"convert it: {param}.to({like_name}.dtype)")


def check_same_device(op: str, tensors: dict) -> None:
    first = None
    for t in tensors.values():       # every call makes it: no set unless they differ
        if first is None:
            first = t.device
        elif t.device != first:
            break
    else:
        return
    devices = {t.device for t in tensors.values()}
    if len(devices) > 1:
        listed = ", ".join(f"'{p}' on {t.device}" for p, t in tensors.items())
        raise InputError(f"{op}: tensors are on different devices: {listed}",
                         hint="move them to one device first")


def check_out(op: str, out, like, like_name: str = "x", param: str = "out") -> None:
    """`out=` is a contiguous tensor of `like`'s shape, dtype and device that shares no memory
    with it."""
    import torch
    if not isinstance(out, torch.Tensor):
        raise InputError(f"{op}: '{param}' must be a torch.Tensor, got {type(out).__name__}",
                         hint=f"pass {param}=torch.empty_like({like_name}), or leave it out")
    check_like(op, param, out, like, like_name)
    if not out.is_contiguous():
        raise InputError(f"{op}: '{param}' is not contiguous (strides {out.stride()})",
                         hint=f"pass {param}=torch.empty_like({like_name})")
    if out.device.type != "meta" and shares_memory(out, like):
        raise InputError(f"{op}: '{param}' shares memory with '{like_name}'; the kernel's "
                         f"blocks would read what others already wrote",
                         hint=f"pass a separate {param}=torch.empty_like({like_name})")


def shares_memory(a, b) -> bool:
    """Whether the byte spans of two contiguous tensors meet. Not asked while torch.compile
    traces (fake tensors have no addresses): the compiled call's tensors are the graph's."""
    import torch
    if torch.compiler.is_compiling() or type(a) is not torch.Tensor \
            or type(b) is not torch.Tensor:   # fake tensors (a subclass) have no addresses
        return False
    a0, b0 = a.data_ptr(), b.data_ptr()
    return a0 < b0 + b.numel() * b.element_size() and b0 < a0 + a.numel() * a.element_size()


def check_eps(op: str, eps) -> float:
    """eps is a finite, non-negative number (a runtime scalar: no rebuild per value)."""
    import math
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise InputError(f"{op}: 'eps' must be a Python float, got {type(eps).__name__}",
                         hint="pass eps=1e-6 (a tensor: eps.item())")
    if not math.isfinite(eps) or eps < 0:
        raise InputError(f"{op}: 'eps' is {eps}; it must be a finite number >= 0",
                         hint="pass the model's epsilon, e.g. eps=1e-6")
    return float(eps)


def random(shape, seed: int, dtype: str, device: str = "cpu", shift: float = 0.0):
    """Seeded normal values of a ktile dtype, made on the CPU (the same on every device)."""
    import torch
    from .. import dtypes as kt
    t = torch.randn(shape, generator=torch.Generator().manual_seed(seed)) + shift
    return t.to(getattr(torch, getattr(kt, dtype).torch_name)).to(device)


def max_error(got, want) -> float:
    import numpy as np
    return float(np.max(np.abs(got.float().cpu().numpy() - want), initial=0.0))


def rows_of(t):
    """`t` (contiguous, 1 to 4 dimensions) as a 2-D view: (rows, cols)."""
    return t.view(-1, t.shape[-1])


def row_tiles(t):
    """`t` (contiguous, its last dimension a multiple of 16) as rows of 16-row tiles: each row
    of `cols` values becomes 16 rows of cols/16, so row r is row tile r of the view and a
    register tile 16 x C of it is one row's slice read with wide accesses. A 1-D weight becomes
    the one tile row (16, cols/16) that lines up with every row."""
    return t.view(-1, t.shape[-1] // 16)


def target_of(t) -> str | None:
    """The target a call on `t` runs on: None on the CPU (the interpreter), else the GPU's;
    inside `runtime.builds.building(target)` (warm-up) that target."""
    dev = t.device
    if dev.type != "cuda":
        return (_BUILDING or _building())()
    index = dev.index or 0
    target = _GPU_TARGETS.get(index)
    if target is None:      # a GPU's target is fixed: asked once (device properties are slow)
        from ..runtime.devices import device, target_of as device_target
        target = _GPU_TARGETS[index] = device_target(device(index))
    return target


_GPU_TARGETS: dict[int, str] = {}     # CUDA device index -> its ktile target
_BUILDING = None                      # runtime.builds.building_target, once imported


def _building():
    global _BUILDING
    from ..runtime.builds import building_target
    _BUILDING = building_target
    return _BUILDING


# ---- torch.library registration -----------------------------------------------------------

def define(qualname: str, impl: Callable, fake: Callable, *, mutates_args: tuple[str, ...] = ()):
    """Register `impl` (annotated: its schema is inferred) as `torch.ops.<qualname>` for CPU and
    CUDA tensors, with `fake` as its fake implementation (shapes and dtypes only), and return a
    caller: eager calls on plain tensors go straight to `impl` (the dispatcher's Python costs
    tens of microseconds, more than a small kernel), anything else (torch.compile, fake
    tensors, modes) through the registered op."""
    import torch
    from .alternatives_dispatch import routed
    schema = torch.library.infer_schema(impl, mutates_args=mutates_args)
    impl = routed(qualname, impl)        # the table's torch/triton routes (alternatives.py)
    custom = torch.library.custom_op(qualname, impl, mutates_args=mutates_args,
                                     device_types=("cpu", "cuda"), schema=schema)
    custom.register_fake(fake)
    namespace, name = qualname.split("::")
    overload = getattr(getattr(torch.ops, namespace), name).default
    return Dispatch(impl, overload)


class Dispatch:
    """An op's entry: `impl` directly for plain eager tensors, else the torch op."""

    def __init__(self, impl: Callable, overload):
        self.impl = impl
        self.overload = overload

    def __call__(self, *args):
        if _plain_eager(args):
            return self.impl(*args)
        return self.overload(*args)


def _plain_eager(args) -> bool:
    """Real CPU or CUDA tensors (no subclass, no fake), no dispatch mode, not compiling. A
    module's `nn.Parameter` (a weight) counts as plain unless autograd would record the call
    (grad enabled and the parameter requires it): the op has no autograd formula, and the
    dispatcher's path is the one that says so at backward."""
    torch = _TORCH or _torch()
    if torch.compiler.is_compiling():
        return False
    tensor = torch.Tensor
    for a in args:
        if not isinstance(a, tensor):
            continue
        kind = type(a)
        if kind is not tensor and (kind is not _PARAMETER
                                   or a.requires_grad and torch.is_grad_enabled()):
            return False
        if a.device.type not in ("cpu", "cuda"):
            return False
    depth = _DISPATCH_DEPTH[0] if _DISPATCH_DEPTH else _dispatch_depth()
    return depth is None or depth() == 0


_DISPATCH_DEPTH: list = []     # [torch._C._len_torch_dispatch_stack, or None], once looked up
_PARAMETER = None              # torch.nn.Parameter, set with _TORCH


def _dispatch_depth():
    _DISPATCH_DEPTH.append(getattr(_torch()._C, "_len_torch_dispatch_stack", None))
    return _DISPATCH_DEPTH[0]
