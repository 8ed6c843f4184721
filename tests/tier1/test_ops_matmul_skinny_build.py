"""Tier 1 build of sm_90a's skinny route (`skinny_wgmma_nt` at its shipped constants): nvcc
compiles it with no spill, no stack and no wgmma serialized by ptxas (C7514 / C7517), within
the registers that leave the resident blocks its split count assumes; both operands reach the
wgmma by descriptor (no ldmatrix), both by TMA (cp.async.bulk.tensor), and one MMA stays in
flight in the K loop (`wgmma.wait_group 1`, 0 only before the partial's store)."""
import re
import subprocess

import pytest

from ktile.ops.matmul import config
from ktile.ops.matmul.op import OP
from test_hopper_headers import FLAGS, NVCC, nvcc_build

pytestmark = pytest.mark.tier1

ROUTE = config.SKINNY_WGMMA_ROUTES[0]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if NVCC is None:
        pytest.skip("tier 1: nvcc not found")
    folder = tmp_path_factory.mktemp("skinny_wgmma")
    kernel = OP.kernel(ROUTE, "bf16")
    trace = kernel.trace("sm_90a", **ROUTE.constants)
    source = trace.source()
    cu = folder / "k.cu"
    cu.write_text(source)
    flags = [f for f in FLAGS if f not in ("-cubin", "-Xptxas", "-v")]
    ptx = subprocess.run([NVCC, *flags, "-ptx", str(cu), "-o", str(folder / "k.ptx")],
                         capture_output=True, text=True, timeout=300)
    assert ptx.returncode == 0, ptx.stderr[-3000:]
    return kernel.name, trace, (folder / "k.ptx").read_text(), nvcc_build(source, folder, "k")


def test_builds_with_no_spill_and_no_serialized_wgmma(built):
    name, trace, _, build = built
    assert build.returncode == 0, build.log[-3000:]
    res = build.functions[name]
    assert (res.spill_stores, res.spill_loads, res.stack_frame) == (0, 0, 0), res
    assert "C7514" not in build.log and "C7517" not in build.log, build.log[-3000:]
    # the split count assumes the blocks that shared memory allows are resident: registers
    # must allow as many (4 warps of 32 lanes a block)
    sm = config.sm90a_multiprocessor()
    c = ROUTE.constants
    shared_blocks = sm.shared_bytes // (c["STAGES"] * (64 + c["BN"]) * c["BK"] * 2
                                        + sm.shared_reserved_per_block)
    assert sm.register_limited_warps(res.registers, trace.warps) >= 4 * shared_blocks, res


def test_tma_into_wgmma_by_descriptor_one_group_in_flight(built):
    _, _, ptx, _ = built
    bn = ROUTE.constants["BN"]
    issues = re.findall(rf"wgmma\.mma_async\.sync\.aligned\.m64n{bn}k16\.f32\.bf16\.bf16 "
                        r"\{[^}]*\}, (\S+), (\S+),", ptx)
    assert issues and all(a.startswith("%rd") and b.startswith("%rd") for a, b in issues)
    assert "ldmatrix" not in ptx
    assert "cp.async.bulk.tensor" in ptx
    waits = [int(n) for n in re.findall(r"wgmma\.wait_group\.sync\.aligned (\d+);", ptx)]
    assert 1 in waits and waits[-1] == 0, waits
