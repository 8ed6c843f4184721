"""`ktile.torch_op(kernel)`: a kernel as a `torch.library` custom op, `torch.ops.ktile.<name>`.

    op = ktile.torch_op(rmsnorm, constants={"eps": 1e-5})
    op(x, w, out)                      # eager: checked, then launched
    torch.compile(f, fullgraph=True)   # f calls op(...): traced through the fake implementation

The op's arguments are the kernel's tensor parameters; the ones the kernel stores to are its
`mutates_args`; it returns nothing. Constants are bound when the op is made, so each
(kernel, constants, target) is its own op with its own name. Three layers check the tensors:

- the eager call (`TorchOp.__call__`) runs every check before torch's dispatcher is entered,
  so a mistake surfaces as a ktile `InputError` naming the parameter and the fix;
- the fake (meta) implementation checks dtype, rank (1 to 4 dimensions, padded on the left to
  4-D as every call is), device and the shapes the kernel needs to agree, symbolically (no
  specialisation on sizes), and does nothing else;
- runtime scalars (`eps: float`, `seed: int`) are the op's too: passed as to the kernel (by
  position among the tensors or by keyword), in the schema after the tensors as `float` /
  `int` arguments, checked on every call; a new value is no new op, trace or build;
- the cpu/cuda implementation checks the layout (innermost stride, outputs that share memory,
  16-byte alignment on CUDA) on every call, compiled ones too, then launches (which checks the
  rest again). It neither synchronises nor allocates, so it can be captured into a CUDA graph
  once a first call has built the kernel.
"""
from __future__ import annotations

import hashlib
import inspect
import threading
from typing import Any

import torch

from ..errors import InputError
from ..lang.kernel import Kernel
from .arguments import (check_arguments, check_coindexed, check_rank, check_same_device,
                        check_scalars, check_strides, copy_fix, padded_shape, split_scalars)
from .launch import gpu_call, launch

NAMESPACE = "ktile"
DEVICE_TYPES = ("cpu", "cuda")
ALIGNMENT = 16  # bytes: the widest vector load the tile headers issue

_OPS: dict[str, "TorchOp"] = {}   # "ktile::<name>" -> the op registered under it, this process
_LOCK = threading.Lock()


def torch_op(kernel: Kernel, *, name: str | None = None, constants: dict[str, Any] | None = None,
             target: str | None = None) -> "TorchOp":
    """Register `kernel` with these constants as `torch.ops.ktile.<name>` and return it, callable
    like the kernel: `op(a, b, out)`. Asking again for the same kernel and constants returns the
    same op."""
    if not isinstance(kernel, Kernel):
        raise InputError(f"torch_op takes an @hk.kernel, got {type(kernel).__name__}",
                         hint="decorate the function with @hk.kernel(grid=...) first")
    if constants is not None and not isinstance(constants, dict):
        raise InputError(f"constants must be a dict of the kernel's constants, got "
                         f"{type(constants).__name__} {constants!r}", kernel=kernel.name,
                         hint="ktile.torch_op(kernel, constants={'BLOCK': 64})")
    values = kernel.resolve_constants(dict(constants or {}))
    op_name = _checked_name(kernel, name) if name is not None else \
        _default_name(kernel, values, target)
    with _LOCK:
        existing = _OPS.get(f"{NAMESPACE}::{op_name}")
        if existing is not None:
            return existing.rebind(kernel, values, target)
        op = TorchOp(kernel, values, target, op_name)
        _OPS[op.name] = op
        return op


_is_compiling = torch.compiler.is_compiling
_dispatch_depth = getattr(torch._C, "_len_torch_dispatch_stack", lambda: 0)
_Tensor = torch.Tensor


def _plain_cuda(tensors) -> bool:
    """Real CUDA tensors (no subclass, no fake) and no dispatch mode: the call that may go
    straight to the kernel's launch. Written flat: it runs on every eager call."""
    for t in tensors:
        if type(t) is not _Tensor or not t.is_cuda:
            return False
    return not _dispatch_depth()


def _plain_eager(tensors) -> bool:
    """Real tensors (cpu or cuda, no subclass) and no dispatch mode active (fake tensors,
    tracing): such a call needs nothing from the dispatcher."""
    if any(type(t) is not torch.Tensor or t.device.type not in ("cpu", "cuda") for t in tensors):
        return False
    stack_depth = getattr(torch._C, "_len_torch_dispatch_stack", None)
    return stack_depth is None or stack_depth() == 0


