"""Sections of one benchmark run: benchmarks/matmul.py and benchmarks/attention.py time the
parts of an issue that have their own scripts (benchmarks/matmul_fp8.py, awq.py, moe.py,
paged_decode.py) in the same process, each section's rows under its own key of the one JSON.

A section that raises is reported (its error and the traceback's tail in the JSON, a line in
the summary) and the run goes on with the next: one broken part never hides the others'
figures. No torch here: the callers do the GPU work.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import time
import traceback
from typing import Callable

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "benchmarks")


def load(filename: str):
    """benchmarks/<filename> as a module, loaded by path (`import awq` could find AutoAWQ's
    package of that name)."""
    path = os.path.join(BENCHMARKS, filename)
    name = "benchmarks_" + os.path.splitext(filename)[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(name: str, body: Callable[[list], None], correct: Callable[[dict], bool]) -> dict:
    """Section `name`: `body(rows)` appends its rows to `rows` as it measures them. Returns
    {"rows", "correct", "wall_s"} and, where it raised, "error" and "traceback" (correct
    False; the rows measured before are kept). `correct(row)` says whether a row was right."""
    started, rows = time.time(), []
    try:
        body(rows)
    except Exception as err:   # noqa: BLE001 - a failed section is reported, the run goes on
        tail = traceback.format_exc()[-3000:]
        print(f"section {name} failed: {type(err).__name__}: {err}\n{tail}", file=sys.stderr,
              flush=True)
        return {"rows": rows, "correct": False, "wall_s": round(time.time() - started, 1),
                "error": f"{type(err).__name__}: {str(err)[:500]}", "traceback": tail}
    return {"rows": rows, "correct": all(correct(row) for row in rows),
            "wall_s": round(time.time() - started, 1)}


def status(section: dict) -> str:
    if "error" in section:
        return f"FAILED: {section['error'][:200]}"
    return "ok" if section["correct"] else "WRONG results"


def print_summary(sections: dict[str, dict]) -> None:
    """One line per section: its rows, wall time and status."""
    print(f"\n{'section':10} {'rows':>5} {'wall s':>8}  status")
    for name, section in sections.items():
        print(f"{name:10} {len(section['rows']):5} {section['wall_s']:8.1f}  {status(section)}")


def summary(sections: dict[str, dict]) -> dict[str, dict]:
    """The JSON's "sections" entry: each section's status without its rows."""
    return {name: {"rows": len(s["rows"]), "correct": s["correct"], "wall_s": s["wall_s"],
                   **({"error": s["error"]} if "error" in s else {})}
            for name, s in sections.items()}
