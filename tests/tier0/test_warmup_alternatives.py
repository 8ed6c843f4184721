"""Warm-up runs the shapes a measured table routes to an alternative once on the GPU (Triton's
JIT compiles there, not at the first call after warm-up): which calls it makes, by the shipped
sm_90a tables (Triton up to 256 rows for rms_norm), the current device and the switch."""
import importlib

import pytest

torch = pytest.importorskip("torch")

from ktile.ops import _library as lib  # noqa: E402
from ktile.ops import alternatives, routing  # noqa: E402

warmup = importlib.import_module("ktile.ops.warmup")   # the module: ktile.ops.warmup is the function

pytestmark = pytest.mark.tier0


@pytest.fixture
def fresh_rms_table(monkeypatch):
    """rms_norm's shipped tables read again, with triton treated as importable."""
    monkeypatch.setattr(alternatives, "triton_missing", lambda: None)
    op = lib.op_named("rms_norm")
    monkeypatch.setattr(op.table, "measured", lib.MeasuredRoutes(op.table.plans))
    op.table.bind(op)
    return op


SHAPES = {"rms_norm": [(1, 4096), (256, 4096), (4096, 4096)]}


def test_the_routed_shapes_are_called_on_the_warmed_device(fresh_rms_table, monkeypatch):
    monkeypatch.setattr(warmup, "_cuda_target", lambda: "sm_90a")
    got = warmup.alternative_calls(SHAPES, "sm_90a", [torch.bfloat16])
    assert got == [("rms_norm", 1, 4096, torch.bfloat16), ("rms_norm", 256, 4096, torch.bfloat16)]


def test_nothing_runs_without_the_device_or_with_alternatives_off(fresh_rms_table, monkeypatch):
    monkeypatch.setattr(warmup, "_cuda_target", lambda: None)
    assert warmup.alternative_calls(SHAPES, "sm_90a", [torch.bfloat16]) == []
    monkeypatch.setattr(warmup, "_cuda_target", lambda: "gfx950")     # another target
    assert warmup.alternative_calls(SHAPES, "sm_90a", [torch.bfloat16]) == []
    monkeypatch.setattr(warmup, "_cuda_target", lambda: "sm_90a")
    with routing(alternatives=False):
        assert warmup.alternative_calls(SHAPES, "sm_90a", [torch.bfloat16]) == []
