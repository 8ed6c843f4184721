"""rms_norm's narrow-row routes (ktile/ops/rmsnorm/rows.py: head-dim widths, 16 rows a warp)
build clean beyond the narrowest, which tests/tier1/test_ops_build.py builds for sm_90a,
gfx950 and gfx1100: the others at sm_90a in bf16 (ptxas: no spill, no stack frame), the widest
(its warps sharing a row tile through `hk.group.sum`) in fp32 there too and in bf16 at gfx950
(clang with the cocheck gate); and the row-tile kernel's first sm_90a route, which
test_ops_build built as rms_norm's narrowest before these routes came first. Every route
traces for every target without a budget warning in tier 0 (tests/tier0/test_ops_routes.py)."""
from concurrent.futures import ThreadPoolExecutor

import pytest

import build_gates

from ktile.ops.rmsnorm import config
from ktile.ops.rmsnorm.kernels import KERNELS

pytestmark = pytest.mark.tier1

ROUTES = [r for r in config.ROUTES if r.kernel == "rms_norm_rows"]
# the row-tile kernel's first sm_90a route: test_ops_build's narrowest before rms_norm_rows
TILES = next(r for r in config.ROUTES if r.kernel == "rms_norm_tiles"
             and (r.targets is None or "sm_90a" in r.targets))
CASES = [*((route, "bf16", "sm_90a") for route in ROUTES[1:]), (ROUTES[-1], "fp32", "sm_90a"),
         (ROUTES[-1], "bf16", "gfx950"), (TILES, "bf16", "sm_90a")]


def _name(route, dtype, target) -> str:
    consts = "_".join(f"{k}{v}" for k, v in sorted(route.constants.items()))
    return f"{route.kernel}_{dtype}_{consts}_{target}"


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("rms_rows")

    def build(case):
        route, dtype, target = case
        source = KERNELS[route.kernel](dtype).trace(target, **route.constants).source()
        name = _name(*case)
        if target == "sm_90a":
            return name, build_gates.hopper().nvcc_build(source, folder, name)
        return name, build_gates.amd().amd_build(source, folder, name, target)
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(build, CASES))


def test_the_narrow_routes_are_shipped_for_every_target():
    assert [r.max_cols for r in ROUTES] == [64, 128, 256]
    assert all(r.targets is None for r in ROUTES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: _name(*c))
def test_builds_clean(builds, case):
    route, dtype, target = case
    build = builds[_name(*case)]
    if target == "sm_90a":
        build_gates.assert_sm90a_clean(build, route.kernel)
    else:
        build_gates.amd().assert_clean(build, route.kernel, _name(*case))
