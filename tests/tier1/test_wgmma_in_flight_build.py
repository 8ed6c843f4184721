"""Tier 1 builds of the wgmma kept in flight: matmul's `wgmma_nt` for sm_90a compiles with no
spill and no wgmma serialized by ptxas (C7514: a non-wgmma instruction read an accumulator
in flight; C7517: ptxas injected a wait), reads A by descriptor too (the "ss" form: no
ldmatrix of A) and keeps one group in flight in its K loop (`wgmma.wait_group 1`); the
example's `sa @ sb.T` GEMM compiles for gfx950 (load-then-MMA there) with no spill."""
import re
import subprocess

import pytest

from examples_index import load
from ktile.ops.matmul import tiles
from test_amd_build import MISSING
from test_hopper_headers import FLAGS, NVCC, nvcc_build

pytestmark = pytest.mark.tier1


@pytest.fixture(scope="module")
def wgmma_nt(tmp_path_factory):
    if NVCC is None:
        pytest.skip("tier 1: nvcc not found")
    folder = tmp_path_factory.mktemp("wgmma_nt")
    kernel = tiles.wgmma_nt("bf16")
    source = kernel.trace("sm_90a").source()
    cu = folder / "k.cu"
    cu.write_text(source)
    flags = [f for f in FLAGS if f not in ("-cubin", "-Xptxas", "-v")]
    ptx = subprocess.run([NVCC, *flags, "-ptx", str(cu), "-o", str(folder / "k.ptx")],
                         capture_output=True, text=True, timeout=300)
    assert ptx.returncode == 0, ptx.stderr[-3000:]
    return kernel.name, source, (folder / "k.ptx").read_text(), nvcc_build(source, folder, "k")


def test_builds_with_no_spill_and_no_serialized_wgmma(wgmma_nt):
    name, _, _, build = wgmma_nt
    assert build.returncode == 0, build.log[-3000:]
    res = build.functions[name]
    assert (res.spill_stores, res.spill_loads, res.stack_frame) == (0, 0, 0), res
    assert "C7514" not in build.log and "C7517" not in build.log, build.log[-3000:]


def test_both_operands_by_descriptor_and_one_group_in_flight(wgmma_nt):
    _, source, ptx, _ = wgmma_nt
    issues = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 "
                        r"\{[^}]*\}, (\S+), (\S+),", ptx)
    assert issues and all(a.startswith("%rd") and b.startswith("%rd") for a, b in issues)
    assert "ldmatrix" not in ptx                       # no shared->register load of A
    waits = [int(n) for n in re.findall(r"wgmma\.wait_group\.sync\.aligned (\d+);", ptx)]
    assert 1 in waits and waits[-1] == 0, waits       # in the K loop, then before the store
    loop = source[source.index("for ("):]
    assert "kt::wgmma_wait<1>()" in loop[:loop.index("\n  }")]


@pytest.mark.skipif(bool(MISSING), reason="tier 1: needs LLVM 22")
def test_the_shared_a_gemm_compiles_for_gfx950_without_spills(tmp_path):
    from ktile.runtime.build import build_trace
    from ktile.runtime.cache import BuildCache
    gemm = load("04_gemm").gemm_wgmma
    build = build_trace(gemm.trace("gfx950"), cache=BuildCache(tmp_path))
    res = build.quality.checked.resources
    assert (res.vgpr_spills, res.sgpr_spills, res.scratch_bytes) == (0, 0, 0), build.report()
