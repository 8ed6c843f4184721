"""Element coordinates with the real compilers (no GPU needed): every kernel of the tier-0
element-offset tests, and the warp-count kernel at two counts, builds for all five targets
through the resource gate (zero spills), and the wide global accesses survive an element
offset: the AMD code object still has 16-byte buffer loads and the sm_90a PTX 16-byte loads."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ktile.runtime.cocheck.llvm import find_tool
from ktile.runtime.toolchains import amd

TIER0 = Path(__file__).resolve().parents[1] / "tier0"
TARGETS = ("gfx1100", "gfx1201", "gfx942", "gfx950", "sm_90a")


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"_w4b_{name}", TIER0 / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _missing(target: str) -> str | None:
    if target == "sm_90a":
        return None if shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc") \
            else "nvcc"
    clang = shutil.which("clang++-22") or os.access(amd.CLANG_FALLBACK, os.X_OK)
    tools = [] if clang else ["clang++-22"]
    tools += [t for t in ("ld.lld", "llvm-readelf", "llvm-objdump") if not find_tool(t)]
    return ", ".join(tools) or None


pytestmark = pytest.mark.tier1
# the resource report's spill line: AMD counts registers and scratch, sm_90a ptxas bytes
NO_SPILLS = re.compile(r"spills +0 (VGPRs, 0 SGPRs; scratch 0 bytes|bytes stored, 0 bytes loaded)")
offsets = _module("test_element_offsets")
warps = _module("test_warps_constant")
CASES = [("shifted", {}), ("store_shifted", {}), ("vector_at", {}), ("group_at", {}),
         ("group_at", {"C0": 3})]


def _skip_without_tools(target: str) -> None:
    missing = _missing(target)
    if missing:
        pytest.skip(f"tier 1: {target} needs {missing}")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KTILE_CACHE_DIR", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name, constants", CASES, ids=[f"{n}{c or ''}" for n, c in CASES])
def test_an_element_offset_kernel_builds_without_spills(target, name, constants, cache_dir):
    _skip_without_tools(target)
    build = getattr(offsets, name).build(target, **constants)
    report = build.report()
    assert NO_SPILLS.search(report), report


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("count", [2, 8])
def test_the_warps_constant_builds_at_each_count(target, count, cache_dir):
    _skip_without_tools(target)
    build = warps.doubled.build(target, WARPS=count)
    assert NO_SPILLS.search(build.report()), build.report()


@pytest.mark.parametrize("target", ["gfx1100", "gfx950"])
def test_an_element_offset_keeps_the_wide_amd_loads(target, cache_dir):
    """A row-layout fp32 tile at an element offset still has the 16-byte runs path (chosen at
    run time from the origin's alignment) beside the per-element one for unaligned offsets."""
    _skip_without_tools(target)
    report = offsets.shifted.build(target).report()
    assert re.search(r"global loads +\d+ \(128-bit \d+", report), report


def test_an_element_offset_keeps_the_wide_hopper_loads(cache_dir):
    _skip_without_tools("sm_90a")
    source = offsets.shifted.source("sm_90a")
    folder = cache_dir / "ptx"
    folder.mkdir()
    from test_hopper_headers import FLAGS, NVCC
    cu, out = folder / "shifted.cu", folder / "shifted.ptx"
    cu.write_text(source)
    flags = [f for f in FLAGS if f not in ("-cubin", "-Xptxas", "-v")]
    run = subprocess.run([NVCC, *flags, "-ptx", str(cu), "-o", str(out)], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "ld.global.ca.v4" in out.read_text()
