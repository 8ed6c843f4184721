"""The flat layout compiles for every target: sm_90a holds it in kt::flat (flat_tile.hpp:
16-byte loads and stores, no shuffles in them), the AMD targets in their row layout (the
generated C++ says kt::row; each element still lives in one lane). Zero spills everywhere."""
import re
import subprocess

import pytest

import build_gates
from flat_kernels import flat_extremes, flat_rms

pytestmark = pytest.mark.tier1

CONSTANTS = {"C": 64, "HELD": 2, "WARPS": 4}


def test_sm90a_holds_flat_tiles_in_memory_order_with_wide_accesses(tmp_path):
    source = flat_rms.trace("sm_90a", **CONSTANTS).source()
    assert "kt::rt<kt::bf16, 16, 64, kt::flat, kt::frag_none>" in source
    assert "kt::tile_sum(" in source
    build = build_gates.hopper().nvcc_build(source, tmp_path, "flat_rms")
    build_gates.assert_sm90a_clean(build, "flat_rms")
    ptx = _ptx(source, tmp_path)
    loads = re.findall(r"ld\.global\.[a-z0-9.]*", ptx)
    assert any(".v4." in f"{op}." for op in loads), f"no 16-byte global load: {set(loads)}"
    # the only shuffles are the whole-tile sum's butterfly (5 steps), none in loads or stores
    assert len(re.findall(r"shfl\.sync", ptx)) <= 5 * 2


def _ptx(source: str, folder) -> str:
    hopper = build_gates.hopper()
    cu = folder / "flat_rms_ptx.cu"
    cu.write_text(source)
    flags = [f for f in hopper.FLAGS if f not in ("-cubin",)]
    subprocess.run([hopper.NVCC, *flags, "-ptx", str(cu), "-o", str(folder / "flat.ptx")],
                   check=True, capture_output=True, timeout=300)
    return (folder / "flat.ptx").read_text()


@pytest.mark.parametrize("target", ["gfx1100", "gfx950"])
def test_amd_targets_hold_flat_tiles_in_their_row_layout(tmp_path, target):
    for kernel, constants in ((flat_rms, CONSTANTS), (flat_extremes, {})):
        source = kernel.trace(target, **constants).source()
        assert "kt::flat" not in source and "kt::row" in source
        build = build_gates.amd().amd_build(source, tmp_path, kernel.name, target)
        build_gates.amd().assert_clean(build, kernel.name, f"{kernel.name} on {target}")


def test_sm90a_builds_iota_and_whole_tile_extremes_in_the_flat_layout(tmp_path):
    source = flat_extremes.trace("sm_90a").source()
    build = build_gates.hopper().nvcc_build(source, tmp_path, "flat_extremes")
    build_gates.assert_sm90a_clean(build, "flat_extremes")
