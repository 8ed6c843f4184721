"""The norms' fallback kernels under wave emulation: rms_norm's loop and the fused form's held
vectors take widths that are not a multiple of 16, so test_ops_emulated.py (each op's narrowest
route: the row-tile kernel) does not reach them. The route the table picks for 3 rows of 300
columns, the op's first dtype, against its reference (`Op.check`): the loop on gfx950
(wave64), the held kernel on gfx1100 (wave32), two emulations (~10 s each cold on 2 cores)."""
import pytest

from ktile.ops import _library as lib
from ktile.ops.fused_add_rmsnorm import op as fused
from ktile.ops.rmsnorm import op as rms

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2

ROWS, COLS = 3, 300     # not a multiple of 16: the fallback, its last vector masked


@pytest.mark.parametrize("op,kernel,target", [(rms.OP, "rms_norm_loop", "gfx950"),
                                              (fused.OP, "fused_add_rms_norm_held", "gfx1100")],
                         ids=["rms_norm-gfx950", "fused_add_rms_norm-gfx1100"])
def test_fallback_matches_reference_under_emulation(op, kernel, target):
    route = op.table.choose(ROWS, COLS, target)
    assert route.kernel == kernel
    with lib.pinned(op.table, route), lib.emulating(target):
        err, tol = op.check(ROWS, COLS, op.dtypes[0])
    assert err <= tol, f"{op.name} {route} at {ROWS}x{COLS} on {target}: {err} > {tol}"
