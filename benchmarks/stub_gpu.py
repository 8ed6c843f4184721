"""The GPU call path on the CPU, with the launch stubbed: what `op_overhead.py --stub gpucall`
measures.

    with stubbed_gpu() as runner:
        _library._RUNNER.append(runner)

Inside the block an op's kernel call goes through the `gpu.GpuCall` its kernel, target and
constants would take on a GPU (as `launch.launch` keeps them), on CPU tensors standing in for
CUDA ones: an H200 as the device (sm_90a), a loader whose launch does nothing, a tensor-map
encoder that writes no map, and no build. So every host step of a GPU call runs (signature,
checks, trace, grid, parameter block, tensor maps, fast path), and nothing else.
"""
from __future__ import annotations

import contextlib
import sys
import types


class _Loaded:
    """A loaded kernel whose launch does nothing."""

    def bind(self, grid, pointers):
        return lambda: None


def _loader() -> types.ModuleType:
    loader = types.ModuleType("ktile_stub_loader")
    loader.MAX_GRID = (2**31 - 1, 65535, 65535)
    loader.load = lambda built, index: _Loaded()
    loader.encode_tensor_map = lambda out, data_type, address, dims, strides, box, swizzle: 0
    loader.describe_result = lambda result: f"CUresult {result}"
    return loader


@contextlib.contextmanager
def stubbed_gpu():
    """Yields a runner for `ktile.ops._library._RUNNER` that calls kernels through stubbed
    GpuCalls; restores the runtime's loader, device and build on exit."""
    from ktile.runtime import build
    from ktile.runtime import gpu
    from ktile.runtime.devices import Device

    saved = (dict(gpu.LOADERS), gpu.device, build.build_trace, dict(gpu._LOADED))
    sys.modules["ktile_stub_loader"] = _loader()
    gpu.LOADERS["nvidia"] = "ktile_stub_loader"
    gpu.device = lambda index: Device(index, "nvidia", "9.0", "stub H200")
    build.build_trace = lambda trace: None
    gpu._LOADED.clear()
    calls: dict[tuple, gpu.GpuCall] = {}

    def runner(kernel, *args, target=None, **constants):
        args = kernel.bind_arguments(args, constants)   # takes the scalars out of constants
        key = (kernel, target, tuple(constants.items()))
        call = calls.get(key)
        if call is None:
            call = calls[key] = gpu.GpuCall(kernel, target, constants)
        return call.fast(args)

    try:
        yield runner
    finally:
        gpu.LOADERS.clear()
        gpu.LOADERS.update(saved[0])
        gpu.device, build.build_trace = saved[1], saved[2]
        gpu._LOADED.clear()
        gpu._LOADED.update(saved[3])
        sys.modules.pop("ktile_stub_loader", None)
