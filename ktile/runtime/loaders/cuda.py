"""The CUDA loader: a cubin loaded with the driver API (ctypes on libcuda.so.1, no other
dependency) into torch's primary context of a device, and launched on torch's current stream.

    kernel = load(build, device_index)
    kernel.launch((gx, gy, gz), stream, params.pointers)      # or, per call signature:
    launch = kernel.bind((gx, gy, gz), params.pointers); launch()

Every CUresult is checked; a failure names the driver call and the CUDA error.
"""
from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from ctypes import POINTER, byref, c_char_p, c_int, c_uint, c_void_p

from ...errors import KernelError

MAX_GRID = (2**31 - 1, 65535, 65535)     # blocks per grid dimension (x, y, z)
DEFAULT_SHARED = 48 * 1024                # static + dynamic above this needs the attribute below
CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1     # the function's static shared memory
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CUDA_ERROR_INVALID_CONTEXT = 201
TENSOR_MAP_L2_PROMOTION_256B = 3          # CUtensorMapL2promotion: whole 256-byte L2 lines

_SIGNATURES = {
    "cuInit": (c_uint,),
    "cuDeviceGet": (POINTER(c_int), c_int),
    "cuDevicePrimaryCtxRetain": (POINTER(c_void_p), c_int),
    "cuCtxPushCurrent_v2": (c_void_p,),
    "cuCtxPopCurrent_v2": (POINTER(c_void_p),),
    "cuModuleLoadData": (POINTER(c_void_p), c_char_p),
    "cuModuleGetFunction": (POINTER(c_void_p), c_void_p, c_char_p),
    "cuFuncSetAttribute": (c_void_p, c_int, c_int),
    "cuFuncGetAttribute": (POINTER(c_int), c_int, c_void_p),
    "cuLaunchKernel": (c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
                       c_void_p, POINTER(c_void_p), POINTER(c_void_p)),
    "cuTensorMapEncodeTiled": (c_void_p, c_int, c_uint, c_void_p, POINTER(ctypes.c_uint64),
                               POINTER(ctypes.c_uint64), POINTER(c_uint), POINTER(c_uint),
                               c_int, c_int, c_int, c_int),
    "cuGetErrorName": (c_int, POINTER(c_char_p)),
    "cuGetErrorString": (c_int, POINTER(c_char_p)),
}


class Driver:
    """libcuda's functions, typed once."""

    def __init__(self) -> None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise KernelError(f"the CUDA driver library libcuda.so.1 cannot be loaded ({exc})",
                              hint="install the NVIDIA driver, or run on the interpreter "
                                   "(k.interpret(...))") from exc
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, c_int
            setattr(self, name, fn)
        self.untyped_launch = lib["cuLaunchKernel"]   # a second handle: no argtypes
        self.untyped_launch.restype = c_int

    def check(self, result: int, call: str, kernel: str | None = None) -> None:
        if result != 0:
            raise KernelError(f"{call} failed: {self.describe(result)}", kernel=kernel)

    def describe(self, result: int) -> str:
        name, text = c_char_p(), c_char_p()
        self.cuGetErrorName(result, byref(name))
        self.cuGetErrorString(result, byref(text))
        shown = (name.value or b"CUDA error").decode()
        detail = (text.value or b"").decode()
        return f"{shown} ({result}): {detail}" if detail else f"{shown} ({result})"


@functools.lru_cache(maxsize=None)
def driver() -> Driver:
    return Driver()


@functools.lru_cache(maxsize=None)
def primary_context(device_index: int) -> int:
    """torch's context on the device (the primary context), retained for the process."""
    import torch
    torch.cuda.init()
    lib = driver()
    device, context = c_int(), c_void_p()
    lib.check(lib.cuDeviceGet(byref(device), device_index), "cuDeviceGet")
    lib.check(lib.cuDevicePrimaryCtxRetain(byref(context), device), "cuDevicePrimaryCtxRetain")
    return context.value


