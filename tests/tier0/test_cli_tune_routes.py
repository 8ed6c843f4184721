"""`ktile tune` and `ktile routes` (ktile/autotune/cli_*.py): exit status 0 done, 1 failed, 2
unusable input, and with --json one JSON object as the last line of stdout, in every case.
The tuning runs with the fake builds and timer of test_autotune_tuner (no compiler, no GPU)."""
import json

import pytest

pytest.importorskip("torch")

from ktile.autotune import candidates, cli_tune  # noqa: E402
from ktile.ops import _library as lib, _shipped  # noqa: E402
from ktile.tools import cli  # noqa: E402
from tests.tier0.test_autotune_tuner import (FakeTimer, fake_builds,  # noqa: E402,F401
                                             rms_norm_op)


def last_json(capsys) -> dict:
    lines = capsys.readouterr().out.strip().splitlines()
    return json.loads(lines[-1])


@pytest.mark.parametrize("argv", [
    ["tune", "no_such_op", "--target", "sm_90a", "--json"],
    ["tune", "rms_norm", "--target", "sm_80", "--json"],
    ["tune", "rms_norm", "--target", "sm_90a", "--shapes", "4by1024", "--json"],
    ["tune", "rms_norm", "--json"],                                   # no --target
    ["routes", "no_such_op", "--json"],
    ["routes", "rms_norm", "--target", "sm_80", "--json"],
    ["routes", "--bogus", "--json"],
])
def test_unusable_input_exits_2_with_json(argv, capsys):
    assert cli.main(argv) == 2
    out = last_json(capsys)
    assert out["ok"] is False and out["exit"] == 2 and out["error"]


def test_tune_writes_the_table_and_reports_json(fake_builds, tmp_path, capsys):
    out = tmp_path / "rms_norm.json"
    code = cli_tune.main(["rms_norm", "--target", "sm_90a", "--shapes", "4x1024",
                          "--rounds", "10", "--out", str(out), "--json"], timer=FakeTimer({}))
    assert code == 0
    report = last_json(capsys)
    assert report["ok"] and report["written"] == str(out) and not report["dry_run"]
    table = _shipped.read_table(out)
    assert table["buckets"][0]["rows"] == [1, 4] and table["buckets"][0]["cols"] == [1, 1024]
    assert report["check"]["never_slower"]
    assert "ktile tune rms_norm" in table["metadata"]["command"]


def test_dry_run_gates_and_writes_nothing(fake_builds, tmp_path, capsys):
    out = tmp_path / "rms_norm.json"
    code = cli_tune.main(["rms_norm", "--target", "sm_90a", "--shapes", "4x1024", "--dry-run",
                          "--out", str(out), "--json"])
    assert code == 0 and not out.exists()
    report = last_json(capsys)
    assert report["dry_run"] and report["written"] is None
    assert all(c["refused"] is None for c in report["buckets"][0]["candidates"])


def test_tune_exits_1_when_every_candidate_is_refused(fake_builds, monkeypatch, capsys):
    monkeypatch.setattr(candidates, "_build", lambda trace: (None, "spills"))
    code = cli_tune.main(["rms_norm", "--target", "sm_90a", "--shapes", "4x1024",
                          "--dry-run", "--json"])
    assert code == 1 and last_json(capsys)["ok"] is False


def test_tune_without_a_gpu_exits_1(fake_builds, monkeypatch, capsys):
    import torch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    code = cli.main(["tune", "rms_norm", "--target", "sm_90a", "--shapes", "4x1024",
                     "--json"])
    out = last_json(capsys)
    assert code == 1 and out["exit"] == 1 and "--dry-run" in out["error"]


def test_routes_shows_builtin_and_shipped(tmp_path, monkeypatch, capsys):
    op = rms_norm_op()
    default = lib.RoutingTable(op.table.routes).choose(4, 1024, "sm_90a")
    monkeypatch.setattr(_shipped, "ROUTES_DIR", tmp_path)
    table = {"format": _shipped.FORMAT, "op": "rms_norm", "target": "sm_90a",
             "metadata": {"command": "ktile tune rms_norm --target sm_90a"},
             "buckets": [{"rows": [1, 4], "cols": [1, 1024],
                          "route": {"kind": "ktile", "kernel": default.kernel,
                                    "constants": default.constants,
                                    **({"cols_multiple": default.cols_multiple}
                                       if getattr(default, "cols_multiple", 1) > 1 else {})}}]}
    _shipped.write_table(table, _shipped.table_path("rms_norm", "sm_90a", tmp_path))
    assert cli.main(["routes", "rms_norm", "--target", "sm_90a", "--json"]) == 0
    out = last_json(capsys)
    entry = out["tables"][0]
    assert out["ok"] and entry["builtin"] and entry["shipped"]["buckets"][0]["loaded"]
    table["buckets"][0]["route"]["kernel"] = "gone"
    _shipped.write_table(table, _shipped.table_path("rms_norm", "sm_90a", tmp_path))
    assert cli.main(["routes", "rms_norm", "--target", "sm_90a", "--json"]) == 1
    entry = last_json(capsys)["tables"][0]
    assert "no kernel 'gone'" in entry["shipped"]["buckets"][0]["ignored_because"]


def test_routes_without_shipped_tables(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_shipped, "ROUTES_DIR", tmp_path)
    assert cli.main(["routes", "softmax", "--json"]) == 0
    out = last_json(capsys)
    assert {e["target"] for e in out["tables"]} == set(lib.TARGETS)
    assert all(e["shipped"] is None for e in out["tables"])
