"""A benchmark run over several ops: copy bandwidth first, then each op's bench; writes
DIR/<op>.json, DIR/<op>.png (when matplotlib is installed), DIR/summary.json and DIR/summary.md.
Also `replot(DIR)`: the PNGs and the summary again from the JSON, on any machine."""
from __future__ import annotations

import datetime
import glob
import json
import os
import time

from . import plot, prebuild, report, runner, timing
from .cases import benches


def meta(copy: float, quick: bool, triton_missing: str | None) -> dict:
    import torch
    return {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "capability": list(torch.cuda.get_device_capability()), "copy_gbps": copy,
            "quick": quick, "date": datetime.date.today().isoformat(),
            "triton": _triton_version() if triton_missing is None else f"missing: {triton_missing}",
            "timing": f"median of {timing.REPEATS} CUDA-event times of single calls, "
                      f"{timing.FLUSH_BYTES >> 20} MiB written before each (L2 flushed); "
                      f"noise = IQR / median"}


def _triton_version() -> str:
    import triton
    return triton.__version__


def op_document(name: str, rows: list[dict], run_meta: dict) -> dict:
    bench = benches()[name]
    return {"op": name, "axis": bench.axis, "notes": bench.notes, "meta": run_meta,
            "results": rows}


def write_op(out: str, document: dict, log=print) -> None:
    with open(os.path.join(out, f"{document['op']}.json"), "w") as f:
        json.dump(document, f, indent=1)
    if not plot.draw(document, os.path.join(out, f"{document['op']}.png")):
        log(f"{document['op']}: matplotlib is not installed, no PNG (replot later with "
            f"`ktile bench --plot-from {out}`)")


def write_summary(out: str, op_results: dict, run_meta: dict) -> list[dict]:
    entries = report.summarize(op_results)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"meta": run_meta, "summary": entries,
                   "mismatches": {op: runner.mismatches(rows) for op, rows in op_results.items()}},
                  f, indent=1)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(f"Measured on {run_meta.get('device')} ({run_meta.get('date')}, torch "
                f"{run_meta.get('torch')}, copy {run_meta.get('copy_gbps', 0):.0f} GB/s)\n\n")
        f.write(report.markdown(entries) + "\n")
    return entries


def run(names: list[str], quick: bool, out: str, log=print, skip: tuple = ()) -> tuple[dict, dict]:
    """Every named op's bench on this GPU: (op -> result rows, the run's meta)."""
    os.makedirs(out, exist_ok=True)
    started = time.perf_counter()
    copy = timing.copy_gbps()
    triton, missing = runner.triton_table()
    if missing:
        log(f"no Triton alternative: {missing}")
    run_meta = meta(copy, quick, missing)
    run_meta["skipped"] = list(skip)
    log(f"{run_meta['device']}: copy {copy:.0f} GB/s")
    prebuild.prebuild(names, quick, log)
    log(f"ktile kernels prebuilt, {time.perf_counter() - started:.0f} s into the run")
    op_results = {}
    for name in names:
        rows = runner.run_bench(benches()[name], quick, copy, triton, log, skip)
        log(f"{name} done, {time.perf_counter() - started:.0f} s into the run")
        op_results[name] = rows
        write_op(out, op_document(name, rows, run_meta), log)
    run_meta["seconds"] = time.perf_counter() - started
    return op_results, run_meta


def replot(path: str, log=print) -> tuple[dict, dict]:
    """Redraw from DIR/<op>.json (or one such file): PNGs next to them, summary.md in DIR."""
    files = [path] if path.endswith(".json") else sorted(glob.glob(os.path.join(path, "*.json")))
    op_results, run_meta = {}, {}
    for name in files:
        with open(name) as f:
            document = json.load(f)
        if "op" not in document:   # summary.json, a gate report
            continue
        op_results[document["op"]] = document["results"]
        run_meta = document.get("meta", run_meta)
        if not plot.draw(document, name[:-len(".json")] + ".png"):
            log("matplotlib is not installed: no PNG")
    out = path if not path.endswith(".json") else os.path.dirname(path) or "."
    write_summary(out, op_results, run_meta)
    return op_results, run_meta
