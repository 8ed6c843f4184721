"""Every op of the library with a `case` (`ktile.ops.all_ops()`; the routed kernel and its
`also` kernels) runs end to end under wave emulation of gfx1100 (RDNA3, wave32) and gfx950
(CDNA4, wave64): the op's public function with its narrowest route for the target pinned and
its kernels emulated (`_library.emulating`), against its reference (`Op.check`), at one small
ragged shape: the route's sample rows, its sample width cut to RAGGED columns (not a multiple
of any vector width, so the last vector is masked; a row-tile route's rounded down to a
multiple of 16: 288, 18 view columns, the last tile masked). An op added to ktile/ops/ with a
`case` is checked here with no change to this file.

Bounded (< 90 s on 2 cores): one route per op and target, the op's first dtype. The wider
routes run the same code with more vectors held (tier 0 traces every route for every target,
tier 1 compiles the widest); the other dtypes are the same code with another element type."""
import pytest

from ktile.ops import _library as lib
from ktile.ops import all_ops

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2

TARGETS = ("gfx1100", "gfx950")
RAGGED = 300


def narrowest(op, target: str):
    """The first route of `op`'s table for `target` (the tables list routes narrowest first)."""
    return next((r for r in op.table.routes if r.targets is None or target in r.targets), None)


def cases() -> list:
    """(op, target, route, rows, cols) for each op with a case and each emulated target."""
    found = []
    for op in all_ops():
        if op.case is None:
            continue
        for target in TARGETS:
            route = narrowest(op, target)
            if route is not None:
                rows, cols = route.sample
                cols = min(cols, RAGGED) // route.cols_multiple * route.cols_multiple
                found.append(pytest.param(op, target, route, rows, cols,
                                          id=f"{op.name}-{target}"))
    return found


@pytest.mark.parametrize("op,target,route,rows,cols", cases())
def test_narrowest_route_matches_reference_under_emulation(op, target, route, rows, cols):
    with lib.pinned(op.table, route), lib.emulating(target):
        err, tol = op.check(rows, cols, op.dtypes[0])
    assert err <= tol, f"{op.name} {route} at {rows}x{cols} on {target}: {err} > {tol}"
