"""The HIP loader: an AMDGPU code object loaded with HIP's module API (ctypes on
libamdhip64.so, no other dependency) on a device of a ROCm torch, and launched on torch's
current stream.

    kernel = load(build, device_index)
    kernel.launch((gx, gy, gz), stream, params.pointers)      # or, per call signature:
    launch = kernel.bind((gx, gy, gz), params.pointers); launch()

The arguments are the CUDA loader's (`packing.KernelParams`: one 72-byte `kt::gl` per
parameter, passed as a `void**`); hipModuleLaunchKernel copies them into the kernarg segment at
the offsets the code object's metadata gives, which are those of the kernel's C++ signature.
HIP has no contexts to push: a module is loaded on the current device, so loading and a launch
from a thread whose current device is another one set the device around the call. HIP ignores
the dynamic-LDS function attribute CUDA needs above 48 KiB, so none is set. Every hipError_t
is checked; a failure names the HIP call and the error.

Never run on hardware: there is no AMD GPU where ktile is developed. Its calls and their
argument marshalling are tested against a stand-in libamdhip64 (tests/tier0/test_runtime_hip.py);
docs/amd.md says what that does and does not show.
"""
from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from ctypes import POINTER, byref, c_char_p, c_int, c_uint, c_void_p
from pathlib import Path

from ...errors import KernelError
from .cuda import device_count, device_getter, stream_getter   # torch.cuda is HIP's too

MAX_GRID = (2**31 - 1, 65535, 65535)     # blocks per grid dimension (x, y, z), as on CUDA
MAX_WORK_ITEMS = 2**32 - 1                # an HSA dispatch counts work-items in 32 bits
LIBRARY_NAMES = ("libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6")

_SIGNATURES = {   # name: (argument types, result type)
    "hipInit": ((c_uint,), c_int),
    "hipGetDevice": ((POINTER(c_int),), c_int),
    "hipSetDevice": ((c_int,), c_int),
    "hipModuleLoadData": ((POINTER(c_void_p), c_char_p), c_int),
    "hipModuleGetFunction": ((POINTER(c_void_p), c_void_p, c_char_p), c_int),
    "hipModuleLaunchKernel": ((c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
                               c_void_p, POINTER(c_void_p), POINTER(c_void_p)), c_int),
    "hipGetErrorName": ((c_int,), c_char_p),
    "hipGetErrorString": ((c_int,), c_char_p),
}


class Runtime:
    """libamdhip64's functions, typed once."""

    def __init__(self, lib) -> None:
        for name, (argtypes, restype) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, restype
            setattr(self, name, fn)
        self.untyped_launch = lib["hipModuleLaunchKernel"]   # a second handle: no argtypes
        self.untyped_launch.restype = c_int
        self.check(self.hipInit(0), "hipInit")

    def check(self, result: int, call: str, kernel: str | None = None) -> None:
        if result != 0:
            raise KernelError(f"{call} failed: {self.describe(result)}", kernel=kernel)

    def describe(self, result: int) -> str:
        name = (self.hipGetErrorName(result) or b"hipError").decode()
        text = (self.hipGetErrorString(result) or b"").decode()
        return f"{name} ({result}): {text}" if text else f"{name} ({result})"

    def current_device(self) -> int:
        device = c_int()
        self.check(self.hipGetDevice(byref(device)), "hipGetDevice")
        return device.value


def open_library():
    """torch's own libamdhip64 when it ships one (one HIP runtime per process: a module loaded
    in another copy could not run on torch's streams), else the system's."""
    errors = []
    for candidate in (*_torch_libraries(), *LIBRARY_NAMES):
        try:
            return ctypes.CDLL(candidate)
        except OSError as exc:
            errors.append(str(exc))
    raise KernelError(f"the HIP runtime library libamdhip64 cannot be loaded ({errors[-1]})",
                      hint="run on a ROCm install with a ROCm build of torch, or run the kernel "
                           "on the interpreter (k.interpret(...))")


def _torch_libraries() -> list[str]:
    try:
        import torch
    except ImportError:
        return []
    return [str(p) for p in sorted((Path(torch.__file__).parent / "lib").glob("libamdhip64.so*"))]