class CudaKernel:
    """One kernel function loaded on one device."""

    def __init__(self, code: bytes, name: str, device_index: int, *, threads: int,
                 shared_bytes: int):
        self.name = name
        self.device_index = device_index
        self.threads = threads
        self.shared_bytes = shared_bytes
        self.context = primary_context(device_index)
        self._lib = driver()
        self._launch = self._lib.cuLaunchKernel
        with self.current():
            self.function = self._load(code)

    def _load(self, code: bytes) -> int:
        lib, module, function = self._lib, c_void_p(), c_void_p()
        lib.check(lib.cuModuleLoadData(byref(module), code), "cuModuleLoadData", self.name)
        lib.check(lib.cuModuleGetFunction(byref(function), module, self.name.encode()),
                  f"cuModuleGetFunction('{self.name}')", self.name)
        static = c_int()
        lib.check(lib.cuFuncGetAttribute(byref(static), CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                         function), "cuFuncGetAttribute(SHARED_SIZE_BYTES)",
                  self.name)
        # the 48 KiB a launch may use without opting in counts static and dynamic together
        if static.value + self.shared_bytes > DEFAULT_SHARED:
            lib.check(lib.cuFuncSetAttribute(function,
                                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             self.shared_bytes),
                      f"cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, {self.shared_bytes})",
                      self.name)
        return function.value

    def current(self) -> "_Pushed":
        """A context manager making this device's context current on this thread."""
        return _Pushed(self._lib, self.context)

    def bind(self, grid: tuple[int, int, int], params) -> Callable[[], None]:
        """`launch()`: this kernel on `grid` with `params` (a void* array, rewritten between
        calls), on torch's current stream of its device. Made once per call signature, run on
        every call, so it is lean: the driver function is called without declared argument
        types (ctypes passes prepared objects and small ints faster than it checks types)."""
        raw, function = self._lib.untyped_launch, c_void_p(self.function)
        gx, gy, gz = grid
        threads, shared, index = self.threads, self.shared_bytes, self.device_index
        stream_of, current_device = stream_getter(), device_getter()

        def launch() -> None:
            stream = stream_of(index)
            if current_device() != index:
                return self.launch_elsewhere(grid, stream, params)
            result = raw(function, gx, gy, gz, threads, 1, 1, shared, c_void_p(stream), params,
                         None)
            if result:
                self._failed(result, grid, stream, params)

        def launch_on_the_only_device() -> None:
            stream = stream_of(index)
            result = raw(function, gx, gy, gz, threads, 1, 1, shared, c_void_p(stream), params,
                         None)
            if result:
                self._failed(result, grid, stream, params)
        return launch if device_count() > 1 else launch_on_the_only_device

    def launch(self, grid: tuple[int, int, int], stream: int, params) -> None:
        """Launch on `stream` with `params` (a void* array) from a thread where this device
        is torch's current one."""
        result = self._launch(self.function, grid[0], grid[1], grid[2], self.threads, 1, 1,
                              self.shared_bytes, stream, params, None)
        if result:
            self._failed(result, grid, stream, params)

    def _failed(self, result: int, grid, stream: int, params) -> None:
        if result == CUDA_ERROR_INVALID_CONTEXT:   # a thread that never made a context current
            return self.launch_elsewhere(grid, stream, params)
        self._lib.check(result, self._describe_launch(grid), self.name)

    def launch_elsewhere(self, grid: tuple[int, int, int], stream: int, params) -> None:
        """Launch with this device's context pushed for the call (another device is current)."""
        with self.current():
            result = self._launch(self.function, grid[0], grid[1], grid[2], self.threads, 1, 1,
                                  self.shared_bytes, stream, params, None)
        self._lib.check(result, self._describe_launch(grid), self.name)

    def _describe_launch(self, grid) -> str:
        return (f"cuLaunchKernel(grid {grid}, block {self.threads}, {self.shared_bytes} bytes "
                f"of dynamic shared memory)")


class _Pushed:
    def __init__(self, lib: Driver, context: int):
        self.lib, self.context = lib, context

    def __enter__(self):
        self.lib.check(self.lib.cuCtxPushCurrent_v2(self.context), "cuCtxPushCurrent")

    def __exit__(self, *exc):
        popped = c_void_p()
        self.lib.check(self.lib.cuCtxPopCurrent_v2(byref(popped)), "cuCtxPopCurrent")


def load(build, device_index: int) -> CudaKernel:
    """A Build's cubin loaded on torch's device `device_index`."""
    return CudaKernel(build.code, build.kernel, device_index, threads=build.threads,
                      shared_bytes=build.lds_bytes)


def encode_tensor_map(out: int, data_type: int, address: int, dims, strides, box,
                      swizzle: int) -> int:
    """cuTensorMapEncodeTiled into the 64-byte aligned 128 bytes at `out`: a rank-4 tiled map
    (dims and box innermost first, byte strides of the outer three), no interleave,
    out-of-bounds elements zero-filled. Returns the CUresult (0: encoded)."""
    u64, u32 = ctypes.c_uint64, c_uint
    return driver().cuTensorMapEncodeTiled(
        out, data_type, len(dims), address, (u64 * len(dims))(*dims),
        (u64 * len(strides))(*strides), (u32 * len(box))(*box), (u32 * len(box))(*[1] * len(box)),
        0, swizzle, TENSOR_MAP_L2_PROMOTION_256B, 0)


def describe_result(result: int) -> str:
    return driver().describe(result)


def current_stream(device_index: int) -> int:
    """The raw handle of torch's current stream on the device."""
    import torch
    return torch.cuda.current_stream(device_index).cuda_stream


def stream_getter():
    """A fast `device_index -> raw stream` function (torch's private one when present)."""
    import torch
    return getattr(torch._C, "_cuda_getCurrentRawStream", None) or current_stream


def device_count() -> int:
    import torch
    return torch.cuda.device_count()


def device_getter():
    """A fast `() -> torch's current device index` function."""
    import torch
    return getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
