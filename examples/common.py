"""What every example shares: the command line, running its cases, checking, the summary.

An example module defines
    KERNELS: list of (kernel, constants) — what --dump and translation show
    CASES:   list of case descriptions (shapes, ragged ones included)
    run_case(case) -> (max_error, tolerance): runs the kernel(s) and compares with the reference
and ends with `main(__name__ ...)` via `example_main(globals())`.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ktile  # noqa: E402
from ktile import targets  # noqa: E402


@dataclass
class CaseResult:
    case: str
    ok: bool
    error: float
    tolerance: float
    seconds: float
    detail: str = ""


def run_cases(module, backend: str = "interpret", target: str | None = None,
              device: str = "cpu") -> list[CaseResult]:
    results = []
    for case in module.CASES:
        start = time.perf_counter()
        try:
            err, tol = module.run_case(case, backend=backend, target=target, device=device)
            ok = bool(err <= tol)
            detail = ""
        except ktile.KernelError as exc:
            err, tol, ok, detail = float("nan"), 0.0, False, str(exc)
        results.append(CaseResult(str(case), ok, err, tol, time.perf_counter() - start, detail))
    return results


def translate_all(module) -> dict[str, str]:
    """Each target → "ok" or the first line of the error."""
    out = {}
    for name in targets.NAMES:
        try:
            for kernel, constants in module.KERNELS:
                kernel.source(target=name, **constants)
            out[name] = "ok"
        except ktile.KtileError as exc:
            out[name] = str(exc).splitlines()[0]
    return out


def example_main(namespace: dict) -> None:
    import types
    module = types.SimpleNamespace(**namespace)
    parser = argparse.ArgumentParser(description=(module.__doc__ or "").strip().splitlines()[0])
    parser.add_argument("--dump", choices=("ir", "cpp"), help="print the checked IR or the C++")
    parser.add_argument("--target", choices=targets.NAMES, help="target arch (default: gfx1100)")
    parser.add_argument("--interpret", action="store_true",
                        help="run on the CPU interpreter even where a GPU is present")
    parser.add_argument("--emulate", action="store_true",
                        help="run under wave emulation of --target (an AMD one, default gfx1100): "
                             "its generated C++ compiled for this CPU, ISA preconditions checked")
    parser.add_argument("--build", action="store_true",
                        help="compile for --target (default: every target with a toolchain here), "
                             "run the resource gates and print the reports; no GPU needed")
    args = parser.parse_args()
    if args.build:
        sys.exit(build_and_report(module, [args.target] if args.target else buildable_targets()))
    if args.dump:
        for kernel, constants in module.KERNELS:
            trace = kernel.trace(args.target, **constants)
            print(trace.dump() if args.dump == "ir" else trace.source())
        return
    if args.emulate and args.target and targets.get(args.target).vendor != "amd":
        parser.error(f"--emulate runs AMD targets; {args.target} is not one")
    device = "cpu" if args.interpret or args.emulate or not gpu_present() else "cuda"
    backend = "emulate" if args.emulate else "interpret" if device == "cpu" else "auto"
    results = run_cases(module, backend, args.target, device)
    width = max(len(r.case) for r in results)
    for r in results:
        status = "ok" if r.ok else "MISMATCH"
        print(f"{r.case:<{width}}  max err {r.error:.3g} (tol {r.tolerance:.3g})  "
              f"{r.seconds * 1e3:8.1f} ms  {status}")
        if r.detail:
            print(r.detail)
    failed = [r for r in results if not r.ok]
    where = "wave emulation" if args.emulate else "interpreter" if device == "cpu" else "GPU"
    print(f"{len(results) - len(failed)} of {len(results)} cases match the reference "
          f"({where}, target {args.target or ('sm_90a' if device == 'cuda' else ktile.config.default_target())})")
    sys.exit(1 if failed else 0)


def runner(kernel, backend: str, device: str = "cpu"):
    """The kernel's call for this backend (`interpret` forces the CPU interpreter, `emulate` runs
    wave emulation of the call's AMD target). With a GPU device, the (CPU) tensors are copied
    there for the call and the results copied back."""
    if backend == "emulate":
        from ktile.emulate import emulate
        return lambda *tensors, **options: emulate(kernel, *tensors, **options)
    call = kernel.interpret if backend == "interpret" else kernel
    if device == "cpu":
        return call

    def on_device(*tensors, **options):
        moved = [t.to(device) for t in tensors]
        call(*moved, **options)
        for t, m in zip(tensors, moved):
            t.copy_(m.cpu())
    return on_device


def buildable_targets() -> list[str]:
    """The targets whose toolchain is installed here."""
    from ktile.runtime.build import toolchain_for
    found = []
    for name in targets.NAMES:
        try:
            toolchain_for(targets.get(name))
        except ktile.KtileError:
            continue
        found.append(name)
    return found


def build_and_report(module, names: list[str]) -> int:
    """Build every kernel of the example for each target; print each report. 1 on a refusal."""
    if not names:
        print("no toolchain for any target is installed here (nvcc for sm_90a)")
        return 1
    failed = 0
    for target in names:
        for kernel, constants in module.KERNELS:
            try:
                print(kernel.build(target, **constants).report())
            except ktile.KtileError as exc:
                print(f"{kernel.name} for {target}: {exc}")
                failed += 1
    return 1 if failed else 0


def gpu_present() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def torch_rand(shape, dtype, seed: int, scale: float = 1.0):
    import torch
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * scale).to(dtype)


def max_abs_error(got, want) -> float:
    import numpy as np
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    diff = np.abs(got - want)
    diff[np.isnan(got) != np.isnan(want)] = np.inf
    diff[np.isnan(got) & np.isnan(want)] = 0
    return float(diff.max()) if diff.size else 0.0