@functools.lru_cache(maxsize=None)
def runtime() -> Runtime:
    return Runtime(open_library())


class HipKernel:
    """One kernel function loaded on one device."""

    def __init__(self, code: bytes, name: str, device_index: int, *, threads: int,
                 shared_bytes: int, hip: Runtime | None = None):
        self.name = name
        self.device_index = device_index
        self.threads = threads
        self.shared_bytes = shared_bytes
        self._hip = hip or runtime()
        self._code = code        # kept alive with the module loaded from it
        with self.on_device():
            self.module, self.function = self._load(code)

    def _load(self, code: bytes) -> tuple[int, int]:
        hip, module, function = self._hip, c_void_p(), c_void_p()
        hip.check(hip.hipModuleLoadData(byref(module), code), "hipModuleLoadData", self.name)
        hip.check(hip.hipModuleGetFunction(byref(function), module, self.name.encode()),
                  f"hipModuleGetFunction('{self.name}')", self.name)
        return module.value, function.value

    def on_device(self) -> "_OnDevice":
        """A context manager making this kernel's device the current one on this thread."""
        return _OnDevice(self._hip, self.device_index)

    def bind(self, grid: tuple[int, int, int], params) -> Callable[[], None]:
        """`launch()`: this kernel on `grid` with `params` (a void* array, rewritten between
        calls), on torch's current stream of its device. Made once per call signature and lean,
        as the CUDA loader's: the HIP function is called without declared argument types."""
        self._check_work_items(grid)
        raw, function = self._hip.untyped_launch, c_void_p(self.function)
        gx, gy, gz = grid
        threads, shared, index = self.threads, self.shared_bytes, self.device_index
        stream_of, current_device = stream_getter(), device_getter()
        several_devices = device_count() > 1

        def launch() -> None:
            stream = stream_of(index)
            if several_devices and current_device() != index:
                return self.launch_elsewhere(grid, stream, params)
            result = raw(function, gx, gy, gz, threads, 1, 1, shared, c_void_p(stream), params,
                         None)
            if result:
                self._hip.check(result, self._describe_launch(grid), self.name)
        return launch

    def launch(self, grid: tuple[int, int, int], stream: int, params) -> None:
        """Launch on `stream` with `params` (a void* array) from a thread whose current device
        is this kernel's."""
        self._check_work_items(grid)
        result = self._hip.hipModuleLaunchKernel(self.function, grid[0], grid[1], grid[2],
                                                 self.threads, 1, 1, self.shared_bytes, stream,
                                                 params, None)
        self._hip.check(result, self._describe_launch(grid), self.name)

    def launch_elsewhere(self, grid: tuple[int, int, int], stream: int, params) -> None:
        """Launch with this kernel's device made current for the call."""
        with self.on_device():
            self.launch(grid, stream, params)

    def _check_work_items(self, grid: tuple[int, int, int]) -> None:
        for axis, count, threads in zip("xyz", grid, (self.threads, 1, 1)):
            if count * threads > MAX_WORK_ITEMS:
                raise KernelError(f"the grid has {count} blocks of {threads} threads along "
                                  f"{axis}: {count * threads} work-items, over the "
                                  f"{MAX_WORK_ITEMS} one HIP dispatch holds", kernel=self.name,
                                  hint="give each block more work, or split the launch")

    def _describe_launch(self, grid) -> str:
        return (f"hipModuleLaunchKernel(grid {grid}, block {self.threads}, {self.shared_bytes} "
                f"bytes of dynamic LDS)")


class _OnDevice:
    def __init__(self, hip: Runtime, index: int):
        self.hip, self.index, self.previous = hip, index, None

    def __enter__(self):
        self.previous = self.hip.current_device()
        if self.previous != self.index:
            self.hip.check(self.hip.hipSetDevice(self.index), f"hipSetDevice({self.index})")

    def __exit__(self, *exc):
        if self.previous != self.index:
            self.hip.check(self.hip.hipSetDevice(self.previous), f"hipSetDevice({self.previous})")


def load(build, device_index: int) -> HipKernel:
    """A Build's code object loaded on torch's device `device_index`."""
    return HipKernel(build.code, build.kernel, device_index, threads=build.threads,
                     shared_bytes=build.lds_bytes)
