"""examples/validate.py on the interpreter (two ops, small shapes) and the examples' "library op"
sections: the library function matches the reference the example's kernel is checked against."""
import importlib.util
import os
import sys

import pytest

from examples_index import load

pytest.importorskip("torch")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("name", ["01_vector_add", "02_rmsnorm", "03_softmax"])
def test_the_library_op_of_an_example_matches_its_reference(name):
    err, tol = load(name).library_case()
    assert err <= tol, f"{name}: library op error {err} > {tol}"


def validate(monkeypatch, capsys, *argv):
    monkeypatch.setattr(sys, "argv", ["validate.py", *argv])
    module = load_file(os.path.join(ROOT, "examples", "validate.py"))
    try:
        code = module.main()
    finally:
        from ktile.bench import cases
        cases.DEVICE[0] = "cuda"
    out, err = capsys.readouterr()
    return code, out, err


def load_file(path):
    spec = importlib.util.spec_from_file_location("ktile_validate_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_validate_checks_ops_against_torch_and_prints_one_table(monkeypatch, capsys):
    code, out, _ = validate(monkeypatch, capsys, "--cpu", "--only", "add,softmax,dropout")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith("ktile.ops on the CPU interpreter")
    assert [line.split()[0] for line in lines[2:5]] == ["add", "softmax", "dropout"]
    assert " ok " in lines[2] and "ran (other RNG)" in lines[4]
    assert lines[-1] == "3 of 3 ops match torch"


def test_validate_refuses_an_unknown_op(monkeypatch, capsys):
    code, _, err = validate(monkeypatch, capsys, "--cpu", "--only", "nope")
    assert code == 2 and "unknown ops ['nope']" in err
