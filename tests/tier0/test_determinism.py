"""Determinism on the interpreter: every case of every example, run 10 times on the same
inputs, leaves bitwise-identical outputs in every kernel call (NaN patterns and signed zeros
included). The GPU suite checks the same on the H200 (`scripts/gpu_suite.py`)."""
import types

import pytest

from examples_index import EXAMPLE_NAMES, case_outputs, load, nondeterministic_calls, tensor_digest

torch = pytest.importorskip("torch")

RUNS = 10


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_case_is_bitwise_deterministic(name):
    module = load(name)
    for case in module.CASES:
        differ = nondeterministic_calls(module, case, RUNS, backend="interpret")
        assert not differ, f"{name} {case}: outputs differ between runs in {differ}"


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_kernel_of_the_example_is_recorded(name):
    """The recorder sees every kernel the example declares (so none escapes the check)."""
    module = load(name)
    called = {kernel for case in module.CASES
              for kernel, _ in case_outputs(module, case, backend="interpret")}
    assert {kernel.name for kernel, _ in module.KERNELS} <= called


def test_a_difference_between_runs_is_reported():
    """A 'kernel' whose output changes from run to run is named, with its call."""
    draws = iter(range(100))

    class Flaky:
        name = "flaky"

        def __call__(self, o, **options):
            o.fill_(float(next(draws)))

    def run_case(case, backend="interpret", target=None, device="cpu"):
        steady = torch.zeros(4)
        module.runner(Steady(), backend, device)(steady)
        module.runner(Flaky(), backend, device)(torch.zeros(4))

    class Steady:
        name = "steady"

        def __call__(self, o, **options):
            o.fill_(1.0)

    module = types.SimpleNamespace(__name__="fake_example", run_case=run_case,
                                   runner=lambda kernel, backend, device="cpu": kernel)
    assert nondeterministic_calls(module, None, RUNS) == ["flaky (call 2)"]


def test_digests_compare_bits_not_values():
    nan, zero = torch.tensor([float("nan")]), torch.tensor([0.0])
    assert tensor_digest(nan) == tensor_digest(nan.clone())
    assert tensor_digest(zero) != tensor_digest(-zero)
    assert tensor_digest(torch.ones(3, dtype=torch.bfloat16)) != tensor_digest(torch.ones(3))


# ---- the GPU suite's determinism and sweep parts, checked here on the CPU --------------------

def gpu_suite():
    import importlib.util
    import os
    from examples_index import ROOT
    spec = importlib.util.spec_from_file_location("gpu_suite", os.path.join(ROOT, "scripts",
                                                                          "gpu_suite.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sweep_calls_each_pair_right_or_refused_on_the_interpreter():
    suite = gpu_suite()
    result = suite.rmsnorm_sweep(load("02_rmsnorm"), backend="interpret", device="cpu",
                                 target="sm_90a", widths=(1024,), cols_choices=(64,),
                                 row_widths=(300, 2000), rows=20)
    verdicts = {(c["cols"], c["WIDTH"], c["COLS"]): c["result"] for c in result["calls"]}
    assert verdicts == {(300, 1024, 64): "right", (2000, 1024, 64): "refused"}
    assert result["ok"] and result["right"] == 1 and result["refused"] == 1


def test_the_sweep_names_a_wrong_answer_and_a_raw_error():
    import numpy as np
    from ktile.errors import KernelError
    suite = gpu_suite()
    x, want = torch.zeros((1, 1, 2, 2)), np.ones((1, 1, 2, 2), np.float32)

    def writes(value):
        return lambda o: o.fill_(value)

    def refuses_late(o):
        o.fill_(1.0)
        raise KernelError("too late")

    def crashes(o):
        raise ValueError("raw numpy trouble")
    assert suite.sweep_verdict(writes(1.0), x, want, 0.0) == "right"
    assert suite.sweep_verdict(writes(2.0), x, want, 0.5) == "wrong"
    assert suite.sweep_verdict(lambda o: None, x, want, 0.5) == "wrong"        # left NaN
    assert suite.sweep_verdict(refuses_late, x, want, 0.0) == "error: refused after writing its output"
    assert suite.sweep_verdict(crashes, x, want, 0.0) == "error: ValueError: raw numpy trouble"


def test_the_table_reports_determinism_and_the_sweep(capsys):
    suite = gpu_suite()
    summary = {"device": "fake", "torch": "0", "seconds": 1.0, "copy_GBps": 1.0, "examples": {
        "01_vector_add": {"builds": [], "checks": [], "determinism": {"ok": True}},
        "03_softmax": {"builds": [], "checks": [], "determinism": {"ok": False}}},
        "rmsnorm_sweep": {"right": 3, "refused": 2, "failing": 1, "failures": [
            {"cols": 5120, "WIDTH": 5120, "COLS": 128, "result": "wrong"}]}}
    suite.print_table(summary)
    lines = capsys.readouterr().out.splitlines()
    assert "det" in next(line for line in lines if line.startswith("example"))
    assert "ok" in next(line for line in lines if line.startswith("01_vector_add")).split()[4]
    assert "FAIL" == next(line for line in lines if line.startswith("03_softmax")).split()[4]
    assert "3 right, 2 refused, 1 failing" in "\n".join(lines)
    assert "FAIL cols 5120 WIDTH 5120 COLS 128: wrong" in "\n".join(lines)
