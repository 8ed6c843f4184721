"""benchmarks/latency_probe.py on the CPU interpreter, its timer faked: every variant of a
case is checked against the torch formula before it is timed, a wrong result is marked and
never timed, and the pinned shapes cover the row exactly."""
import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import latency_probe as probe  # noqa: E402
from ktile.bench.timing import Timing  # noqa: E402


def fake_timer(call):
    call()
    return Timing(0.005, 0.0, 1)


@pytest.mark.parametrize("op", probe.OPS)
def test_every_variant_is_checked_then_timed(op):
    cols = 4096 if op == "softmax" else 2048
    rows = probe.probe([(op, 2, cols)], False, log=lambda _: None, device="cpu",
                       timer=fake_timer)
    variants = rows[0]["variants"]
    assert {"routed", "C16", "C32", "C64"} <= set(variants)
    for name, v in variants.items():
        assert v["error"] <= probe.TOLERANCE, (name, v)
        assert v["ms"] == 0.005, (name, v)


def test_a_wrong_result_is_not_timed(monkeypatch):
    original = probe.ktile_call

    def broken(op, args):
        right = original(op, args)
        return lambda: right() * 1.25
    monkeypatch.setattr(probe, "ktile_call", broken)
    timed = []
    rows = probe.probe([("rms_norm", 1, 2048)], False, log=lambda _: None, device="cpu",
                       timer=lambda call: timed.append(call) or Timing(1.0, 0.0, 1))
    assert not timed
    assert all(v.get("wrong") and "ms" not in v for v in rows[0]["variants"].values())


@pytest.mark.parametrize("cols", probe.WIDTHS)
def test_pinned_shapes_cover_the_row(cols):
    routes = probe.pinned_routes("rms_norm", cols)
    assert routes
    for route in routes.values():
        c, warps = route.constants["C"], route.constants["WARPS"]
        assert 16 * c * warps == cols and warps <= probe.MAX_WARPS
