"""Tier 1 builds of paged decode attention (issue #12) beyond tests/tier1/test_ops_build.py's
selection (which builds the table's narrowest and widest routes on sm_90a and the narrowest on
gfx1100): the D 128 split kernel on gfx1100, whose 254 VGPRs of 256 make it the closest to a
spill, with no spill and a clean `ktile cocheck`; under KTILE_OPS_FULL_BUILD=1 also every
paged_decode form (D 64 / 128, split / unsplit) on gfx1100, gfx1201 and sm_90a."""
import pytest

import build_gates
from ktile import config
from ktile.ops.paged_attention import kernels
from ktile.ops.paged_attention.op import TABLE

pytestmark = pytest.mark.tier1

CI = [("gfx1100", {"D": 128, "WARPS": 2, "PART_PAGES": 32, "SPLIT": True})]
FULL = [(target, dict(route.constants)) for route in TABLE.routes
        for target in ("gfx1100", "gfx1201", "sm_90a")]
CASES = FULL if config.OPS_FULL_BUILD.get() == "1" else CI


@pytest.mark.parametrize("target,constants", CASES,
                         ids=lambda c: c if isinstance(c, str) else
                         "-".join(f"{k}{v}" for k, v in sorted(c.items())))
def test_paged_decode_builds_clean(tmp_path, target, constants):
    kernel = kernels.paged_decode("bf16")
    source = kernel.trace(target, **constants).source()
    if target == "sm_90a":
        build = build_gates.hopper().nvcc_build(source, tmp_path, "paged_decode")
        build_gates.assert_sm90a_clean(build, kernel.name)
        return
    amd = build_gates.amd()
    build = amd.amd_build(source, tmp_path, "paged_decode", target)
    amd.assert_clean(build, kernel.name, f"paged_decode {constants} on {target}")
