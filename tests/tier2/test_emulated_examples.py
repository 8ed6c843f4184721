"""Every example, run under wave emulation of gfx1100 (RDNA3, wave32) and gfx950 (CDNA4, wave64,
global->LDS DMA), matches its reference at each of its shapes, ragged edges included: the
generated AMD C++ and every tile header above the instruction layer, on the host CPU, with the
ISA's preconditions checked as it runs."""
import os
import subprocess
import sys

import pytest

from examples_index import EXAMPLE_NAMES, ROOT, load

pytestmark = pytest.mark.tier2

TARGETS = ("gfx1100", "gfx950")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_matches_reference_under_emulation(name, target):
    module = load(name)
    assert len(module.CASES) >= 2
    for case in module.CASES:
        err, tol = module.run_case(case, backend="emulate", target=target)
        assert err <= tol, f"{name} {case} on emulated {target}: max error {err} > tolerance {tol}"


def _example(*args):
    return subprocess.run([sys.executable, "examples/01_vector_add.py", *args], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT})


def test_emulate_flag_runs_every_case_and_refuses_other_vendors():
    run = _example("--emulate", "--target", "gfx950")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 of 4 cases match the reference (wave emulation, target gfx950)" in run.stdout
    refused = _example("--emulate", "--target", "sm_90a")
    assert refused.returncode != 0 and "--emulate runs AMD targets; sm_90a is not one" in refused.stderr
