"""The elementwise ops' configuration space: one route list per call shape (the kernel names of
kernels.KERNELS), chosen by the (rows, cols) of the 2-D view.

What a kernel computes (`OP`, `FN`, `SWAP`) is the op's identity, set by the op function, not a
route choice; a route sets how (`COLS`, `WARPS`). The extra `unary` routes name the
transcendental functions so that the build and emulation tests compile each of them (they fit
every shape, and the op function's `FN` replaces theirs).

`REFLOW`: a contiguous tensor whose rows are narrower than this, and whose size it divides, is
viewed as rows of `REFLOW` elements for the same-shape, scalar and unary kernels (elementwise
math does not care where rows end): a 1-D tensor or a [N, 8] one fills whole 16-row tiles.
"""
from .._library import Route, RoutingTable

REFLOW = 1024

ROUTES = [
    Route("binary", {"COLS": 64, "WARPS": 4}, sample=(37, 100)),
    Route("binary_row", {"COLS": 64, "WARPS": 4}, sample=(37, 100)),
    Route("binary_col", {"COLS": 64, "WARPS": 4}, sample=(37, 100)),
    Route("scalar", {"COLS": 64, "WARPS": 4}, sample=(37, 100)),
    Route("unary", {"COLS": 64, "WARPS": 4}, sample=(37, 100)),
    Route("unary", {"FN": "exp", "COLS": 64, "WARPS": 4}, sample=(37, 100)),
    Route("unary", {"FN": "gelu", "COLS": 64, "WARPS": 4}, sample=(37, 100)),
    Route("unary", {"FN": "gelu_tanh", "COLS": 64, "WARPS": 4}, sample=(37, 100)),
]

TABLE = RoutingTable(ROUTES)


def choose(kernel: str, rows: int, cols: int, target: str | None) -> Route:
    """The first route of `kernel` (measured routes first) that fits (rows, cols) on target."""
    candidates = TABLE.measured.get(target, []) + TABLE.routes
    for route in candidates:
        if route.kernel == kernel and route.fits(rows, cols, target):
            return route
    return RoutingTable([r for r in candidates if r.kernel == kernel]).choose(rows, cols, target)
