"""Shipped routing tables (ktile/ops/_shipped.py): read once per target, consulted before the
built-in routes, the built-in routes serving every shape outside its buckets; a route whose
kernel the op lacks, whose constants fail the kernel's requirements at its bucket, or of a
kind ktile does not know is ignored with one warning each, never a crash (alternative routes,
torch and triton: tests/tier0/test_alternative_routes.py); an unreadable table gives one warning and loads nothing."""
import json
import warnings

import pytest

pytest.importorskip("torch")

from ktile.errors import KernelWarning  # noqa: E402
from ktile.ops import _library as lib, _shipped  # noqa: E402
from tests.tier0.test_autotune_tuner import rms_norm_op  # noqa: E402

TARGET = "sm_90a"


def bucket(rows, cols, route) -> dict:
    return {"rows": list(rows), "cols": list(cols), "route": route}


def ktile_route(route, **constants) -> dict:
    spec = {"kind": "ktile", "kernel": route.kernel, "constants": {**route.constants,
                                                                    **constants}}
    if getattr(route, "cols_multiple", 1) > 1:
        spec["cols_multiple"] = route.cols_multiple
    return spec


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """Writes a table for rms_norm on sm_90a into a fresh routes folder; returns the op with
    a fresh measured table bound to it."""
    op = rms_norm_op()
    monkeypatch.setattr(_shipped, "ROUTES_DIR", tmp_path)
    monkeypatch.setattr(op.table, "measured", lib.MeasuredRoutes())
    op.table.bind(op)

    def write(buckets, text=None):
        path = _shipped.table_path(op.name, TARGET, tmp_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text if text is not None else json.dumps(
            {"format": _shipped.FORMAT, "op": op.name, "target": TARGET, "buckets": buckets}))
        return op
    return write


def choose_recording(op, rows, cols):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        route = op.table.choose(rows, cols, TARGET)
    return route, [w for w in seen if issubclass(w.category, KernelWarning)]


def test_bad_routes_are_ignored_with_one_warning_each(shipped):
    op = rms_norm_op()
    builtin = lib.RoutingTable(op.table.routes)
    narrow, wide = builtin.choose(1, 1024, TARGET), builtin.choose(1, 4096, TARGET)
    other = next(r for r in op.table.routes if r.kernel != narrow.kernel
                 and r.fits(1, 1024, TARGET))
    op = shipped([
        bucket((1, 8), (1, 1024), ktile_route(other)),                        # loads
        bucket((9, 64), (1, 1024), {"kind": "ktile", "kernel": "gone", "constants": {}}),
        bucket((1, 8), (3073, 4096), ktile_route(wide, HELD=1, WARPS=1)),     # too few columns
        bucket((9, 64), (3073, 4096), {"kind": "cudnn"}),                   # unknown kind
    ])
    route, seen = choose_recording(op, 4, 1024)
    assert route.kernel == other.kernel and route.constants == other.constants
    assert len(seen) == 3, [str(w.message) for w in seen]
    text = " ".join(str(w.message) for w in seen)
    assert "no kernel 'gone'" in text and "'cudnn'" in text and "requirement" in text
    for rows, cols in [(16, 1024), (4, 4096), (16, 4096), (4, 2048), (100, 1024)]:
        route, seen = choose_recording(op, rows, cols)      # read once: no warning again
        assert route == builtin.choose(rows, cols, TARGET) and not seen


def test_an_unreadable_table_warns_once_and_loads_nothing(shipped):
    op = shipped(None, text="{not json")
    route, seen = choose_recording(op, 4, 1024)
    assert route == lib.RoutingTable(op.table.routes).choose(4, 1024, TARGET)
    assert len(seen) == 1 and "not read" in str(seen[0].message)
    assert not choose_recording(op, 4, 1024)[1]


def test_override_wins_over_the_shipped_table(shipped):
    op = rms_norm_op()
    other = next(r for r in op.table.routes if r.fits(1, 1024, TARGET)
                 and r != lib.RoutingTable(op.table.routes).choose(1, 1024, TARGET))
    op = shipped([bucket((1, 8), (1, 1024), {"kind": "ktile", "kernel": "gone"})])
    op.table.override(TARGET, [other])
    route, seen = choose_recording(op, 4, 1024)
    assert route == other and not seen


def test_write_table_refuses_what_read_table_cannot_read(tmp_path):
    with pytest.raises(ValueError):
        _shipped.write_table({"format": _shipped.FORMAT, "buckets": [{"rows": [2, 1]}]},
                             tmp_path / "t.json")
    assert not (tmp_path / "t.json").exists()


def test_a_route_the_ops_call_does_not_take_is_ignored():
    """elementwise chooses through a table of its own per kernel name, out of `pinned`'s
    reach: a measured route for it would never be the one its calls launch."""
    op = next(op for op in lib.all_ops() if op.name == "elementwise")
    binary = next(r for r in op.table.routes if r.kernel == "binary")
    spec = {"kind": "ktile", "kernel": "binary",
            "constants": {**binary.constants, "WARPS": 2 * binary.constants["WARPS"]}}
    route, why = _shipped.route_of(op, TARGET, bucket((1, 8), (1, 256), spec))
    assert route is None and "did not launch binary" in why
