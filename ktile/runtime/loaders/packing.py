"""Kernel arguments as the code object takes them, shared by the CUDA and HIP loaders.

Each `kt::gl<T>` crosses the kernel boundary by value (docs/cpp-api.md, *Types*):

    struct gl { T* data; int64_t extent[4]; int64_t stride[4]; };   // 72 bytes, 8-aligned

extents (batch, depth, rows, cols), strides in elements. A runtime scalar crosses by value as
its C++ type (`float`, `int32_t`: 4 bytes). The launch APIs take the arguments
as an array of pointers, one per parameter, each to that parameter's bytes: `KernelParams`
keeps the structs and that array allocated once, so a launch only rewrites data pointers.
"""
from __future__ import annotations

import ctypes
from collections.abc import Sequence

RANK = 4


class GlobalArg(ctypes.Structure):
    """The bytes of one `kt::gl<T>`: the same for every T."""
    _fields_ = [("data", ctypes.c_void_p),
                ("extent", ctypes.c_int64 * RANK),
                ("stride", ctypes.c_int64 * RANK)]


GLOBAL_ARG_BYTES = 72
assert ctypes.sizeof(GlobalArg) == GLOBAL_ARG_BYTES and ctypes.alignment(GlobalArg) == 8


def set_global(arg: GlobalArg, data: int, shape: Sequence[int], stride: Sequence[int]) -> None:
    arg.data = data
    arg.extent[:] = [int(s) for s in shape]
    arg.stride[:] = [int(s) for s in stride]


def pack_global(data: int, shape: Sequence[int], stride: Sequence[int]) -> bytes:
    """The 72 bytes of one global, as the kernel reads them."""
    arg = GlobalArg()
    set_global(arg, data, shape, stride)
    return ctypes.string_at(ctypes.addressof(arg), GLOBAL_ARG_BYTES)


# a runtime scalar's dtype kind → the C type the kernel takes it as
SCALAR_CTYPES = {"float": ctypes.c_float, "int": ctypes.c_int32}


class KernelParams:
    """The parameter block of a kernel taking `count` globals, then one runtime scalar of each
    kind in `scalars` ("float": f32, "int": i32; their values are set per call), then `maps`
    tensor maps (TMA copies on sm_90a: their addresses are set per call,
    `ktile/runtime/tensor_maps.py`), the order of the generated kernel's parameters:
    `pointers` is the `void**` that cuLaunchKernel / hipModuleLaunchKernel take."""

    def __init__(self, count: int, maps: int = 0, scalars: Sequence[str] = ()):
        self.globals = [GlobalArg() for _ in range(count)]
        self.scalars = [SCALAR_CTYPES[kind]() for kind in scalars]
        self.pointers = (ctypes.c_void_p * (count + len(self.scalars) + maps))(
            *(ctypes.addressof(g) for g in self.globals),
            *(ctypes.addressof(v) for v in self.scalars))

    def set_layout(self, shapes: Sequence[Sequence[int]], strides: Sequence[Sequence[int]]) -> None:
        """Extents and strides: set when the call's signature changes."""
        for arg, shape, stride in zip(self.globals, shapes, strides):
            arg.extent[:] = [int(s) for s in shape]
            arg.stride[:] = [int(s) for s in stride]

    def set_data(self, pointers: Sequence[int]) -> None:
        for arg, pointer in zip(self.globals, pointers):
            arg.data = pointer

    def set_scalars(self, values: Sequence[int | float]) -> None:
        """Each runtime scalar's value (checked: an int in i32's range, a float rounded to
        f32 on the way in)."""
        for arg, value in zip(self.scalars, values):
            arg.value = value

    def as_bytes(self, index: int) -> bytes:
        return ctypes.string_at(ctypes.addressof(self.globals[index]), GLOBAL_ARG_BYTES)

    @classmethod
    def from_tensors(cls, tensors) -> "KernelParams":
        """Parameters of torch tensors: data_ptr, shape, stride (in elements)."""
        params = cls(len(tensors))
        params.set_layout([t.shape for t in tensors], [t.stride() for t in tensors])
        params.set_data([t.data_ptr() for t in tensors])
        return params
