"""scaled_mm's routes: `fp8_ws_nt` (kernels.py) on sm_90a at matmul's warp-specialised tile
widths (matmul/config.py, NT_TILES: the same stage bytes, BK 128 fp8 being BK 64 bf16):

- M > WIDE_MIN_M: 128 x 256, 4 stages of 48 KiB;
- M 385..512 with N a multiple of 6144: 128 x 192, 5 stages (whole waves of 132 SMs);
- other M <= WIDE_MIN_M, and every call with per-token / per-channel scales and a bias:
  128 x 128, 6 stages of 32 KiB (128 x 256 with both the scale_b and bias column vectors is
  over the consumers' 240 registers: the budgets pass's estimate, 244).

Small M (decode) takes the same tiles: correct at any M (rows past M are zero-filled and
never stored), not tuned for it. Each form builds with zero spills on sm_90a
(tests/tier1/test_scaled_mm_build.py). AMD targets are refused (op.py): no route there.
"""
from __future__ import annotations

from ...errors import InputError
from .._library import Route, RoutingTable

SM90 = ("sm_90a",)
WIDE_MIN_M = 1024
GROUP_M = 8

NARROW = Route("fp8_ws_nt", {"BN": 128, "STAGES": 6, "GROUP_M": GROUP_M}, targets=SM90,
               sample=(300, 300))
TABLE = RoutingTable([
    Route("fp8_ws_nt", {"BN": 192, "STAGES": 5, "GROUP_M": GROUP_M}, min_rows=385,
          max_rows=512, cols_multiple=6144, targets=SM90, sample=(400, 6144)),
    Route("fp8_ws_nt", {"BN": 128, "STAGES": 6, "GROUP_M": GROUP_M}, max_rows=WIDE_MIN_M,
          targets=SM90, sample=(300, 300)),
    Route("fp8_ws_nt", {"BN": 256, "STAGES": 4, "GROUP_M": GROUP_M}, targets=SM90,
          sample=(70, 300)),
])


def fits_form(route: Route, rowwise: bool, bias: bool) -> bool:
    """Whether the route's consumers hold the epilogue of this form (see the docstring)."""
    return not (rowwise and bias and route.constants.get("BN", 256) > 192)


def choose(rows: int, cols: int, target: str, rowwise: bool, bias: bool) -> Route:
    """The first route for M = rows, N = cols on `target` that holds this form's epilogue; a
    pinned route (a test's) wins."""
    pinned = TABLE.pinned
    if pinned is not None:
        return pinned
    for route in TABLE.measured.get(target, []) + TABLE.routes:
        if route.fits(rows, cols, target) and fits_form(route, rowwise, bias):
            return route
    raise InputError(f"scaled_mm: no kernel handles M = {rows}, N = {cols} on {target}",
                     hint="scaled_mm runs on sm_90a (Hopper); file an issue with the shape")
