"""Issue #10's kernels (tests/shared_ops_kernels.py: sub-tile shared stores, cross-warp tile
reductions, split-K) compile for every target with zero spills: clang++-22 for gfx1100,
gfx1201, gfx942 and gfx950 with the cocheck gate (no spill, no scratch, waits and LDS races
checked), nvcc for sm_90a with ptxas's spill counts."""
import sys
from pathlib import Path

import pytest

import build_gates

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import shared_ops_kernels as K  # noqa: E402

pytestmark = pytest.mark.tier1

AMD_TARGETS = ("gfx1100", "gfx1201", "gfx942", "gfx950")
NAMES = sorted(K.KERNELS)


@pytest.mark.parametrize("target", AMD_TARGETS)
@pytest.mark.parametrize("name", NAMES)
def test_amd_build_is_clean(tmp_path, name, target):
    amd = build_gates.amd()
    kernel, constants = K.KERNELS[name]
    build = amd.amd_build(kernel.trace(target, **constants).source(), tmp_path, name, target)
    amd.assert_clean(build, kernel.name, f"{name} on {target}")


@pytest.mark.parametrize("name", NAMES)
def test_sm90a_build_has_no_spills(tmp_path, name):
    hopper = build_gates.hopper()
    kernel, constants = K.KERNELS[name]
    build = hopper.nvcc_build(kernel.trace("sm_90a", **constants).source(), tmp_path, name)
    build_gates.assert_sm90a_clean(build, kernel.name)
