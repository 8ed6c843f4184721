"""Tier 1 builds of paged decode attention (issue #12) beyond tests/tier1/test_ops_build.py's
selection (which builds the table's narrowest and widest routes on sm_90a, paged_decode_ring,
and the narrowest on gfx1100): the D 128 split paged_decode on gfx1100, whose 254 VGPRs of 256
make it the closest to a spill, with no spill and a clean `ktile cocheck`; sm_90a's
paged_decode_streams (the benchmark's variant, not routed) at D 128, no spill. Under
KTILE_OPS_FULL_BUILD=1 also every route's form (D 64 / 128, split / unsplit) on its targets,
the combine on each target, the ring at STAGES 4 /
WARPS 2 and the streams kernel at D 64."""
import pytest

import build_gates
from ktile import config
from ktile.ops.paged_attention import kernels, ring, streams
from ktile.ops.paged_attention.op import TABLE

pytestmark = pytest.mark.tier1

FACTORIES = {"paged_decode": kernels.paged_decode,
             "paged_decode_combine": kernels.paged_decode_combine,
             "paged_decode_streams": streams.paged_decode_streams,
             "paged_decode_ring": ring.paged_decode_ring}
SPLIT_128 = {"D": 128, "PART_PAGES": 32, "SPLIT": True}
CI = [("gfx1100", "paged_decode", {**SPLIT_128, "WARPS": 2}),
      ("sm_90a", "paged_decode_streams", {**SPLIT_128, "WARPS": 4, "PAGES": 1})]
FULL = [(target, route.kernel, dict(route.constants)) for route in TABLE.routes
        for target in route.targets] + \
    [(target, "paged_decode_combine", {"D": 128, "WARPS": 2, "PART_PAGES": 32})
     for target in ("gfx1100", "gfx1201", "sm_90a")] + \
    [("sm_90a", "paged_decode_ring", {**SPLIT_128, "WARPS": 2, "STAGES": 4}),
     ("sm_90a", "paged_decode_streams", {"D": 64, "WARPS": 4, "PAGES": 2, "PART_PAGES": 32,
                                         "SPLIT": True})]
CASES = CI + FULL if config.OPS_FULL_BUILD.get() == "1" else CI


@pytest.mark.parametrize("target,name,constants", CASES,
                         ids=lambda c: c if isinstance(c, str) else
                         "-".join(f"{k}{v}" for k, v in sorted(c.items())))
def test_paged_decode_builds_clean(tmp_path, target, name, constants):
    kernel = FACTORIES[name]("bf16")
    source = kernel.trace(target, **constants).source()
    if target == "sm_90a":
        build = build_gates.hopper().nvcc_build(source, tmp_path, name)
        build_gates.assert_sm90a_clean(build, kernel.name)
        return
    amd = build_gates.amd()
    build = amd.amd_build(source, tmp_path, name, target)
    amd.assert_clean(build, kernel.name, f"{name} {constants} on {target}")
