"""The GPU call path on the CPU, with the launch stubbed: what `op_overhead.py --stub gpucall`
measures.

    with stubbed_gpu() as runner:
        _library._RUNNER.append(runner)

Inside the block an op's kernel call goes through the `gpu.GpuCall` its kernel, target and
constants would take on a GPU (as `launch.launch` keeps them), on CPU tensors standing in for
CUDA ones: an H200 as the device (sm_90a), a loader whose launch does nothing, a tensor-map
encoder that writes no map, and no build. So every host step of a GPU call runs (signature,
checks, trace, grid, parameter block, tensor maps, fast path), and nothing else.

    python3 benchmarks/stub_gpu.py        # one GpuCall alone: steady and alternating shapes

prints the least over 15 repeats of the mean microseconds per `call.fast` of 400 calls, for one
signature and for 1, 2 and 3 alternating row counts of an elementwise add.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ktile as hk  # noqa: E402 - after the repository is on the path


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


def _alternating(call, shapes: list[tuple[int, int]]) -> float:
    """Microseconds per `call.fast` of 400 calls cycling through fresh tensors of `shapes`."""
    import torch
    sets = [tuple(torch.zeros(shape, dtype=torch.bfloat16) for _ in range(3)) for shape in shapes]
    for args in sets * 2:
        call.fast(args)
    sequence = [sets[i % len(sets)] for i in range(400)]
    best = float("inf")
    for _ in range(15):
        t0 = time.perf_counter()
        for args in sequence:
            call.fast(args)
        best = min(best, (time.perf_counter() - t0) / len(sequence) * 1e6)
    return best


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


def main() -> int:
    from ktile.runtime import gpu
    with stubbed_gpu():
        call = gpu.GpuCall(add, None, {})
        for rows in ([32], [32, 512], [1, 32, 512]):
            us = _alternating(call, [(r, 4096) for r in rows])
            print(f"GpuCall.fast, rows {'|'.join(map(str, rows)):10} x 4096 bf16: {us:8.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
