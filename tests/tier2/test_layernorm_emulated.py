"""layer_norm's row-tile forward (ktile/ops/layernorm/row_tiles.py; flat tiles, held in the row
layout on AMD) end to end under wave emulation of gfx1100 (wave32) and gfx950 (wave64), at its
narrowest route, 2 rows, and a width whose view (18 columns) is not a multiple of the
32-column tile, so the last tile is masked (~11 s of calls on 2 cores, cold cache). The
generic emulation test (test_ops_emulated.py) pins each op's first route at a width that is not
a multiple of 16, which is the vector kernel's; the row-tile backward is sm_90a's alone."""
import pytest

from ktile.ops import _library as lib
from ktile.ops.layernorm import config, op

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2


@pytest.mark.parametrize("target", ["gfx1100", "gfx950"])
def test_row_tile_forward_matches_reference_under_emulation(target):
    route = config.forward_route(3, 1024, target)
    assert route.kernel == "layer_norm_rows"
    with lib.pinned(config.FORWARD, route), lib.emulating(target):
        err, tol = op.FORWARD_OP.check(2, 288, "bf16")
    assert err <= tol, f"{route} on {target}: {err} > {tol}"
