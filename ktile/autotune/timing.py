"""Timing candidates, interleaved so that drift falls on all of them alike.

Each round times every candidate once, in an order rotated by one each round (no candidate is
always first after the flush); a round is one sample of each. A timer is a callable
`timer(candidate, shape, run) -> seconds` with a `device` attribute (the torch device the
calls' tensors go on; None: the timer never calls `run`, as a synthetic timer for tests).

`CudaTimer` flushes the L2 cache before each call (it writes a buffer twice the L2's size),
then has the GPU spin for the op benchmark's HOST_COVER_US (ktile/bench/timing.py) before the
start event, so the call's host work is done before the GPU reaches the event and the events
time the kernels, not the host. (Without the spin, a call whose Python outlasted the flush was
timed with its host cost: the first sm_90a rms_norm table, 2026-12-02, was tuned that way, its
candidates at 40-55 us where the kernels take about 5.)
"""
from __future__ import annotations


class CudaTimer:
    device = "cuda"

    def __init__(self):
        import torch
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        l2 = getattr(props, "L2_cache_size", 0) or 64 << 20
        self._flush = torch.empty(2 * l2 // 4, dtype=torch.int32, device="cuda")
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)
        from ..bench.timing import _cover_cycles
        self._cover = _cover_cycles()

    def __call__(self, candidate, shape, run) -> float:
        import torch
        self._flush.zero_()
        torch.cuda._sleep(self._cover)
        self._start.record()
        run()
        self._end.record()
        self._end.synchronize()
        return self._start.elapsed_time(self._end) * 1e-3


def interleave(candidates: list, shape, runs: dict, timer, rounds: int,
               progress=None) -> dict:
    """candidate -> its `rounds` times (seconds) at `shape`; `runs[candidate]` makes one call.
    Each candidate is called once untimed first (its first call loads the kernel)."""
    if timer.device is not None:
        for cand in candidates:
            runs[cand]()
    times = {cand: [] for cand in candidates}
    if progress is not None:
        progress.add(rounds)
    for r in range(rounds):
        shift = r % len(candidates)
        for cand in candidates[shift:] + candidates[:shift]:
            times[cand].append(timer(cand, shape, runs.get(cand)))
        if progress is not None:
            progress.step(f"{shape[0]}x{shape[1]} round {r + 1}/{rounds}")
    return times
