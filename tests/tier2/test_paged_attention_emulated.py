"""ktile.ops.paged_attention_decode end to end under wave emulation of gfx1100 (wave32; issue
#12): the split form (paged_decode's partials, then paged_decode_combine) at D 64 and ragged
lengths with stale NaN in the cache's unused rows, against the float64 reference. gfx942 and
gfx950 are not routed (their bf16 MFMA needs a K of 32; tier 0 checks the refusal), so no
wave64 emulation is possible yet."""
import pytest

from ktile.ops import _library as lib

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2


def test_split_route_matches_reference_on_emulated_gfx1100():
    import ktile.ops
    from ktile.ops.paged_attention import cases
    from ktile.ops.paged_attention.op import route_for
    case = cases.make_case([37, 9], 8, 2, 64, seed=11)
    assert route_for(64, 4, case.block_tables.shape[1] * 16, "gfx1100").constants["SPLIT"]
    with lib.emulating("gfx1100"):
        got = ktile.ops.paged_attention_decode(*case.args)
    err, tol = cases.error(case, got)
    assert err <= tol, (err, tol)
