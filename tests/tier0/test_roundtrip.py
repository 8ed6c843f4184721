"""Every example's checked IR prints, parses and prints again to the same text (custom form;
generic form with locations), through the library and through `ktile-opt`; upstream
`mlir-opt` reads the generic form where Debian's mlir-22-tools is installed."""
import os
import subprocess
import sys

import pytest

from conftest import find_tool
from examples_index import EXAMPLE_NAMES, ROOT, traces
from ktile.ir.printing import module_text, parse_module


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_library_round_trip(name):
    # xDSL 0.75 prints scf.while's location where its own parser does not read it back, so the
    # custom form is checked without locations; the generic form with them.
    for trace in traces(name):
        for generic, locations in ((False, False), (True, True)):
            text = trace.dump(generic=generic, locations=locations)
            again = module_text(parse_module(text), generic=generic, locations=locations)
            assert again == text


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_example_verifies_when_read_back(name):
    """The kt ops' verifiers (ktile/ir/verifiers.py) accept everything the tracer gives, in
    both forms: a refusal here is a verifier stricter than the front end."""
    for trace in traces(name):
        for generic in (False, True):
            parse_module(trace.dump(generic=generic, locations=generic), verify=True)


def _opt(args, stdin):
    return subprocess.run([sys.executable, "-m", "ktile.tools.opt", *args], input=stdin,
                          capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": ROOT})


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_ktile_opt_round_trip(name):
    for trace in traces(name):
        text = trace.dump()
        result = _opt([], text)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == text.strip()


MLIR_OPT = find_tool("mlir-opt")


@pytest.mark.skipif(MLIR_OPT is None, reason="upstream mlir-opt (Debian mlir-22-tools) not installed")
@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_upstream_mlir_opt_reads_generic_form(name, tmp_path):
    for k, trace in enumerate(traces(name)):
        path = tmp_path / f"{name}_{k}.mlir"
        path.write_text(trace.dump(generic=True, locations=True))
        result = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", "--mlir-print-op-generic",
                                 "--mlir-print-local-scope", "--mlir-print-debuginfo", str(path)],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        ops = [line for line in trace.dump(generic=True).splitlines() if '"kt.' in line]
        assert sum('"kt.' in line for line in result.stdout.splitlines()) == len(ops)
        # and xDSL reads upstream's output back
        assert parse_module(result.stdout) is not None
