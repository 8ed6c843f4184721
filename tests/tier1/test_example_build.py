"""`--build` on an example compiles it for the target, runs the resource gate and prints the
report, on a machine without a GPU."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(shutil.which("nvcc") is None and
                                 not os.path.exists("/usr/local/cuda/bin/nvcc"),
                                 reason="tier 1: needs nvcc for sm_90a")]


def test_build_flag_compiles_gates_and_reports(tmp_path):
    env = {**os.environ, "PYTHONPATH": ROOT, "KTILE_CACHE_DIR": str(tmp_path)}
    run = subprocess.run([sys.executable, "examples/04_gemm.py", "--build", "--target", "sm_90a"],
                         cwd=ROOT, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("kernel '") == 3            # gemm, gemm_warps and gemm_wgmma
    assert "spills        0 bytes stored, 0 bytes loaded" in run.stdout
    assert "(built, key" in run.stdout
