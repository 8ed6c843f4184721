"""benchmarks/moe.py on the CPU interpreter at a small MoE layer, its timer faked: every
candidate (ktile, ktile with the sorted layout, ktile at other constants, the per-expert loop,
torch's gather-bmm) is checked against the float64 reference before it is timed, a wrong
ktile result is marked and never timed, and a candidate that raises is reported, not timed."""
import argparse
import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import moe as bench  # noqa: E402
from ktile.bench import timing  # noqa: E402


@pytest.fixture
def small(monkeypatch):
    for name, value in {"HIDDEN": 64, "INTER": 32, "EXPERTS": 8, "TOP_K": 2,
                        "DEVICE": "cpu"}.items():
        monkeypatch.setattr(bench, name, value)
    timed = []

    def fake_timer(call, repeats):
        timed.append(call)
        call()
        return timing.Timing(0.005, 0.0, 1)
    monkeypatch.setattr(timing, "time_call", fake_timer)
    return timed


def args(check_only=False, constants=()):
    return argparse.Namespace(check_only=check_only, repeats=1, quick=True,
                              constants=list(constants))


def test_every_candidate_is_checked_then_timed(small):
    row = bench.measure(torch, 5, args(constants=["BN=32,UNROLL=2"]))
    assert row["correct"]
    assert set(row["error"]) == {"ktile", "ktile sorted", "cublas loop", "torch gather",
                                 "ktile BN=32,UNROLL=2"}
    for name, error in row["error"].items():
        assert error <= row["tolerance"], (name, error)
    assert set(row["ms"]) == {"ktile", "ktile sorted", "ktile gemm1", "cublas loop",
                              "torch gather", "ktile BN=32,UNROLL=2"}
    assert row["speedup_vs_loop"] == 1.0 and row["speedup_vs_best_other"] == 1.0


def test_a_wrong_result_is_not_timed(small, monkeypatch):
    import ktile.ops as ops
    right = ops.fused_moe
    monkeypatch.setattr(ops, "fused_moe", lambda **case: right(**case) * 1.25 + 1)
    row = bench.measure(torch, 5, args())
    assert not row["correct"]
    assert not {"ktile", "ktile gemm1"} & set(row["ms"]) and "cublas loop" in row["ms"]


def test_a_candidate_that_raises_is_reported_not_timed(small, monkeypatch):
    def broken(torch, case):
        raise RuntimeError("no kernel for this shape")
    monkeypatch.setattr(bench, "torch_gather", broken)
    row = bench.measure(torch, 2, args())
    assert row["correct"] and "torch gather" not in row["ms"] and "ktile" in row["ms"]
    assert "no kernel" in row["failed"]["torch gather"]
