"""Device time of one call on a CUDA GPU, the way the op benchmark measures it.

Each sample is one call between two CUDA events, after a write of a buffer larger than L2 (so
every call reads its inputs from HBM, as in a model where the layer before evicted them). The
figure is the median of the samples, the noise their interquartile range over the median.

`clean=True` (time_call's option, off by default: every figure so far is the default's) reads
a second buffer of FLUSH_BYTES after the write, so the write's dirty lines are written back
before the call instead of during it: after the write alone, the timed call's reads evict up
to L2's size of dirty lines and pay their write-back (on the H200 a 32 MiB decode GEMV read
about 50 MiB more; benchmarks/gemv_sweep.py --clean-flush), a cost a layer after one that only
read does not see.

Device time, not host time: after the flush the GPU spins for HOST_COVER_US (a kernel that
only counts clock cycles, touching no memory), so the host has issued the call before the start
event is reached, whatever its Python costs; every alternative is timed the same way. The host's
cost of a call is its own figure (benchmarks/op_overhead.py): under CUDA graphs, as engines
run, it disappears.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

FLUSH_BYTES = 256 << 20      # well past the H200's 50 MiB L2 (and any GPU's we time)
HOST_COVER_US = 1000         # the GPU's spin after the flush: longer than any call's host work
WARMUP = 3
REPEATS = 30

_flush_buffer = None
_evict_buffer = None


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


def clean_flush_l2() -> None:
    """flush_l2, then a read of another FLUSH_BYTES: L2 left holding clean lines only."""
    import torch
    global _evict_buffer
    if _evict_buffer is None:
        _evict_buffer = torch.ones(FLUSH_BYTES // 4, dtype=torch.float32, device="cuda")
    flush_l2()
    _evict_buffer.sum()


def _cover_cycles() -> int:
    """GPU clock cycles in HOST_COVER_US at the device's clock rate."""
    import torch
    khz = getattr(torch.cuda.get_device_properties(0), "clock_rate", 0) or 2_000_000
    return int(HOST_COVER_US * khz / 1000)


def summarize(samples_ms: list[float]) -> Timing:
    """The median and relative IQR of a list of times (pure: tested on the CPU)."""
    median = statistics.median(samples_ms)
    if len(samples_ms) < 4:
        return Timing(median, 0.0, len(samples_ms))
    q1, _, q3 = statistics.quantiles(samples_ms, n=4, method="inclusive")
    return Timing(median, (q3 - q1) / median if median > 0 else 0.0, len(samples_ms))


def time_call(fn, repeats: int = REPEATS, warmup: int = WARMUP, clean: bool = False) -> Timing:
    """The device time of `fn()` (L2 flushed before each sample; `clean`: and its dirty lines
    written back, module docstring)."""
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    pairs = []
    cover = _cover_cycles()
    for _ in range(repeats):
        clean_flush_l2() if clean else flush_l2()
        torch.cuda._sleep(cover)
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


def graphed(fn):
    """A CUDA graph of `fn()` (after eager calls on a side stream), replayed by the returned
    function: what a benchmark times as a call's graph replay."""
    import torch
    fn()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def timed(fn, repeats: int = REPEATS, clean: bool = False) -> dict:
    """`time_call(fn)` as a dict, or {"error": ...} when the call (or its graph capture) fails:
    a failing alternative is reported in the benchmark's row, not fatal to the run."""
    try:
        return time_call(fn, repeats=repeats, clean=clean).as_dict()
    except Exception as err:   # noqa: BLE001 - reported, not fatal
        return {"error": f"{type(err).__name__}: {str(err)[:300]}"}
