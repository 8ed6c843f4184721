"""The narrowest and the widest route of every op of the library (`ktile.ops.all_ops()`; the
routed kernel and its `also` kernels) under wave emulation of gfx1100 (RDNA3, wave32) and gfx950 (CDNA4, wave64):
the op's public function runs end to end with the route pinned and its kernels emulated
(`_library.emulating`), against its reference (`Op.check`) at a small ragged shape: the
route's sample rows and width, the width cut to 2 × 1024 + 37 columns (bounded time: a route
holding 16384 columns runs the same code at 2085, its vectors past the row masked). An op added to ktile/ops/ with a `case` is
checked here with no change to this file. Bounded time: the widest route on gfx1100 only, and
only the first dtype of each op: the others are the
same code with another element type (tier 1 compiles them)."""
import pytest

from ktile.ops import _library as lib
from ktile.ops import all_ops

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2

TARGETS = ("gfx1100", "gfx950")
WIDEST = 2 * 1024 + 37


def routes():
    """(op, route, rows, cols) of every route of an op with a case."""
    found = []
    for op in all_ops():
        if op.case is None:
            continue
        ends = [op.table.routes[0], op.table.routes[-1]]
        for route in dict.fromkeys(ends):   # one of them where the table has one route
            rows, cols = route.sample
            found.append((op, route, rows, min(cols, WIDEST)))
    return found


ROUTES = routes()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op,route,rows,cols", ROUTES,
                         ids=[f"{o.name}-{r.kernel}-{'-'.join(map(str, r.constants.values()))}"
                              for o, r, _, _ in ROUTES])
def test_route_matches_reference_under_emulation(op, route, rows, cols, target):
    if target == "gfx950" and route is not op.table.routes[0]:
        pytest.skip("bounded time: the widest route on gfx1100 only")
    if route.targets is not None and target not in route.targets:
        pytest.skip(f"route is for {route.targets}")
    with lib.pinned(op.table, route), lib.emulating(target):
        err, tol = op.check(rows, cols, op.dtypes[0])
    assert err <= tol, f"{op.name} {route} at {rows}x{cols} on {target}: {err} > {tol}"
