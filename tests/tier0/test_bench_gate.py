"""The performance gate (ktile/bench/gate.py) on synthetic results: a shape slower than its
recorded figure by more than the noise allows is a regression; within the noise it is not."""
from ktile.bench import gate


def rows(*times):
    """Result rows of one op: (label, ms, noise) each; ms None for a ktile failure."""
    out = []
    for label, ms, noise in times:
        entry = {"failed": "RuntimeError"} if ms is None else {"ms": ms, "noise": noise}
        out.append({"label": label, "ktile": entry})
    return out


def recorded(**ops):
    run = {op: rows(*shapes) for op, shapes in ops.items()}
    return gate.record(run, {"device": "NVIDIA H200", "torch": "2.11", "date": "2026-12-01"})


def verdicts(findings):
    return {(f["op"], f["shape"]): f["verdict"] for f in findings}


def test_record_keeps_ktile_median_and_noise_per_shape():
    base = recorded(rms_norm=[("1x4096", 0.010, 0.02), ("4096x4096", 0.020, 0.01),
                              ("1x8192", None, 0.0)])
    assert base["device"] == "NVIDIA H200" and base["recorded"] == "2026-12-01"
    assert base["ops"]["rms_norm"] == {"1x4096": {"ms": 0.010, "noise": 0.02},
                                       "4096x4096": {"ms": 0.020, "noise": 0.01}}


def test_slower_beyond_the_noise_is_a_regression_and_within_it_is_not():
    base = recorded(rms_norm=[("a", 0.100, 0.01), ("b", 0.100, 0.01), ("c", 0.100, 0.10)])
    run = {"rms_norm": rows(("a", 0.130, 0.01), ("b", 0.103, 0.01), ("c", 0.130, 0.10))}
    found = verdicts(gate.compare(run, base))
    assert found[("rms_norm", "a")] == "regression"      # +30%, noise allows 5% (the floor)
    assert found[("rms_norm", "b")] == "same"            # +3%, under the floor
    assert found[("rms_norm", "c")] == "same"            # +30%, noisy: allows 2·(10%+10%)


def test_faster_new_and_failed_shapes_are_reported_as_such():
    base = recorded(softmax=[("a", 0.100, 0.0)])
    run = {"softmax": rows(("a", 0.050, 0.0), ("new", 0.1, 0.0), ("a2", None, 0.0)),
           "embedding": rows(("x", 0.1, 0.0))}
    found = verdicts(gate.compare(run, base))
    assert found == {("softmax", "a"): "faster", ("softmax", "new"): "new",
                     ("softmax", "a2"): "failed", ("embedding", "x"): "new"}
    bad = gate.regressions(gate.compare(run, base))
    assert [(f["op"], f["shape"]) for f in bad] == [("softmax", "a2")]


def test_the_report_names_each_regression_with_its_times():
    base = recorded(add=[("16777216", 0.010, 0.0)])
    findings = gate.compare({"add": rows(("16777216", 0.020, 0.0))}, base)
    text = gate.text(findings, base)
    assert "1 regression" in text
    assert "SLOWER add 16777216: 20.0 µs vs 10.0 µs recorded (+100%" in text


def test_the_baseline_file_is_named_after_the_device():
    assert gate.device_slug("NVIDIA H200") == "nvidia_h200"
    assert gate.baseline_path("NVIDIA H200", root="/r") == \
        "/r/docs/results/perf_baseline_nvidia_h200.json"
