"""Tier 1 build of sm_90a's streaming decode GEMV (`gemv_stream_nt`) at each shipped route:
nvcc compiles it with no spill and no stack, and the blocks per multiprocessor the op's grid
assumes (`config.STREAM_BLOCKS_PER_SM`: the grid is one resident wave, so a persistent warp's
groups are spread evenly) are what ptxas's registers allow, no more (a second wave would
leave its warps' groups for last) and no fewer (idle residency: fewer W loads in flight)."""
import pytest

from ktile.ops.matmul import config
from ktile.ops.matmul.op import OP
from toolchain_checks import has_nvcc

pytestmark = [pytest.mark.tier1, pytest.mark.skipif(not has_nvcc(), reason="needs nvcc")]

ROUTES = config.STREAM_ROUTES


def key(route) -> tuple:
    c = route.constants
    return c["MB"], c["RW"], c["UNROLL"], c["DEPTH"]


@pytest.mark.parametrize("route", ROUTES, ids=key)
def test_route_builds_at_the_residency_its_grid_assumes(route):
    build = OP.kernel(route, "bf16").build(target="sm_90a", **route.constants)
    res = build.resources
    assert res.spill_stores == 0 and res.spill_loads == 0 and res.stack_bytes == 0
    assert res.occupancy.warps // route.constants["WARPS"] == config.STREAM_BLOCKS_PER_SM[key(route)]
    assert config.stream_blocks(route, 132, resident=1) == 132 * config.STREAM_BLOCKS_PER_SM[key(route)]
