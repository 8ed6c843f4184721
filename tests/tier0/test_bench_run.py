"""A whole `ktile bench` run on the CPU: the op's bench at its small shape on the interpreter,
CUDA timing replaced by a host timer (this machine has no GPU; the method itself runs on the
H200). Checks the files, the JSON, the table and the exit codes of a run end to end."""
import dataclasses
import json
import time

import pytest

torch = pytest.importorskip("torch")

from ktile.bench import cases, cli, prebuild, runner, suite, timing  # noqa: E402


def host_time(fn, repeats=3, warmup=1):
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    return timing.summarize(samples)


@pytest.fixture
def cpu_run(monkeypatch):
    monkeypatch.setattr(cases, "DEVICE", ["cpu"])
    small = {name: dataclasses.replace(b, shapes=(cases.small(b),), quick=(cases.small(b),))
             for name, b in cases.benches().items()}
    monkeypatch.setattr(cases, "_BENCHES", small)
    monkeypatch.setattr(timing, "time_call", host_time)
    monkeypatch.setattr(timing, "copy_gbps", lambda: 100.0)
    monkeypatch.setattr(runner, "triton_table", lambda: ({}, "not in this test"))
    monkeypatch.setattr(suite, "meta", lambda copy, quick, missing: {
        "device": "CPU (test)", "copy_gbps": copy, "quick": quick, "date": "2026-12-02"})
    monkeypatch.setattr(cli, "gpu_missing", lambda: None)
    monkeypatch.setattr(prebuild, "prebuild", lambda names, quick, log: None)   # no GPU target
    return small


def test_a_run_writes_json_summary_and_table_and_exits_0(cpu_run, tmp_path, capsys):
    out = tmp_path / "run"
    code = cli.main(["add", "softmax", "--skip", "torch.compile", "--out", str(out), "--json",
                     "--record", str(tmp_path / "figures.json")])
    stdout = capsys.readouterr().out
    payload = json.loads(stdout.strip().splitlines()[-1])
    assert code == 0 and payload["ok"] and payload["mismatches"] == []
    document = json.loads((out / "add.json").read_text())
    row = document["results"][0]
    assert row["label"] == "1000" and row["bytes"] == 3 * 2 * 1000
    assert row["torch"]["check"]["ok"] and row["ktile"]["ms"] > 0
    assert row["ktile"]["of_copy"] == pytest.approx(row["ktile"]["gbps"] / 100.0)
    assert "torch.compile" not in row
    assert "| softmax | 3x96 |" in (out / "summary.md").read_text()
    assert "shapes meet the goal" in stdout
    figures = json.loads((tmp_path / "figures.json").read_text())
    assert set(figures["ops"]) == {"add", "softmax"}


def test_an_alternative_that_differs_from_ktile_fails_the_run(cpu_run, tmp_path, capsys):
    wrong = dataclasses.replace(cpu_run["add"], torch=lambda x, y: x - y)
    cpu_run["add"] = wrong
    code = cli.main(["add", "--skip", "torch.compile", "--out", str(tmp_path), "--json"])
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 1 and payload["mismatches"] == ["add 1000 torch"]


def test_an_alternative_that_raises_is_recorded_not_fatal(cpu_run, tmp_path, capsys):
    def broken(x, y):
        raise RuntimeError("no kernel for this shape")
    cpu_run["add"] = dataclasses.replace(cpu_run["add"], torch=broken)
    code = cli.main(["add", "--skip", "torch.compile", "--out", str(tmp_path)])
    capsys.readouterr()
    row = json.loads((tmp_path / "add.json").read_text())["results"][0]
    assert code == 0 and row["torch"] == {"failed": "RuntimeError: no kernel for this shape"}


def test_the_prebuild_plan_maps_bench_shapes_to_warm_up_calls():
    from ktile.ops.warmup import CALLS
    found = cases.benches()
    plan = prebuild.plan(["rms_norm", "softmax", "add", "rotary_embedding", "kv_cache_write"],
                         lambda name: found[name].quick, CALLS)
    assert set(plan) == {"bf16", "fp32"} and list(plan["fp32"]) == ["softmax"]
    assert (16384, 8192) in plan["bf16"]["rms_norm"]
    assert plan["bf16"]["add"] == [(256, 4096), (16384, 4096), (65536, 4096)]
    assert plan["bf16"]["rotary_embedding"][0] == (1, prebuild.ROTARY_COLS)
    assert "kv_cache_write" not in plan["bf16"]      # its bench dims have no (rows, cols) here


def test_in_place_alternatives_are_checked_on_the_inputs_as_made(cpu_run, monkeypatch):
    """ktile's timed calls mutate an in-place op's inputs; every alternative's check must still
    start from the inputs as made (the H200 run of 2026-12-02 reported false mismatches for
    fused_add_rms_norm_ and rotary_embedding before this)."""
    def bump(x):
        x.add_(1.0)
        return x
    bench = cases.Bench("bump", shapes=(), quick=(), make=lambda s: (torch.zeros(8),),
                        ktile=bump, torch=bump, nbytes=lambda s: 64, mutates=(0,))
    shape = cases.Shape({"n": 8}, 8, 8)
    row = runner.measure_shape(bench, shape, {"ktile": bump, "torch": bump}, copy=100.0)
    assert row["torch"]["check"]["ok"], row["torch"]["check"]
