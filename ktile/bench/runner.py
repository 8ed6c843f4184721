"""Run benches on a CUDA GPU: per shape, check every alternative against ktile's output once,
then time each (timing.py); a failing alternative is recorded, never fatal."""
from __future__ import annotations

import time

from . import timing
from .cases import Bench, Shape, close

ALTERNATIVES = ("torch", "torch.compile", "triton")


def triton_table() -> tuple[dict, str | None]:
    """The Triton launchers, or ({}, why not) where triton is missing or fails to import."""
    try:
        from .triton_kernels import KERNELS
    except Exception as err:   # ImportError, or a Triton too old for a kernel here
        return {}, f"{type(err).__name__}: {err}"[:200]
    return KERNELS, None


def fresh_compiler():
    """torch.compile with no state from the previous bench: several benches share a formula's
    code object (the binary functions), and dynamo's per-code-object recompile limit would
    otherwise send later ones back to eager silently."""
    import torch
    torch._dynamo.reset()
    for knob in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 64)
    return torch.compile


def callers(bench: Bench, triton: dict, skip: tuple = ()) -> dict:
    """ktile and the alternatives for this bench, less those in `skip`."""
    from ..ops.alternatives_dispatch import own_kernels
    found = {"ktile": own_kernels(bench.ktile), "torch": bench.torch}   # never a table's torch
    if "torch.compile" not in skip:
        found["torch.compile"] = fresh_compiler()(bench.torch)
    if bench.triton is not None and bench.triton in triton and "triton" not in skip:
        found["triton"] = triton[bench.triton]
    return found


def _fresh(bench: Bench, inputs: tuple) -> tuple:
    """Inputs for one checking call: the in-place ones cloned, so each caller sees the same."""
    return tuple(a.clone() if i in bench.mutates else a for i, a in enumerate(inputs))


def _failure(err: Exception) -> dict:
    return {"failed": f"{type(err).__name__}: {err}"[:300]}


def check(bench: Bench, label: str, got, want) -> dict:
    if label in bench.unchecked:
        return {"compared": False}
    error, tolerance = (bench.compare or close)(got, want)
    return {"compared": True, "error": error, "tolerance": tolerance, "ok": error <= tolerance}


def measure_shape(bench: Bench, shape: Shape, found: dict, copy: float) -> dict:
    """One row of results: every caller's check (against ktile) and timing at this shape."""
    row = {"shape": shape.dims, "label": shape.label, "x": shape.x, "group": shape.group,
           "bytes": bench.nbytes(shape)}
    inputs = bench.make(shape)
    pristine = _fresh(bench, inputs)   # the in-place inputs as made: timing mutates `inputs`
    want = None
    for label, fn in found.items():
        try:
            result = fn(*_fresh(bench, pristine))
            if label == "ktile":
                want, entry = result, {}
            else:
                entry = {"check": check(bench, label, result, want)} if want is not None else {}
            del result
            entry.update(timing.time_call(lambda: fn(*inputs)).as_dict())
        except Exception as err:   # an alternative (or ktile) that cannot run this shape
            row[label] = _failure(err)
            continue
        entry["gbps"] = timing.gbps(row["bytes"], entry["ms"])
        entry["of_copy"] = entry["gbps"] / copy
        row[label] = entry
    return row


def run_bench(bench: Bench, quick: bool, copy: float, triton: dict, log=print,
              skip: tuple = ()) -> list[dict]:
    import torch
    found = callers(bench, triton, skip)
    rows = []
    for shape in (bench.quick if quick else bench.shapes):
        started = time.perf_counter()
        row = measure_shape(bench, shape, found, copy)
        rows.append(row)
        torch.cuda.empty_cache()
        log(f"{bench.name} {shape.label}: " + ", ".join(
            f"{k} {v['ms'] * 1e3:.1f} us" if "ms" in v else f"{k} FAILED"
            for k, v in row.items() if k in ("ktile",) + ALTERNATIVES)
            + f" ({time.perf_counter() - started:.1f} s)")
    return rows


def mismatches(rows: list[dict]) -> list[str]:
    """'label alternative' for every alternative whose output differed from ktile's."""
    return [f"{row['label']} {label}" for row in rows for label in ALTERNATIVES
            if row.get(label, {}).get("check", {}).get("ok") is False]