class TorchOp:
    """One kernel, its bound constants and target, registered as a torch custom op."""

    def __init__(self, kernel: Kernel, constants: dict[str, Any], target: str | None,
                 op_name: str):
        self.name = f"{NAMESPACE}::{op_name}"
        self.constants = constants
        self.target = target
        self._bind(kernel)
        self._identity = _identity(kernel, constants, target)
        self._built_on: set[torch.device] = set()   # CUDA devices a call has already run on
        self.custom_op = _register(self)
        self.overload = getattr(getattr(torch.ops, NAMESPACE), op_name).default

    def __repr__(self) -> str:
        return f"<ktile torch op {self.name}: kernel {self.kernel.name} at {self.kernel.def_loc}>"

    def __call__(self, *tensors, **constants) -> None:
        if self.scalars:   # the tensors, then the scalars' values, as the kernel's call binds them
            tensors = self.kernel.bind_arguments(tensors, constants)
            return self._call_with_scalars(tensors, constants)
        if constants:
            raise InputError(f"op {self.name} got keyword arguments {sorted(constants)}; its "
                             f"constants were bound when it was made", kernel=self.kernel.name,
                             hint="make another op: ktile.torch_op(kernel, constants={...})")
        if len(tensors) != len(self.params):   # before anything reads tensors[0]
            check_arguments(self.kernel, tensors)
        if _is_compiling():  # compiled calls are checked by the fake impl
            return self.overload(*tensors)
        gpu = self._gpu
        if gpu is not None and _plain_cuda(tensors):
            # a repeated eager CUDA call: the kernel's own fast path, which rechecks everything
            # whenever the tensors' dtypes, shapes, strides or device differ from the last call
            return gpu.fast(tensors)
        if _plain_eager(tensors):
            return self._eager(tensors)
        check_call(self, tensors)
        return self.overload(*tensors)

    def _call_with_scalars(self, args: tuple, constants: dict) -> None:
        """`__call__` of a kernel with runtime scalars: `args` holds the tensors, then the
        scalars' values (checked by the launch, or by the fast path, at every call)."""
        if constants:
            raise InputError(f"op {self.name} got keyword arguments {sorted(constants)}; its "
                             f"constants were bound when it was made", kernel=self.kernel.name,
                             hint="make another op: ktile.torch_op(kernel, constants={...})")
        tensors = args[:len(self.params)]
        if _is_compiling():
            return self.overload(*args)
        gpu = self._gpu
        if gpu is not None and _plain_cuda(tensors):
            return gpu.fast(args)
        if _plain_eager(tensors):
            return self._eager(args)
        check_call(self, args)
        return self.overload(*args)

    def _eager(self, tensors: tuple) -> None:
        """Eager on real tensors: straight to the launch, skipping the dispatcher's ~40 us of
        Python (torch.compile, export, modes and opcheck still see the custom op). The first
        call on a device runs the op's own checks (and refuses a first call inside a CUDA-graph
        capture); later calls rely on the launch's (on the GPU they rerun whenever the tensors'
        dtypes, shapes, strides or device change), plus the layout checks on the CPU. After the
        first CUDA call, `__call__` hands plain CUDA tensors to the kernel's GpuCall directly."""
        device = tensors[0].device
        if device not in self._built_on:
            check_call(self, tensors)
            if device.type == "cuda":
                check_not_first_in_capture(self, device)
        launch(self.kernel, tensors, self.constants, self.target)
        self._built_on.add(device)
        if device.type == "cuda":
            self._gpu = gpu_call(self.kernel, self.target, self.constants)

    def _bind(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self._gpu = None   # the kernel's GpuCall, once an eager CUDA call has built it
        self.trace = kernel.trace(self.target, **self.constants)
        self.params, self.mutated = _schema(kernel, self.trace)
        self.scalars = tuple((s.name, s.dtype.kind) for s in kernel.scalars)

    def rebind(self, kernel: Kernel, constants: dict[str, Any], target: str | None) -> "TorchOp":
        """The op for a second request of its name: itself, following a redefinition of its
        kernel (a re-run notebook cell) when the schema is unchanged; torch cannot redefine an
        op's schema in a running process, so anything else is refused."""
        if _identity(kernel, constants, target) != self._identity:
            raise InputError(f"op name {self.name} is already taken by kernel "
                             f"'{self.kernel.name}' at {self.kernel.def_loc} with constants "
                             f"{self.constants} and target {self.target}", kernel=kernel.name,
                             hint="give this one its own name: ktile.torch_op(kernel, name=...)")
        if kernel is self.kernel:
            return self
        new_schema = _schema(kernel, kernel.trace(self.target, **self.constants))
        scalars = tuple((s.name, s.dtype.kind) for s in kernel.scalars)
        if new_schema != (self.params, self.mutated) or scalars != self.scalars:
            raise InputError(f"kernel '{kernel.name}' was redefined with other tensor parameters "
                             f"or outputs (params, written) {new_schema} than op {self.name} was "
                             f"registered with {(self.params, self.mutated)}", kernel=kernel.name,
                             hint="register the new definition under a new name: "
                                  "ktile.torch_op(kernel, name=...)")
        self._bind(kernel)
        return self

    # ---- what torch's dispatcher calls ---------------------------------------------------

    def run(self, *tensors: torch.Tensor) -> None:
        """The cpu and cuda implementation: layout checks, then the launch (which checks dtype,
        rank, device and shapes itself)."""
        check_layout(self, tensors)
        device = tensors[0].device
        if device.type == "cuda":
            check_not_first_in_capture(self, device)
        launch(self.kernel, tensors, self.constants, self.target)
        self._built_on.add(device)

    def fake(self, *tensors: torch.Tensor) -> None:
        """The fake (meta) implementation: symbolic checks, no work."""
        check_symbolic(self, tensors)


# ---- names -------------------------------------------------------------------------------

def _constants_key(values: dict[str, Any]) -> tuple:
    """As the trace cache keys constants: by repr, so 1 and 1.0 are different builds."""
    return tuple(sorted((k, repr(v)) for k, v in values.items()))


def _identity(kernel: Kernel, values: dict[str, Any], target: str | None) -> tuple:
    """What an op name stands for; the kernel is named by where it is defined, so a redefinition
    of the same function is the same op."""
    return (kernel.fn.__module__, kernel.fn.__qualname__, _constants_key(values), target)


def _default_name(kernel: Kernel, values: dict[str, Any], target: str | None) -> str:
    """The kernel's name for its default constants and target; otherwise a suffix hashed from the
    constants and target, the same in every process (compiled-graph caches key ops by name)."""
    defaults = {name: default for name, (_, default) in kernel.constexprs.items()}
    if target is None and _constants_key(values) == _constants_key(defaults):
        return kernel.name
    digest = hashlib.sha256(repr((_constants_key(values), target)).encode()).hexdigest()[:8]
    return f"{kernel.name}_{digest}"


def _checked_name(kernel: Kernel, name: str) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise InputError(f"op name {name!r} is not a Python identifier", kernel=kernel.name,
                         hint=f"the namespace is always '{NAMESPACE}'; pass only the name, "
                              f"e.g. name='{kernel.name}_fast'")
    return name


def _schema(kernel: Kernel, trace) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The op's arguments (the tensor parameters) and which of them it mutates."""
    params = tuple(p.name for p in kernel.params)
    return params, tuple(params[i] for i in trace.written_params)


def _register(op: TorchOp):
    def prototype(*tensors):
        pass
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    kinds = {"float": float, "int": int}
    prototype.__signature__ = inspect.Signature(  # what torch infers the schema from
        [*(inspect.Parameter(p, positional, annotation=torch.Tensor) for p in op.params),
         *(inspect.Parameter(name, positional, annotation=kinds[kind])
           for name, kind in op.scalars)],
        return_annotation=None)
    schema = torch.library.infer_schema(prototype, mutates_args=op.mutated)
    custom = torch.library.custom_op(op.name, op.run, mutates_args=op.mutated,
                                     device_types=DEVICE_TYPES, schema=schema)
    custom.register_fake(op.fake)
    return custom


# ---- checks ------------------------------------------------------------------------------

def check_call(op: TorchOp, tensors: tuple) -> None:
    """Everything, before the dispatcher is entered: an eager call's errors are ktile's."""
    for param, value in zip(op.params, tensors):
        if not isinstance(value, torch.Tensor):
            raise InputError(f"parameter '{param}' must be a torch.Tensor for op {op.name}, got "
                             f"{type(value).__name__}", kernel=op.kernel.name,
                             hint="torch.from_numpy(x), or call the kernel itself on numpy arrays")
    tensors, values = split_scalars(op.kernel, tensors)
    arguments = check_arguments(op.kernel, tensors)
    check_scalars(op.kernel, values)
    check_same_device(op.kernel, arguments)
    check_coindexed(op.kernel, op.trace, arguments)
    check_layout(op, tensors, arguments)


def check_layout(op: TorchOp, tensors: tuple, arguments: list | None = None) -> None:
    """What is checked on the real tensors of every call, eager or compiled (a compiled graph
    may hand the op tensors laid out otherwise than at tracing): the layouts, writability and
    aliasing a kernel call refuses (`arguments.check_strides`), and the address. `arguments`:
    the tensors as `check_arguments` gave them, where already checked."""
    tensors = split_scalars(op.kernel, tensors)[0]
    if arguments is None:
        arguments = check_arguments(op.kernel, tensors)
    check_strides(op.kernel, op.trace, arguments)
    for param, t in zip(op.params, tensors):
        written = param in op.mutated
        if t.device.type == "cuda" and t.data_ptr() % ALIGNMENT:
            raise InputError(f"parameter '{param}' starts {t.data_ptr() % ALIGNMENT} bytes past a "
                             f"{ALIGNMENT}-byte boundary; the kernel's vector loads need "
                             f"{ALIGNMENT}-byte aligned data", kernel=op.kernel.name,
                             hint=copy_fix(param, written, ".clone() (a fresh allocation)"))


def check_not_first_in_capture(op: TorchOp, device: torch.device) -> None:
    """The first call on a device builds and loads the kernel, which a CUDA graph capture
    cannot contain; later calls only launch."""
    if device in op._built_on or not torch.cuda.is_current_stream_capturing():
        return
    raise InputError(f"the first call of op {op.name} on {device} is inside a CUDA graph "
                     f"capture; building the kernel cannot be captured", kernel=op.kernel.name,
                     hint="call the op once before capturing (torch.cuda.graphs' warm-up on a "
                          "side stream does it)")


def check_symbolic(op: TorchOp, tensors: tuple) -> None:
    """dtype, rank, one device, and the shapes the kernel reads and writes at the same tile
    coordinates, on fake tensors whose sizes may be symbols: equalities are asserted, never
    specialised on."""
    tensors = split_scalars(op.kernel, tensors)[0]
    for param, t in zip(op.kernel.params, tensors):
        _check_dtype_and_rank(op, param, t)
    if len({t.device for t in tensors}) > 1:
        listed = ", ".join(f"'{p}' on {t.device}" for p, t in zip(op.params, tensors))
        raise InputError(f"tensors are on different devices: {listed}", kernel=op.kernel.name,
                         hint="move them to one device first")
    for group in op.trace.coindexed:
        _check_same_shape(op, tensors, group)


def _check_dtype_and_rank(op: TorchOp, param, t: torch.Tensor) -> None:
    """As `arguments.check_arguments` words them, without reading sizes as ints (which would
    specialise a compiled graph on them)."""
    want = getattr(torch, param.spec.dtype.torch_name)
    if t.dtype != want:
        raise InputError(f"parameter '{param.name}' must hold {param.spec.dtype!r} elements, got "
                         f"{str(t.dtype).removeprefix('torch.')}", kernel=op.kernel.name,
                         hint=f"convert it: x.to({want})")
    check_rank(op.kernel, param.name, t.dim())


def _check_same_shape(op: TorchOp, tensors: tuple, group: tuple[int, ...]) -> None:
    from torch.fx.experimental.symbolic_shapes import expect_true
    first = tensors[group[0]]
    for k in group[1:]:
        other = tensors[k]
        # compared as the kernel sees them: (R, C) and (1, R, C) agree
        if all(expect_true(a == b) for a, b in zip(padded_shape(tuple(first.shape)),
                                                   padded_shape(tuple(other.shape)))):
            continue
        raise InputError(f"parameters '{op.params[group[0]]}' {tuple(first.shape)} and "
                         f"'{op.params[k]}' {tuple(other.shape)} are used at the same tile "
                         f"coordinates but differ in shape", kernel=op.kernel.name,
                         hint="pass tensors of the same shape")
