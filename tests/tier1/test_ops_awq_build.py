"""W4A16's routes (ktile/ops/awq/config.py) beyond the narrowest and widest, which
tests/tier1/test_ops_build.py builds for sm_90a, gfx950 and gfx1100: the decode GEMV at MB 2
and 4 in bf16 and fp16 on sm_90a (ptxas: no spill, no stack, at least 3 resident blocks of 4
warps: its loads in flight come from resident warps; config.py lists the registers), and the
AMD targets' widest decode route at gfx950 (clang: no VGPR or SGPR spill, no scratch); the
sm_90a prefill GEMM (wgmma_ws_nn, b [K, N] by the N-major descriptor; not routed): its widest
form in bf16 (no spill, no stack, the stages within the 227 KB a block may hold), every
form and dtype under KTILE_OPS_FULL_BUILD=1."""
import os

import pytest

import build_gates

from ktile.ops.awq import config
from ktile.ops.awq.op import OP
from toolchain_checks import has_nvcc

pytestmark = pytest.mark.tier1

SM90 = [r for r in config.DECODE_ROUTES if r.targets == ("sm_90a",)]
MIDDLE = SM90[1:]
# wgmma_ws_nn is not routed while it is wrong on the H200 (config.py): its former routes, built
GEMMS = [config.wgmma_nn(128, 6, max_rows=config.WS_SMALL_M), config.wgmma_nn(256, 4)]
FULL = os.environ.get("KTILE_OPS_FULL_BUILD") == "1"
GEMM_CASES = [(r, d) for r in GEMMS for d in ("bf16", "fp16")] if FULL else [(GEMMS[-1], "bf16")]
AMD_WIDEST = [r for r in config.DECODE_ROUTES if r.targets and "gfx950" in r.targets][-1]


@pytest.mark.skipif(not has_nvcc(), reason="needs nvcc")
@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("route", MIDDLE, ids=lambda r: f"MB{r.constants['MB']}")
def test_decode_routes_build_clean_on_sm90a(route, dtype):
    build = OP.kernel(route, dtype).build(target="sm_90a", **route.constants)
    res = build.resources
    assert (res.spill_stores, res.spill_loads, res.stack_bytes) == (0, 0, 0), res
    assert res.occupancy.warps // route.constants["WARPS"] >= 3, res


def test_widest_decode_route_builds_clean_on_gfx950(tmp_path):
    route = AMD_WIDEST
    source = OP.kernel(route, "bf16").trace("gfx950", **route.constants).source()
    build = build_gates.amd().amd_build(source, tmp_path, "awq_gemv_amd_widest", "gfx950")
    build_gates.amd().assert_clean(build, "awq_gemv_partials", "awq_gemv_amd_widest")


@pytest.mark.skipif(not has_nvcc(), reason="needs nvcc")
@pytest.mark.parametrize("route,dtype", GEMM_CASES,
                         ids=lambda v: v if isinstance(v, str) else f"BN{v.constants['BN']}")
def test_prefill_gemm_builds_clean_on_sm90a(route, dtype):
    res = OP.kernel(route, dtype).build(target="sm_90a", **route.constants).resources
    assert (res.spill_stores, res.spill_loads, res.stack_bytes) == (0, 0, 0), res
    assert res.shared_dynamic + res.shared_static <= 227 * 1024, res
