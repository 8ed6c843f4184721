"""Every example matches its reference on the interpreter at each of its shapes (three or more,
ragged edges included) and translates for every target; the example scripts' command lines work
and exit non-zero on a mismatch."""
import os
import subprocess
import sys
import types

import pytest

from examples_index import EXAMPLE_NAMES, ROOT, load
from ktile import targets

pytest.importorskip("torch")


def test_there_are_eleven_examples():
    assert len(EXAMPLE_NAMES) == 11


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_matches_reference_at_every_shape(name):
    module = load(name)
    assert len(module.CASES) >= 3
    for case in module.CASES:
        err, tol = module.run_case(case, backend="interpret")
        assert err <= tol, f"{name} {case}: max error {err} > tolerance {tol}"


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_has_a_ragged_case(name):
    """At least one case is not a multiple of the example's tiles (16 rows × 16+ columns)."""
    module = load(name)
    def ragged(case):
        numbers = [v for v in _flatten(case) if isinstance(v, int) and not isinstance(v, bool)]
        return any(v % 16 for v in numbers if v > 1)
    assert any(ragged(c) for c in module.CASES)


def _flatten(case):
    if isinstance(case, (tuple, list)):
        for item in case:
            yield from _flatten(item)
    else:
        yield case


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
@pytest.mark.parametrize("target", targets.NAMES)
def test_example_translates(name, target):
    for kernel, constants in load(name).KERNELS:
        cpp = kernel.source(target=target, **constants)
        assert f"void {kernel.name}(" in cpp


def _run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": ROOT})


def test_example_command_lines():
    ir = _run("examples/04_gemm.py", "--dump", "ir")
    assert ir.returncode == 0 and '"kt.mma"' in ir.stdout and "vm = " in ir.stdout
    cpp = _run("examples/04_gemm.py", "--dump", "cpp", "--target", "sm_90a")
    assert cpp.returncode == 0 and "kt::mma_ABt" in cpp.stdout and "hopper" in cpp.stdout
    run = _run("examples/01_vector_add.py", "--interpret")
    assert run.returncode == 0 and "4 of 4 cases match" in run.stdout


def test_example_main_exits_non_zero_on_a_mismatch(monkeypatch):
    from common import example_main
    fake = {"__doc__": "fake example", "KERNELS": [], "CASES": [(1,), (2,)],
            "run_case": lambda case, backend, target, device: (1.0 if case == (2,) else 0.0, 0.5)}
    monkeypatch.setattr(sys, "argv", ["fake"])
    with pytest.raises(SystemExit) as exit_info:
        example_main(fake)
    assert exit_info.value.code == 1
