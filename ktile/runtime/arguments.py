"""Checking a kernel call's tensors before anything runs, and moving them to and from the
interpreter's numpy carriers.

Every refusal names the parameter, says what is wrong and how to fix it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..dtypes import DType
from ..errors import InputError

_NUMPY_DTYPES = {"float32": "fp32", "float16": "fp16", "int32": "i32", "int8": "i8"}


@dataclass
class Argument:
    """One tensor argument: what the user passed and what the kernel sees."""
    name: str
    value: Any
    dtype: DType
    shape: tuple[int, int, int, int]
    is_torch: bool

    @property
    def device(self) -> str:
        return str(self.value.device) if self.is_torch else "cpu"


def _is_torch(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "dtype") and \
        hasattr(value, "device")


def _is_numpy(value: Any) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "dtype") and hasattr(value, "shape")


def check_arguments(kernel, args: tuple) -> list[Argument]:
    params = kernel.params
    if len(args) != len(params):
        names = ", ".join(p.name for p in params)
        raise InputError(f"takes {len(params)} tensors ({names}), got {len(args)}",
                         kernel=kernel.name, hint=f"call {kernel.name}({names}); constants go "
                                                  f"by keyword")
    return [_check_one(kernel, p, value) for p, value in zip(params, args)]


def _check_one(kernel, param, value) -> Argument:
    want = param.spec.dtype
    if _is_torch(value):
        got = str(value.dtype).removeprefix("torch.")
        is_torch = True
    elif _is_numpy(value):
        got = _NUMPY_DTYPES.get(str(value.dtype), str(value.dtype))
        if want.name == "bf16" and got != "bf16":
            raise InputError(f"parameter '{param.name}' is bf16, which numpy has no dtype for",
                             kernel=kernel.name, hint="pass a torch.bfloat16 tensor")
        is_torch = False
    else:
        raise InputError(f"parameter '{param.name}' must be a tensor (torch.Tensor or numpy "
                         f"array), got {type(value).__name__}", kernel=kernel.name)
    matches = got == want.torch_name if is_torch else got == want.name
    if not matches:
        raise InputError(f"parameter '{param.name}' must hold {want!r} elements, got {got}",
                         kernel=kernel.name,
                         hint=f"convert it: x.to(torch.{want.torch_name})" if is_torch else
                         f"convert it to {want.name}")
    shape = tuple(int(s) for s in value.shape)
    if len(shape) != 4:
        raise InputError(f"parameter '{param.name}' must be 4-D (batch, depth, rows, cols), got "
                         f"shape {shape}", kernel=kernel.name,
                         hint="view it as 4-D, e.g. x.reshape(1, 1, rows, cols) or x[None, None]")
    if any(s == 0 for s in shape):
        raise InputError(f"parameter '{param.name}' is empty (shape {shape})", kernel=kernel.name,
                         hint="skip the call for empty tensors")
    return Argument(param.name, value, want, shape, is_torch)  # type: ignore[arg-type]


def check_coindexed(kernel, trace, arguments: list[Argument]) -> None:
    """Tensors the kernel reads and writes at the same tile coordinates must agree in shape."""
    for group in trace.coindexed:
        first = arguments[group[0]]
        for k in group[1:]:
            other = arguments[k]
            if other.shape != first.shape:
                raise InputError(
                    f"parameters '{first.name}' {first.shape} and '{other.name}' {other.shape} "
                    f"are used at the same tile coordinates but differ in shape",
                    kernel=kernel.name, hint="pass tensors of the same shape")


class _Shape:
    """What a requirement reads of a tensor parameter: its four extents."""
    __slots__ = ("batch", "depth", "rows", "cols", "shape")

    def __init__(self, shape: tuple[int, int, int, int]):
        self.shape = shape
        self.batch, self.depth, self.rows, self.cols = shape


class _Call:
    """`p` of a requirement: each tensor parameter's extents and each constant, by name."""

    def __init__(self, constants: dict[str, Any], arguments: list[Argument]):
        self.__dict__.update(constants)
        self.__dict__.update({a.name: _Shape(a.shape) for a in arguments})


def check_requirements(kernel, constants: dict[str, Any], arguments: list[Argument]) -> None:
    """The kernel's own preconditions (`@hk.kernel(requires=[(predicate, message)])`), each
    a function of the call's shapes and constants, as the grid function is; a call that does
    not meet one is refused, with the author's message and the values it read. `constants`:
    all of the kernel's, defaults included (`trace.constants`)."""
    if not kernel.requires:
        return
    p = _Call(constants, arguments)
    for predicate, message in kernel.requires:
        if not predicate(p):
            shapes = ", ".join(f"{a.name} {a.shape}" for a in arguments)
            values = ", ".join(f"{k}={v!r}" for k, v in constants.items())
            raise InputError(f"this call does not meet the kernel's requirement: {message} "
                             f"(shapes: {shapes}; constants: {values or 'none'})",
                             kernel=kernel.name, loc=kernel.def_loc,
                             hint="change the call (or its constants) to meet it")


