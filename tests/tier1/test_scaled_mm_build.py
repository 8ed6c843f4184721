"""Tier 1 build of scaled_mm's fp8 kernel (`fp8_ws_nt`, issue #11) on sm_90a: nvcc compiles
it with no spill, no stack and no wgmma serialized by ptxas (C7514 / C7517), 168 registers at
launch (the 384-thread block's share; setmaxnreg gives the consumers 240); both operands
reach `wgmma m64nBNk32.f32.e4m3.e4m3` by descriptor (no ldmatrix, no mma.sync), BK / 32 of
them a stage, copied by TMA. Promoted (PROMOTE, every route): each stage's MMAs complete
(wait_group 0) and BN / 2 fp32 adds a lane fold them into the fp32 accumulators; the
use_fast_accum routes (PROMOTE False, 128 x 256) keep one MMA group in flight and adds
nothing. CI builds the widest route (per-tensor, promoted 128 x 192) in bf16;
KTILE_OPS_FULL_BUILD=1 builds every sm_90a route's form in every output dtype, the
use_fast_accum routes included (about 45 builds, 4 s each on 2 shared cores).
gfx950's routes go through tests/tier1/test_ops_build.py (clang-22, the cocheck gate)."""
import re
import subprocess
import warnings

import pytest

from ktile import config as knobs
from ktile.ops.scaled_mm import config
from ktile.ops.scaled_mm.op import NAMES, OP
from test_hopper_headers import FLAGS, NVCC, nvcc_build

pytestmark = pytest.mark.tier1

WIDEST = next(r for r in config.TABLE.routes
              if r.constants["BN"] == 192 and not r.constants["ROWWISE"] | r.constants["BIAS"])
CASES = [(WIDEST, "fp8-bf16")]
if knobs.OPS_FULL_BUILD.get() == "1":       # the use_fast_accum routes (PROMOTE False) too
    CASES = [(route, dtype) for route in config.TABLE.routes for dtype in NAMES
             if "sm_90a" in route.targets]


def case_id(case) -> str:
    route, dtype = case
    return "-".join(f"{k}{v}" for k, v in sorted(route.constants.items())) + f"-{dtype}"


@pytest.fixture(scope="module", params=CASES, ids=[case_id(c) for c in CASES])
def built(request, tmp_path_factory):
    if NVCC is None:
        pytest.skip("tier 1: nvcc not found")
    route, dtype = request.param
    folder = tmp_path_factory.mktemp("scaled_mm")
    kernel = OP.kernel(route, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the budgets pass's estimate; ptxas decides here
        source = kernel.trace("sm_90a", **route.constants).source()
    cu = folder / "k.cu"
    cu.write_text(source)
    flags = [f for f in FLAGS if f not in ("-cubin", "-Xptxas", "-v")]
    ptx = subprocess.run([NVCC, *flags, "-ptx", str(cu), "-o", str(folder / "k.ptx")],
                         capture_output=True, text=True, timeout=300)
    assert ptx.returncode == 0, ptx.stderr[-3000:]
    return route, kernel.name, (folder / "k.ptx").read_text(), nvcc_build(source, folder, "k")


def test_builds_with_no_spill_and_no_serialized_wgmma(built):
    _, name, _, build = built
    assert build.returncode == 0, build.log[-3000:]
    res = build.functions[name]
    assert (res.spill_stores, res.spill_loads, res.stack_frame) == (0, 0, 0), res
    assert res.registers == 168, res
    assert "C7514" not in build.log and "C7517" not in build.log, build.log[-3000:]


def test_tma_into_fp8_wgmma_by_descriptor_promoted_or_in_flight(built):
    route, _, ptx, _ = built
    bn, promote = route.constants["BN"], route.constants["PROMOTE"]
    issues = re.findall(rf"wgmma\.mma_async\.sync\.aligned\.m64n{bn}k32\.f32\.e4m3\.e4m3 "
                        r"\{[^}]*\}, (\S+), (\S+),", ptx)
    assert len(issues) == 128 // 32, issues          # BK 128: four k32 steps a stage
    assert all(a.startswith("%rd") and b.startswith("%rd") for a, b in issues)
    assert "ldmatrix" not in ptx and "mma.sync" not in ptx
    assert "cp.async.bulk.tensor" in ptx
    waits = [int(n) for n in re.findall(r"wgmma\.wait_group\.sync\.aligned (\d+);", ptx)]
    adds = len(re.findall(r"\badd\.f32\b", ptx))
    bias_adds = bn // 2 if route.constants["BIAS"] else 0    # nvcc may fold them into FMAs
    if promote:
        assert waits[0] == 0 and adds >= bn // 2, (waits, adds)
    else:
        assert 1 in waits and waits[-1] == 0 and adds < bn // 2 + bias_adds, (waits, adds)


@pytest.mark.skipif(knobs.OPS_FULL_BUILD.get() != "1", reason="KTILE_OPS_FULL_BUILD=1 only")
@pytest.mark.parametrize("rowwise", [False, True])
@pytest.mark.parametrize("variant", [dict(STAGES=2, PROMOTE_K=256),
                                     dict(BN=128, STAGES=3, PAIR=True)], ids=["k256", "pair"])
def test_promotion_variants_build_clean(variant, rowwise, tmp_path):
    """The PROMOTE_K 256 (128 x 192, 2 stages of two K blocks) and PAIR (128 x 128, 3)
    variants (kernels.py; pinnable, not routed): 0 spills and no wgmma wait injected or
    serialized by ptxas (LAG gets C7517, kernels.py says why)."""
    if NVCC is None:
        pytest.skip("tier 1: nvcc not found")
    constants = dict(WIDEST.constants, ROWWISE=rowwise, **variant)
    kernel = OP.kernel(WIDEST, "fp8-bf16")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        source = kernel.trace("sm_90a", **constants).source()
    build = nvcc_build(source, tmp_path, "k")
    assert build.returncode == 0, build.log[-3000:]
    res = build.functions[kernel.name]
    assert (res.spill_stores, res.spill_loads, res.stack_frame) == (0, 0, 0), res
    assert not any(code in build.log for code in ("C7514", "C7515", "C7517")), build.log[-3000:]
