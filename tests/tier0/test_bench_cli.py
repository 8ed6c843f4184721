"""`ktile bench` without a GPU: exit 2 with a clear message (and one JSON object last with
--json) for an unknown op, no op, or no CUDA GPU; `--plot-from` redraws the summary of saved
results with no GPU; the summary's ratio and goal marks (ktile/bench/report.py)."""
import json
import os
import subprocess
import sys

import pytest

from ktile.bench import cli, report

torch = pytest.importorskip("torch")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def test_an_unknown_op_is_unusable_input_and_names_the_known_ones(capsys):
    code, out, err = run(capsys, "rms_nrom", "--json")
    assert code == 2
    assert "unknown op 'rms_nrom'" in err and "rms_norm" in err
    payload = last_json(out)
    assert payload["exit_code"] == 2 and not payload["ok"] and "rms_nrom" in payload["error"]


def test_only_the_compiled_and_triton_alternatives_can_be_skipped(capsys):
    code, _, err = run(capsys, "add", "--skip", "torch")
    assert code == 2 and "only torch.compile and triton can be skipped" in err


def test_no_op_named_is_unusable_input(capsys):
    code, _, err = run(capsys)
    assert code == 2 and "name an op or pass --all" in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_without_a_gpu_it_says_it_needs_one(capsys):
    code, out, err = run(capsys, "softmax", "--json")
    assert code == 2 and "needs a CUDA GPU" in err
    assert "needs a CUDA GPU" in last_json(out)["error"]


def test_the_ktile_command_dispatches_bench(capsys):
    from ktile.tools import cli as ktile_cli
    assert ktile_cli.main(["bench", "nope"]) == 2
    assert "unknown op 'nope'" in capsys.readouterr().err


def test_the_script_runs_every_op_and_refuses_the_same_way():
    proc = subprocess.run([sys.executable, "benchmarks/ops.py", "--only", "nope"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "unknown op 'nope'" in proc.stderr


def entry(ms, check_ok=True):
    return {"ms": ms, "noise": 0.0, "of_copy": 0.5, "check": {"compared": True, "ok": check_ok}}


def synthetic_rows():
    return [
        # torch.compile was fastest but wrong: the best alternative is triton
        {"label": "1x4096", "x": 1, "group": 4096, "bytes": 1 << 20,
         "ktile": {"ms": 0.010, "noise": 0.0, "of_copy": 0.1}, "torch": entry(0.020),
         "torch.compile": entry(0.001, check_ok=False), "triton": entry(0.009)},
        # big data: 50% of copy is below the 90% goal even though ktile is fastest
        {"label": "16384x8192", "x": 16384, "group": 8192, "bytes": 512 << 20,
         "ktile": {"ms": 0.100, "noise": 0.0, "of_copy": 0.5}, "torch": entry(0.200)},
        {"label": "1x16384", "x": 1, "group": 16384, "bytes": 1 << 16,
         "ktile": {"failed": "InputError: too wide"}, "torch": entry(0.005)},
    ]


def test_the_summary_takes_the_fastest_alternative_that_matched():
    first, big, failed = report.summarize({"rms_norm": synthetic_rows()})
    assert (first["best"], first["best_ms"]) == ("triton", 0.009)
    assert first["ratio"] == pytest.approx(0.9) and first["meets_goal"] is False
    assert big["ratio"] == pytest.approx(2.0) and big["meets_goal"] is False
    assert failed["ktile_ms"] is None and failed["meets_goal"] is False
    table = report.markdown([first, big, failed])
    assert "| rms_norm | 1x4096 | 10.0 µs | triton 9.0 µs | 0.90× | 10% | below |" in table
    assert "| rms_norm | 1x16384 | failed |" in table


def test_plot_from_redraws_saved_results_without_a_gpu(tmp_path, capsys):
    document = {"op": "rms_norm", "axis": "rows", "meta": {"device": "NVIDIA H200",
                                                           "copy_gbps": 4260.0},
                "results": synthetic_rows()}
    (tmp_path / "rms_norm.json").write_text(json.dumps(document))
    code, out, _ = run(capsys, "--plot-from", str(tmp_path), "--json")
    assert code == 0
    assert "| rms_norm | 16384x8192 | 100.0 µs | torch 200.0 µs | 2.00× | 50% | below |" in \
        (tmp_path / "summary.md").read_text()
    assert [e["shape"] for e in last_json(out)["summary"]] == ["1x4096", "16384x8192", "1x16384"]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "rms_norm.png").stat().st_size > 1000


def test_plot_from_a_missing_folder_is_unusable_input(tmp_path, capsys):
    code, _, err = run(capsys, "--plot-from", str(tmp_path / "nothing"))
    assert code == 2 and "does not exist" in err
