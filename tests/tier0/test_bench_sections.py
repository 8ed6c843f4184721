"""benchmarks/matmul.py's and benchmarks/attention.py's sections (issues #11 and #12 in one run
each), no GPU: torch.cuda faked, each section's measuring faked (the scripts' run() and
run_case; their own timed paths have their own tests: test_bench_moe.py, test_scaled_mm.py,
test_ops_paged_attention.py). The sections run in order with this run's --quick, --check-only,
--repeats and --dtype mapped onto each script's own options; their rows land under their own
keys of the one JSON; a section that raises is reported there and in the summary, and the
others still run; the default (no section named) is the sweep it always was."""
import json
import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import attention  # noqa: E402
import matmul  # noqa: E402
from ktile.bench import sections, timing  # noqa: E402


@pytest.fixture
def gpu(monkeypatch):
    """torch.cuda as if a GPU were there (nothing is launched: the measuring is faked)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Fake H200")
    monkeypatch.setattr(timing, "copy_gbps", lambda: 4000.0)


@pytest.fixture
def scripts(monkeypatch):
    """The section scripts loaded for real (their parsers give the section's options), their
    run() faked: fp8 raises, awq and moe give a row each; returns the options each run saw."""
    seen, real_load = {}, sections.load

    def load(filename):
        module = real_load(filename)
        name = filename[:-3]

        def run(args):
            seen[name] = args
            if name == "matmul_fp8":
                raise RuntimeError("fp8 build failed")
            return [{"section": name, "correct": True, "ms": 0.01}]
        module.run = run
        module.print_table = lambda rows: print(f"table of {name}: {len(rows)} rows")
        return module
    monkeypatch.setattr(sections, "load", load)
    return seen


def test_matmul_all_sections_land_in_one_json_past_a_failure(gpu, scripts, monkeypatch,
                                                             tmp_path, capsys):
    measured = []

    def measure(kind, m, n, k, args, copy):
        measured.append((kind, m, n, k))
        return {"kind": kind, "m": m, "n": n, "k": k, "correct": True, "error": 0.0,
                "tolerance": 1.0}
    monkeypatch.setattr(matmul, "measure", measure)
    code = matmul.main(["--all-sections", "--quick", "--check-only", "--repeats", "3",
                        "--dtype", "fp16", "--out", str(tmp_path)])
    assert code == 1                                   # fp8 failed: the run says so
    result = json.loads((tmp_path / "matmul.json").read_text())
    assert len(result["results"]) == len(matmul.shapes(True)) == len(measured)
    assert "error" not in result["awq"] and result["awq"]["rows"][0]["section"] == "awq"
    assert result["moe"]["rows"][0]["section"] == "moe"           # ran after fp8 failed
    assert "fp8 build failed" in result["fp8"]["error"] and result["fp8"]["rows"] == []
    assert "RuntimeError" in result["fp8"]["traceback"]
    assert list(result["sections"]) == ["dense", "fp8", "awq", "moe"]
    assert result["sections"]["fp8"]["correct"] is False
    assert result["sections"]["moe"] == {"rows": 1, "correct": True,
                                         "wall_s": result["moe"]["wall_s"]}
    for name in ("matmul_fp8", "awq", "moe"):                     # this run's options mapped
        assert scripts[name].quick and scripts[name].check_only and scripts[name].repeats == 3
        assert scripts[name].constants == []                      # the script's own default
    assert scripts["awq"].dtype == "fp16" and scripts["matmul_fp8"].fp8_modes is None
    out = capsys.readouterr().out
    assert "table of awq: 1 rows" in out and "table of moe: 1 rows" in out
    summary = out[out.index("section "):]
    assert "FAILED: RuntimeError: fp8 build failed" in summary and "dense" in summary


def test_matmul_sections_alone_and_the_default(gpu, scripts, monkeypatch, tmp_path):
    measured = []
    monkeypatch.setattr(matmul, "measure", lambda *a: measured.append(a) or
                        {"kind": a[0], "m": a[1], "n": a[2], "k": a[3], "correct": True,
                         "error": 0.0, "tolerance": 1.0})
    assert matmul.main(["--moe", "--awq", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "matmul.json").read_text())
    assert not measured and result["results"] == [] and "fp8" not in result
    assert list(result["sections"]) == ["awq", "moe"] and not scripts["moe"].quick
    assert matmul.main(["--quick", "--decode-only", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "matmul.json").read_text())
    assert len(result["results"]) == len(matmul.QUICK_DECODE)     # the dense sweep, as before
    assert list(result["sections"]) == ["dense"] and "moe" not in result
    with pytest.raises(SystemExit, match="--route.*add --dense"):
        matmul.main(["--fp8", "--route", "gemv_nt"])


def test_attention_paged_section_runs_past_a_failed_prefill(gpu, monkeypatch, tmp_path,
                                                            capsys):
    def broken(torch, case, check_only, extra=()):
        raise RuntimeError("prefill build failed")
    monkeypatch.setattr(attention, "run_case", broken)
    real_load, specs = sections.load, []

    def load(filename):
        bench = real_load(filename)
        assert filename == "paged_decode.py"

        def run_case(torch, spec, check_only):
            specs.append(spec)
            return {**spec, "ktile": {"correct": True, "max_error": 0.0}, "route":
                    {"kernel": "paged_decode_ring"}, "tolerance": 1.0, "check": check_only}
        bench.run_case = run_case
        return bench
    monkeypatch.setattr(sections, "load", load)
    code = attention.main(["--all-sections", "--quick", "--check-only", "--out",
                           str(tmp_path)])
    assert code == 1
    result = json.loads((tmp_path / "attention.json").read_text())
    assert result["rows"] == [] and "prefill build failed" in result["sections"]["prefill"]["error"]
    assert len(result["paged"]["rows"]) == len(specs) == len(real_load("paged_decode.py")
                                                             .cases(True))
    assert all(row["check"] for row in result["paged"]["rows"])   # --check-only mapped
    assert result["sections"]["paged"]["correct"] is True
    out = capsys.readouterr().out
    assert "paged decode" in out and "FAILED: RuntimeError: prefill build failed" in out
    with pytest.raises(SystemExit, match="--constants.*add --prefill"):
        attention.main(["--paged", "--constants", "STAGES=2"])


def test_attention_default_is_the_prefill_sweep(gpu, monkeypatch, tmp_path):
    monkeypatch.setattr(attention, "run_case", lambda torch, case, check_only, extra=():
                        {**case, "max_error": 0.0, "tolerance": 1.0, "correct": True})
    monkeypatch.setattr(sections, "load", lambda filename: pytest.fail("paged ran"))
    assert attention.main(["--quick", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "attention.json").read_text())
    assert len(result["rows"]) == len(list(attention.cases(True))) and "paged" not in result
    assert list(result["sections"]) == ["prefill"]
