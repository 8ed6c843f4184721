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