def check_same_device(kernel, arguments: list[Argument]) -> str:
    devices = {a.device for a in arguments}
    if len(devices) > 1:
        listed = ", ".join(f"'{a.name}' on {a.device}" for a in arguments)
        raise InputError(f"tensors are on different devices: {listed}", kernel=kernel.name,
                         hint="move them to one device first")
    return devices.pop()


DIMENSIONS = ("batch", "depth", "row", "column")


def check_index_limit(kernel, target, arguments: list[Argument],
                      strides: list[tuple[int, ...]]) -> None:
    """Every extent, and the row and column strides in elements and in bytes, below the
    target's `global_index_limit` (AMD: 32-bit buffer offsets). Batch and depth strides are
    not limited: the kernel adds them to the 64-bit base address."""
    limit = target.global_index_limit
    if not limit:
        return
    for arg, stride in zip(arguments, strides):
        for dim, extent in enumerate(arg.shape):
            if extent >= limit:
                raise InputError(
                    f"parameter '{arg.name}' has {extent} entries along its {DIMENSIONS[dim]} "
                    f"dimension (shape {arg.shape}); {target.name} kernels index a global with "
                    f"32-bit offsets, so each extent must be below {limit}", kernel=kernel.name,
                    hint=f"split the call: views of fewer than {limit} entries along that "
                         f"dimension ({arg.name}.narrow({dim}, start, length)), one call each")
        for dim in (2, 3):
            _check_stride(kernel, target, arg, dim, stride[dim], limit)


def _check_stride(kernel, target, arg: Argument, dim: int, stride: int, limit: int) -> None:
    size = max(arg.dtype.bits // 8, 1)
    if abs(stride) * size < limit:
        return
    raise InputError(
        f"parameter '{arg.name}' has a {DIMENSIONS[dim]} stride of {stride} elements "
        f"({stride * size} bytes); {target.name} kernels reach a tile's elements through "
        f"32-bit byte offsets from its first one, so row and column strides must be below "
        f"{limit} bytes", kernel=kernel.name,
        hint=f"pass a copy whose rows are closer: narrow {arg.name} to the part the kernel "
             f"needs and make it contiguous (.contiguous()); for a tensor the kernel writes, "
             f"compute into such a copy and copy it back")


def kernel_strides(argument) -> tuple[int, ...]:
    """The tensor's strides in elements; a dimension of extent 1 is never stepped along, so
    its stride is given as 1 whatever torch says."""
    stride = argument.value.stride()
    return tuple(1 if extent == 1 else s for extent, s in zip(argument.shape, stride))


def check_strides(kernel, trace, arguments) -> None:
    """Each row one contiguous run (last stride 1), and no written tensor whose elements share
    memory: what the tile headers' loads and stores assume, for a GPU call or its emulation."""
    written = set(trace.written_params)
    for index, arg in enumerate(arguments):
        stride = kernel_strides(arg)
        if stride[-1] != 1:
            raise InputError(f"parameter '{arg.name}' has stride {stride[-1]} in its last "
                             f"dimension (strides {tuple(arg.value.stride())}); the kernel reads "
                             f"each row as one contiguous run", kernel=kernel.name,
                             hint=copy_fix(arg.name, index in written, ".contiguous()"))
        if index in written and 0 in stride:
            raise InputError(f"parameter '{arg.name}' is written but several of its elements share "
                             f"memory (strides {tuple(arg.value.stride())}: expanded or broadcast)",
                             kernel=kernel.name, hint=copy_fix(arg.name, True, ".contiguous()"))


def copy_fix(name: str, written: bool, copy: str) -> str:
    """A copy of an input fixes its layout; a copy of an output would get the result instead."""
    if written:
        return (f"'{name}' is written: pass a freshly allocated output (torch.empty(...)) and "
                f"copy it into the view afterwards")
    return f"pass {name}{copy}"


def to_carrier(arg: Argument):
    """The value as the interpreter holds it: float32 for float types, int32/int8 for ints."""
    import numpy as np
    if arg.is_torch:
        import torch
        t = arg.value.detach().to("cpu")
        t = t.to(torch.float32) if arg.dtype.is_float else t
        return np.ascontiguousarray(t.numpy()).copy()
    value = arg.value
    return np.ascontiguousarray(value.astype(np.float32) if arg.dtype.is_float else value).copy()


def from_carrier(arg: Argument, carrier) -> None:
    """Write the interpreter's result back into the user's tensor, in place."""
    if arg.is_torch:
        import torch
        arg.value.copy_(torch.from_numpy(carrier).to(arg.value.dtype))
        return
    arg.value[...] = carrier.astype(arg.value.dtype)
