"""rms_norm's narrow-row kernel (ktile/ops/rmsnorm/rows.py) is the table's narrowest route, so
tests/tier2/test_ops_emulated.py emulates it at its first route (a row tile a warp); here its
widest route, whose 4 warps share a row tile's 256 columns (`hk.group.sum`), on gfx950 (wave64),
and the row-tile kernel's narrowest route, which that test reached before, on gfx1100 (wave32):
each pinned, at a ragged shape, against the reference (`Op.check`)."""
import pytest

from ktile.ops import _library as lib
from ktile.ops.rmsnorm import config, op as rms

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2


def _first(kernel: str, target: str, widest: bool = False):
    routes = [r for r in config.ROUTES if r.kernel == kernel
              and (r.targets is None or target in r.targets)]
    return routes[-1] if widest else routes[0]


@pytest.mark.parametrize("kernel,widest,target,rows,cols",
                         [("rms_norm_rows", True, "gfx950", 21, 240),
                          ("rms_norm_tiles", False, "gfx1100", 3, 288)],
                         ids=["rows-split-gfx950", "tiles-gfx1100"])
def test_route_matches_reference_under_emulation(kernel, widest, target, rows, cols):
    route = _first(kernel, target, widest)
    with lib.pinned(config.TABLE, route), lib.emulating(target):
        err, tol = rms.OP.check(rows, cols, rms.OP.dtypes[0])
    assert err <= tol, f"{route} at {rows}x{cols} on {target}: {err} > {tol}"
