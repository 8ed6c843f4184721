"""Softmax's row-tile kernels (ktile/ops/softmax/row_tile.py, flat 16 x 64 tiles) run end to
end under wave emulation of gfx1100 (RDNA3, wave32) and gfx950 (CDNA4, wave64): the op's public
function with a route pinned and its kernels emulated, against the reference, at small shapes
whose view rows end in a ragged tile (view columns not a multiple of the tile's C). The held
kernel holds two tiles per warp (200 view columns: 3.1 tiles); the split pair runs at 3 blocks
per row over 5 tiles (300 view columns), interleaved (tiles 0 and 3, 1 and 4, 2), the last one
ragged, most warps' next-tile loads past the row.

The 16-row kernels (other widths) are the table's last route, emulated with the other ops by
tests/tier2/test_ops_emulated.py. Bounded (about 20 s on 2 cores, cold cache): the held kernel
on both targets, the split pair on gfx950 and the loop (the split pair's helpers, unsplit) on
gfx1100; fp32 on gfx1100, bf16 on gfx950. The chunk split pair (chunks.py: 3 rows of 4800
columns at C 32, 150 view rows: 10 tiles, the last cut to 6 rows, in 3 groups of 4 over 3
blocks) on gfx1100 in fp32."""
import pytest

from ktile.ops import _library as lib
from ktile.ops.softmax import config, op as softmax_op

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2

HELD_TWO = next(r for r in config.ROUTES
                if r.kernel == "softmax_held" and r.constants["HELD"] == 2)
SPLIT = next(r for r in config.ROUTES if r.kernel == "softmax_stats")
LOOP = next(r for r in config.ROUTES if r.kernel == "softmax_loop")
CHUNK = next(r for r in config.ROUTES if r.kernel == "softmax_chunk_stats")
HELD_SMALL = {**HELD_TWO.constants, "WARPS": 2}   # the same code at a width the emulator runs fast

CASES = [("held", "gfx1100", "fp32"), ("held", "gfx950", "bf16"), ("split", "gfx950", "bf16"),
         ("loop", "gfx1100", "fp32"), ("chunk", "gfx1100", "fp32")]


def small_held_route():
    c = HELD_SMALL
    return lib.Route("softmax_held", c, max_cols=16 * c["C"] * c["HELD"] * c["WARPS"],
                     cols_multiple=16)


@pytest.mark.parametrize("name,target,dtype", CASES)
def test_row_tile_kernel_matches_reference_under_emulation(monkeypatch, name, target, dtype):
    route = {"held": small_held_route(), "split": SPLIT, "loop": LOOP, "chunk": CHUNK}[name]
    monkeypatch.setattr(config, "split_count", lambda *args: 3)
    monkeypatch.setattr(config, "chunk_split_count", lambda *args: 3)
    with lib.pinned(config.TABLE, route), lib.emulating(target):
        err, tol = softmax_op.OP.check(3, 16 * (200 if name == "held" else 300), dtype)
    assert err <= tol, f"softmax {route} on {target}: {err} > {tol}"
