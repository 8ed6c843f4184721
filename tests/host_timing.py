"""Host time per call of a Python callable that launches GPU work: the best of `rounds` rounds
of `calls` calls, with the device synchronised around each round (so queued launches are
paid for), for the tier-3 host-overhead tests."""
import time


def seconds_per_call(torch, fn, calls: int = 20000, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    torch.cuda.synchronize()
    return best
