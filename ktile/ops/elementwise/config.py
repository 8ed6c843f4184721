"""The elementwise ops' configuration space: one route list per call shape (the kernel names of
kernels.KERNELS), chosen by the (rows, cols) of the 2-D view.

What a kernel computes (`OP`, `FN`, `SWAP`) is the op's identity, set by the op function, not a
route choice; a route sets how (`COLS`, `WARPS`, `HELD`). The extra `unary` routes name the
transcendental functions so that the build and emulation tests compile each of them (they fit
every shape, and the op function's `FN` replaces theirs).

`REFLOW`: a contiguous tensor whose size it divides is viewed as rows of `REFLOW` elements for
the same-shape, scalar and unary kernels (elementwise math does not care where rows end): it
equals the routes' COLS, so each warp's 16 x COLS flat tile is one contiguous 2 KiB (bf16) run
and a block's WARPS · HELD tiles one contiguous piece. A tensor it does not divide keeps its
own rows (tiles at its right edge move element by element).

`HELD` 2: each warp loads two tiles of each operand before computing either (more loads in
flight per warp: docs/ops-memory-bound.md). The row broadcast runs the same-shape kernel (the
row expanded with row stride 0); the column broadcast keeps row-layout tiles (its per-row
values are a vector broadcast, which a flat tile does not take).
"""
from .._library import Route, RoutingTable

REFLOW = 64
FLAT = {"COLS": REFLOW, "WARPS": 4, "HELD": 2}

ROUTES = [
    Route("binary", FLAT, sample=(37, 100)),
    Route("binary_col", {"COLS": 64, "WARPS": 4}, sample=(37, 100)),
    Route("scalar", FLAT, sample=(37, 100)),
    Route("unary", FLAT, sample=(37, 100)),
    Route("unary", {"FN": "exp", **FLAT}, sample=(37, 100)),
    Route("unary", {"FN": "gelu", **FLAT}, sample=(37, 100)),
    Route("unary", {"FN": "gelu_tanh", **FLAT}, sample=(37, 100)),
]

TABLE = RoutingTable(ROUTES)


def choose(kernel: str, rows: int, cols: int, target: str | None) -> Route:
    """The first route of `kernel` (measured routes first) that fits (rows, cols) on target."""
    candidates = TABLE.measured.get(target, []) + TABLE.routes
    for route in candidates:
        if route.kernel == kernel and route.fits(rows, cols, target):
            return route
    return RoutingTable([r for r in candidates if r.kernel == kernel]).choose(rows, cols, target)
