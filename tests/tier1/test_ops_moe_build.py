"""Tier 1 build of the MoE grouped GEMM (`moe_gemm_nt`) at each block size's sm_90a route, in
its routed-weight form (the larger of the two): nvcc compiles it with no spill and no stack,
and at least MIN_WARPS warps of it fit a multiprocessor (the gather's registers are what
limits it: ktile/ops/moe/config.py). tests/tier1/test_ops_build.py builds the table's ends
on every target too."""
import pytest

from ktile.ops.moe import config, kernels
from toolchain_checks import has_nvcc

pytestmark = [pytest.mark.tier1, pytest.mark.skipif(not has_nvcc(), reason="needs nvcc")]

MIN_WARPS = 12
ROUTES = [r for r in config.ROUTES if r.constants["ROUTED"]
          and (r.targets is None or "sm_90a" in r.targets)]


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"BM{r.constants['BM']}")
def test_route_builds_clean_at_its_occupancy(route):
    res = kernels.moe_gemm("bf16").build(target="sm_90a", **route.constants).resources
    assert res.spill_stores == 0 and res.spill_loads == 0 and res.stack_bytes == 0
    assert res.occupancy.warps >= MIN_WARPS, res
