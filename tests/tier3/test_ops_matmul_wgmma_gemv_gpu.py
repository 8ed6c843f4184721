"""sm_90a's one-kernel decode product (`wgmma_gemv_nt`, pinnable) on the GPU (tier 3, skipped
without one): the decode shapes and ragged ones (N not a multiple of BN: a last band cut by
N; K not of BK: the TMA's zero-filled tail; K · 2 bytes no multiple of 16: the cp.async
build), each constant set benchmarks/gemv_sweep.py times, against an fp32 product; the same
bits run to run and from a CUDA-graph replay (no split: one block sums all of K)."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

from test_ops_matmul_gpu import assert_close, rand  # noqa: E402

CONSTANTS = [{"BN": 32, "BK": 128, "STAGES": 4}, {"BN": 32, "BK": 128, "STAGES": 6},
             {"BN": 32, "BK": 128, "STAGES": 8}, {"BN": 32, "BK": 128, "STAGES": 8, "A_REGS": 1},
             {"BN": 32, "BK": 64, "STAGES": 6}, {"BN": 64, "BK": 64, "STAGES": 4},
             {"BN": 64, "BK": 128, "STAGES": 4}]


def pinned(constants):
    from ktile.ops import _library as lib
    from ktile.ops.matmul import config
    from ktile.ops.matmul.op import OP
    route = lib.Route("wgmma_gemv_nt", constants, targets=config.SM90)
    return lib.pinned(OP.table, route)


@pytest.mark.parametrize("constants", CONSTANTS, ids=str)
@pytest.mark.parametrize("m", [1, 3, 8, 16, 33])
@pytest.mark.parametrize("n,k", [(4096, 4096), (24576, 4096), (4000, 4100), (130, 72),
                                 (70, 4097)], ids=str)
def test_shapes_match_fp32(constants, m, n, k):
    import ktile.ops as ops
    a, w, bias = rand(m, k, seed=1), rand(n, k, seed=2), rand(n, seed=3)
    with_bias = bias if m % 2 else None
    with pinned(constants):
        got = ops.matmul(a, w.t(), with_bias)
        assert torch.equal(ops.matmul(a, w.t(), with_bias), got)
    assert_close(got, a, w.t(), with_bias)


def test_replays_from_a_cuda_graph_with_the_same_bits():
    import ktile.ops as ops
    a, w = rand(4, 4096, seed=7), rand(6144, 4096, seed=8)
    with pinned(CONSTANTS[0]):
        want = ops.matmul(a, w.t())
        out = torch.empty_like(want)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            ops.matmul(a, w.t(), out=out)
        graph.replay()
        torch.cuda.synchronize()
    assert torch.equal(out, want)
