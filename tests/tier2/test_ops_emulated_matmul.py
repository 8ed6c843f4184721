"""ktile.ops.matmul's kernels under wave emulation of gfx1100 (RDNA3, wave32) and gfx950
(CDNA4, wave64), end to end through the public function against the reference at small
ragged shapes (M, N, K no multiple of any tile, with a bias): each route kind the generic
test (tests/tier2/test_ops_emulated.py: the W.t() skinny route and the split reduction) does
not reach: the row-major skinny kernel, both tile kernels, and the sm_90a decode GEMVs (gemv_nt's
M 2..8 route, two blocks of rows of a, and gemv_stream_nt's MB 8 route, at K 208). Bounded (four emulator builds,
the reduction's is the generic test's): one target per kernel, alternating wave32 and wave64,
one shape, bf16 in (fp32 out for the tiles: the other epilogue). The skinny kernels share one
design across layouts, as the tile kernels share the epilogue, so each layout's other target
adds a build, not a case."""
import pytest

from ktile.ops import _library as lib
from ktile.ops.matmul import config
from ktile.ops.matmul.op import OP, case

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2

KINDS = {"skinny_nn": ("gfx1100", (5, 40), "bf16"),
         "gemv_nt": ("gfx950", (5, 40), "bf16"),
         "gemv_stream_nt": ("gfx1100", (3, 40), "bf16"),
         "tiles_nt": ("gfx950", (70, 40), "bf16-fp32"),
         "tiles_nn": ("gfx1100", (70, 40), "bf16-fp32")}


def first_route(kernel: str, target: str):
    """The kernel's first route for `target`, else its last (the GEMV is routed on sm_90a
    only; its flat tiles are held in the row layout on AMD, emulated as a portability check)."""
    mine = [r for r in config.TABLE.routes if r.kernel == kernel]
    return next((r for r in mine if r.targets is None or target in r.targets), mine[-1])


@pytest.mark.parametrize("kernel", KINDS)
def test_route_matches_reference_under_emulation(kernel):
    target, (rows, cols), dtype = KINDS[kernel]
    route = first_route(kernel, target)
    with lib.pinned(OP.table, route), lib.emulating(target):
        err, tol = case(rows, cols, dtype, layout=kernel[-2:])
    assert err <= tol, f"{kernel} at {rows}x{cols} on {target}: {err} > {tol}"
