"""scaled_mm's routes: `fp8_ws_nt` (kernels.py) on sm_90a at matmul's warp-specialised tile
widths (matmul/config.py, NT_TILES: the same stage bytes, BK 128 fp8 being BK 64 bf16), one
set of routes per epilogue form (ROWWISE: per-token / per-channel scales; BIAS: a bias given),
the form's constants in its routes so that every form the op launches is built and tested.

Every route promotes (PROMOTE: each 128-wide K block multiplies into fresh wgmma accumulators
added to fp32 ones, torch._scaled_mm's default precision; kernels.py says why), so the
consumers hold two 16 x BN fp32 tiles in the K loop (BN registers a lane):

- M 385..512 with N a multiple of 6144: 128 x 192, 5 stages (whole waves of 132 SMs);
- other M <= WIDE_MIN_M: 128 x 128, 6 stages of 32 KiB;
- larger M: 128 x 192, 5 stages of 40 KiB; ROWWISE with a bias 128 x 128 (at 192 its
  epilogue's two column vectors take the budgets pass's estimate to 212 registers).
  128 x 256 would need 256 registers for the two tiles: it is the fast-accumulation route
  (`fast_routes`: PROMOTE False, 4 stages), taken by scaled_mm(use_fast_accum=True) as
  torch._scaled_mm's argument of that name.

At 128 x 192 the budgets pass estimates 200 of the 240 registers live at the promotion's add
(over its warning line, 180); ptxas 13.0 builds every route with 0 spills
(tests/tier1/test_scaled_mm_build.py), so op.py traces those routes with that one warning
silenced. Small M (decode) takes the same tiles: correct at any M (rows past M are
zero-filled and never stored), not tuned for it. gfx950 has a route per scale form without a
bias (below); the other AMD targets are refused (op.py): no fp8 MFMA there in ktile.
"""
from __future__ import annotations

from ...errors import InputError
from .._library import Route, RoutingTable

SM90 = ("sm_90a",)
WIDE_MIN_M = 1024
GROUP_M = 8
# the budgets pass estimates 186-212 registers a consumer lane for the promoted and the wide
# rowwise routes (over its 192 warning line: it counts the promotion's add as a fourth tile);
# ptxas 13.0 builds every sm_90a route at 168 registers with 0 spills
PTXAS_CHECKED = "ptxas: 168 registers, 0 spills (tests/tier1/test_scaled_mm_build.py)"


def tile(bn: int, stages: int, rowwise: bool, bias: bool, promote: bool = True,
         **fit) -> Route:
    return Route("fp8_ws_nt", {"BN": bn, "STAGES": stages, "GROUP_M": GROUP_M,
                               "ROWWISE": rowwise, "BIAS": bias, "PROMOTE": promote},
                 targets=SM90, estimate_exempt=PTXAS_CHECKED, **fit)


def form_routes(rowwise: bool, bias: bool) -> list[Route]:
    if rowwise and bias:
        return [tile(128, 6, True, True, sample=(300, 300))]
    return [tile(192, 5, rowwise, bias, min_rows=385, max_rows=512, cols_multiple=6144,
                 sample=(400, 6144)),
            tile(128, 6, rowwise, bias, max_rows=WIDE_MIN_M, sample=(300, 300)),
            tile(192, 5, rowwise, bias, sample=(70, 300))]


def fast_routes(rowwise: bool, bias: bool) -> list[Route]:
    """use_fast_accum=True (PROMOTE False): one 16 x BN fp32 tile a warp, so 128 x 256, 4
    stages (0.85-0.99x torch's fast accumulation, H200 round 1.5) at any M; per-token /
    per-channel scales with a bias 128 x 192 (at 256 the budgets pass counts 244 registers at
    the epilogue's column vectors)."""
    if rowwise and bias:
        return [tile(192, 5, True, True, False, sample=(300, 300))]
    return [tile(256, 4, rowwise, bias, False, sample=(70, 300))]


# gfx950 (CDNA4: fp8 MFMA from LDS): the same program, every wave playing both roles in turn
# (no warp specialisation there); 128 x 128 tiles, 3 stages of 32 KiB in its 160 KiB of LDS.
# Checked by wave emulation and the build's cocheck gate (0 spills), not timed on a GPU.
# Without a bias only: with one, clang-22 spills 6 SGPRs into VGPR lanes (106 SGPRs; at 2
# or 3 stages, GROUP_M 1 or 8), which the gate refuses. PROMOTE False: CDNA's fp8 MFMA
# accumulates in fp32, as its ISA documents (the reduced-precision adds are wgmma's).
AMD_FP8 = ("gfx950",)


def amd_route(rowwise: bool, bias: bool) -> Route:
    return Route("fp8_ws_nt", {"BN": 128, "STAGES": 3, "GROUP_M": GROUP_M, "ROWWISE": rowwise,
                               "BIAS": bias, "PROMOTE": False}, targets=AMD_FP8,
                 sample=(70, 136))


FORMS = [(False, False), (True, False), (False, True), (True, True)]
TARGETS = SM90 + AMD_FP8
TABLE = RoutingTable([route for form in FORMS for route in form_routes(*form)]
                     + [route for form in FORMS for route in fast_routes(*form)]
                     + [amd_route(rowwise, False) for rowwise in (False, True)])


def fits_form(route: Route, rowwise: bool, bias: bool, fast: bool = False) -> bool:
    """Whether the route is of this epilogue form (a measured table's routes name theirs)
    and accumulation: promoted on sm_90a unless `fast` (use_fast_accum=True); gfx950's
    routes accumulate in fp32 (PROMOTE False) and serve both."""
    c = route.constants
    promoted = c.get("PROMOTE", True) or not set(route.targets or ()) <= set(SM90)
    return (c.get("ROWWISE", False) == rowwise and c.get("BIAS", True) == bias
            and (promoted if not fast else not c.get("PROMOTE", True)))


def choose(rows: int, cols: int, target: str, rowwise: bool, bias: bool,
           fast: bool = False) -> Route:
    """The first route for M = rows, N = cols on `target` that holds this form's epilogue
    and accumulation (`fast`: use_fast_accum=True); a pinned route (a test's) wins."""
    pinned = TABLE.pinned
    if pinned is not None:
        return pinned
    for route in TABLE.measured.get(target, []) + TABLE.routes:
        if route.fits(rows, cols, target) and fits_form(route, rowwise, bias, fast):
            return route
    if bias and any(r.fits(rows, cols, target) for r in TABLE.routes):
        raise InputError(f"scaled_mm: a bias has no route on {target} yet (its build spills "
                         f"scalar registers)",
                         hint="pass bias=None and add the bias to the result (a second "
                              "rounding), or run on sm_90a")
    raise InputError(f"scaled_mm: no kernel handles M = {rows}, N = {cols} on {target}",
                     hint="scaled_mm runs on sm_90a and gfx950; file an issue with the shape")
