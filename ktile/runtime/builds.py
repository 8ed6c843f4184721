"""How many kernels this process compiled, and building a kernel call's code object without a
GPU.

    before = build_count()
    ...                                   # run ops, warm up, tune
    build_count() - before                # BuildCount(compiles=0, hits=12)

`compiles` counts real compiler invocations (nvcc, clang++, hipcc) through the build cache;
`hits` counts builds the cache served. The cache records both (`cache.get_or_build`), so a
build of any backend is counted once, whoever asked for it.

`build_call(kernel, target, constants)` builds what a GPU call of `kernel` at `constants` on a
`target` GPU builds (`gpu.GpuCall`): the trace with tensor (TMA) copies, and where that trace
has tensor maps also the trace without them (a call whose tensors no map can describe runs
that one). With no GPU this is how warm-up and the tuner's gates reach the GPU path's builds.
"""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

_LOCK = threading.Lock()
_COUNTS = {"compiles": 0, "hits": 0}
_KEYS: set[str] = set()        # every cache key a build asked for in this process


@dataclass(frozen=True)
class BuildCount:
    compiles: int     # compiler invocations
    hits: int         # builds served by the cache

    def __sub__(self, other: "BuildCount") -> "BuildCount":
        return BuildCount(self.compiles - other.compiles, self.hits - other.hits)


def record(hit: bool, key: str | None = None) -> None:
    """Count one build of cache key `key` (the cache's call)."""
    with _LOCK:
        _COUNTS["hits" if hit else "compiles"] += 1
        if key is not None:
            _KEYS.add(key)


def build_keys() -> frozenset[str]:
    """Every cache key this process built or found: a test that a run after warm-up asks for
    no build warm-up did not (whether or not the disk cache held it already)."""
    with _LOCK:
        return frozenset(_KEYS)


def build_count() -> BuildCount:
    """This process's builds so far."""
    with _LOCK:
        return BuildCount(_COUNTS["compiles"], _COUNTS["hits"])


def call_traces(kernel, target: str, constants: dict) -> list:
    """The traces a GPU call of `kernel` at `constants` on `target` may load: with tensor
    copies, and without them where the first has tensor maps (`gpu.GpuCall._trace`)."""
    from .tensor_maps import CallMaps
    first = kernel.trace_copies(target, True, constants)
    if CallMaps.of(first) is None:
        return [first]
    return [first, kernel.trace_copies(target, False, constants)]


def build_call(kernel, target: str, constants: dict) -> list:
    """Build (or find in the cache) every code object a GPU call may load; the Builds."""
    from .build import build_trace
    return [build_trace(trace) for trace in call_traces(kernel, target, constants)]


# ---- build-only calls: kernel calls on CPU tensors build for a GPU target instead of running

_MODE = threading.local()      # .stack: [(target, compile)], innermost last; per thread


@contextlib.contextmanager
def building(target: str, *, compile: bool = True, collect: list | None = None):
    """Within the block (this thread), a kernel call on CPU tensors runs nothing: it checks
    the kernel's requirements on the call's shapes and traces it for `target`, and with
    `compile` builds every code object a call on a `target` GPU loads (`build_call`). Op
    functions route as on a `target` GPU (`ktile.ops._library.target_of`). Warm-up builds so;
    the routing tables check a measured route's constants so (compile=False). Without
    compile, `collect` (a list) receives the traces a build would compile, for the caller to
    build (in parallel: `build_traces`)."""
    from .. import targets
    targets.get(target)                  # an unknown target is refused here, naming it
    stack = _stack()
    stack.append((target, compile, collect))
    try:
        yield
    finally:
        stack.pop()


def building_target() -> str | None:
    """The target of the innermost `building` block of this thread; None outside one."""
    stack = getattr(_MODE, "stack", None)
    return stack[-1][0] if stack else None


def build_only_call(kernel, args: tuple, constants: dict) -> None:
    """A kernel call inside `building`: check, trace, and (with compile) build."""
    from .arguments import check_arguments, check_requirements, split_scalars
    target, compile, collect = _stack()[-1]
    tensors, _ = split_scalars(kernel, args)
    arguments = check_arguments(kernel, tensors)
    check_requirements(kernel, kernel.resolve_constants(constants), arguments)
    if compile:
        build_call(kernel, target, constants)
        return
    traces = call_traces(kernel, target, constants)
    if collect is not None:
        collect.extend(traces)


def build_traces(traces: list, workers: int | None = None) -> list:
    """Build `traces` (each distinct one once) in parallel: translated in this thread (Python),
    compiled by a thread per CPU (the compilers are subprocesses). KtileErrors propagate."""
    import os
    from concurrent.futures import ThreadPoolExecutor
    from .build import build_trace
    unique = list({id(t): t for t in traces}.values())
    for trace in unique:
        trace.source()
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        return list(pool.map(build_trace, unique))


def _stack() -> list:
    if not hasattr(_MODE, "stack"):
        _MODE.stack = []
    return _MODE.stack
