"""gemv_nt with the next step's W tiles loaded ahead (AHEAD 1: M = 1's route at UNROLL 2, and
the forms gemv_sweep.py pins) on the GPU (tier 3, skipped without one): decode and ragged
shapes (K/16 no multiple of the step: the loads ahead past K read 0; N not a multiple of the
block's 4 rows) against an fp32 product, the same bits run to run."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

from test_ops_matmul_gpu import assert_close, rand  # noqa: E402


@pytest.mark.parametrize("m,unroll", [(1, 2), (1, 4), (2, 2), (4, 2), (8, 2)], ids=str)
@pytest.mark.parametrize("n,k", [(4096, 4096), (24576, 4096), (4001, 4112), (33, 208)],
                         ids=str)
def test_loads_ahead_match_fp32(m, unroll, n, k):
    import ktile.ops as ops
    from ktile.ops import _library as lib
    from ktile.ops.matmul import config
    from ktile.ops.matmul.op import OP
    a, w, bias = rand(m, k, seed=1), rand(n, k, seed=2), rand(n, seed=3)
    with_bias = bias if m % 2 else None
    with lib.pinned(OP.table, config.gemv(m, unroll, m, ahead=1)):
        got = ops.matmul(a, w.t(), with_bias)
        assert torch.equal(ops.matmul(a, w.t(), with_bias), got)
    assert_close(got, a, w.t(), with_bias)
