"""The example modules, loaded once per test process (tests import them by file path)."""
import functools
import glob
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE_PATHS = sorted(glob.glob(os.path.join(ROOT, "examples", "[0-9][0-9]_*.py")))
EXAMPLE_NAMES = [os.path.splitext(os.path.basename(p))[0] for p in EXAMPLE_PATHS]


@functools.lru_cache(maxsize=None)
def load(name: str):
    path = os.path.join(ROOT, "examples", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def traces(name: str, target: str | None = None):
    module = load(name)
    return [kernel.trace(target, **constants) for kernel, constants in module.KERNELS]


def tensor_digest(tensor) -> str:
    """The sha256 of a tensor's bytes (torch or numpy): equal digests, bitwise-equal tensors
    (NaNs included, which `==` would call unequal)."""
    import hashlib
    import numpy as np
    if hasattr(tensor, "detach"):
        import torch
        raw = tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy()
    else:
        raw = np.ascontiguousarray(tensor)
    return hashlib.sha256(raw.tobytes()).hexdigest()


def case_outputs(module, case, **run) -> list[tuple[str, list[str]]]:
    """Run one case of an example (`run`: backend, target, device as `run_case` takes them)
    and return, for each kernel call it made in order, (kernel name, the digest of every
    tensor argument after the call). Examples make their calls through `common.runner`; the
    module's `runner` is wrapped for the run, so what a call left in its outputs is seen."""
    calls: list[tuple[str, list[str]]] = []
    original = module.runner

    def recording_runner(kernel, backend, device="cpu"):
        call = original(kernel, backend, device)

        def recorded(*tensors, **options):
            call(*tensors, **options)
            calls.append((kernel.name, [tensor_digest(t) for t in tensors]))
        return recorded
    module.runner = recording_runner
    try:
        module.run_case(case, **run)
    finally:
        module.runner = original
    if not calls:
        raise AssertionError(f"{module.__name__}: run_case made no call through runner()")
    return calls


def nondeterministic_calls(module, case, runs: int = 10, **run) -> list[str]:
    """The kernel calls of one case whose outputs differ in any of `runs` runs on the same
    inputs (examples seed their inputs), as "kernel (call N)"; empty when every run left
    bitwise-identical tensors."""
    first = case_outputs(module, case, **run)
    differ: set[int] = set()
    for _ in range(runs - 1):
        again = case_outputs(module, case, **run)
        differ.update(k for k, (a, b) in enumerate(zip(first, again)) if a != b)
        if len(again) != len(first):
            differ.add(min(len(again), len(first)))
    return [f"{first[k][0] if k < len(first) else '?'} (call {k + 1})" for k in sorted(differ)]
