"""The MoE grouped GEMM under wave emulation of gfx1100 (wave32) and gfx950 (wave64) at the
routes tests/tier2/test_ops_emulated.py does not reach (it runs each table's narrowest): the
routed-weight form, the wider BM 16 route and the 32-slot blocks, each against the reference
at a small ragged shape (`Op.check`: 3 tokens, K 72, N 40)."""
import pytest

from ktile.ops import _library as lib
from ktile.ops.moe import config
from ktile.ops.moe.op import OP

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2


def route(target: str, bm: int, bn: int):
    return next(r for r in config.ROUTES if r.constants["ROUTED"] and r.constants["BM"] == bm
                and r.constants["BN"] == bn and (r.targets is None or target in r.targets))


# bounded (about 3 s of CPU each): the routed decode route on wave32, the wider BM 16 route
# on wave64, the 32-slot block on wave32 (its own BK there)
CASES = [pytest.param(target, route(target, bm, bn), id=f"{target}-BM{bm}-BN{bn}")
         for target, bm, bn in (("gfx1100", 16, 16), ("gfx950", 16, 32), ("gfx1100", 32, 16))]


@pytest.mark.parametrize("target,route", CASES)
def test_route_matches_reference_under_emulation(target, route):
    with lib.pinned(config.TABLE, route), lib.emulating(target):
        err, tol = OP.check(3, 40, "bf16")
    assert err <= tol, f"{route} on {target}: {err} > {tol}"
