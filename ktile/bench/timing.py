"""Device time of one call on a CUDA GPU, the way the op benchmark measures it.

Each sample is one call between two CUDA events, after a write of a buffer larger than L2 (so
every call reads its inputs from HBM, as in a model where the layer before evicted them). The
figure is the median of the samples, the noise their interquartile range over the median.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

FLUSH_BYTES = 256 << 20      # well past the H200's 50 MiB L2 (and any GPU's we time)
WARMUP = 3
REPEATS = 30

_flush_buffer = None


@dataclass(frozen=True)
class Timing:
    ms: float          # median of the samples
    noise: float       # (q3 - q1) / median: the spread a regression must exceed
    samples: int

    def as_dict(self) -> dict:
        return {"ms": self.ms, "noise": self.noise, "samples": self.samples}


def flush_l2() -> None:
    import torch
    global _flush_buffer
    if _flush_buffer is None:
        _flush_buffer = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    _flush_buffer.zero_()


def summarize(samples_ms: list[float]) -> Timing:
    """The median and relative IQR of a list of times (pure: tested on the CPU)."""
    median = statistics.median(samples_ms)
    if len(samples_ms) < 4:
        return Timing(median, 0.0, len(samples_ms))
    q1, _, q3 = statistics.quantiles(samples_ms, n=4, method="inclusive")
    return Timing(median, (q3 - q1) / median if median > 0 else 0.0, len(samples_ms))


def time_call(fn, repeats: int = REPEATS, warmup: int = WARMUP) -> Timing:
    """The device time of `fn()` (L2 flushed before each sample)."""
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    pairs = []
    for _ in range(repeats):
        flush_l2()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return summarize([s.elapsed_time(e) for s, e in pairs])


def copy_gbps(nbytes: int = 1 << 30) -> float:
    """Device-to-device copy bandwidth (bytes read + written per second, in GB/s)."""
    import torch
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    timing = time_call(lambda: dst.copy_(src), repeats=10)
    del src, dst
    return 2 * nbytes / timing.ms / 1e6


def gbps(nbytes: int, ms: float) -> float:
    return nbytes / ms / 1e6
