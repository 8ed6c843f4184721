"""sm_90a's skinny route (`skinny_wgmma_nt`, M 2..64, b = W.t()) on the GPU (tier 3, skipped
without one): Qwen3-8B's decode shapes and ragged ones (N not a multiple of BN, K not of BK:
the TMA's zero-filled tail) against an fp32 product; its other stage counts and tile widths
pinned as benchmarks/matmul.py --route pins them, in both wait forms (the one-MMA-in-flight
pipeline gave wrong rows at 2 and 4 stages in examples/04_gemm.py's form: this checks the
kernel's own, and its drained IN_FLIGHT 0 form); the same
bits run to run and from a CUDA-graph replay (split K summed in a fixed order)."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

from test_ops_matmul_gpu import assert_close, rand  # noqa: E402


@pytest.mark.parametrize("m", [2, 5, 8, 9, 16, 32, 33, 64])
@pytest.mark.parametrize("n,k", [(6144, 4096), (24576, 4096), (4096, 12288), (4000, 4100),
                                 (130, 72)], ids=str)
def test_shapes_match_fp32(m, n, k):
    import ktile.ops as ops
    from ktile.ops.matmul import config
    assert config.choose("nt", m, n, "sm_90a", k).kernel == "skinny_wgmma_nt"
    a, w, bias = rand(m, k, seed=1), rand(n, k, seed=2), rand(n, seed=3)
    with_bias = bias if m % 2 else None
    assert_close(ops.matmul(a, w.t(), with_bias), a, w.t(), with_bias)


@pytest.mark.parametrize("constants", [{"BN": 128, "BK": 64, "STAGES": 4},
                                       {"BN": 128, "BK": 64, "STAGES": 4, "IN_FLIGHT": 0},
                                       {"BN": 128, "BK": 64, "STAGES": 3, "IN_FLIGHT": 0},
                                       {"BN": 64, "BK": 64, "STAGES": 4},
                                       {"BN": 64, "BK": 128, "STAGES": 3},
                                       {"BN": 128, "BK": 64, "STAGES": 4, "A_REGS": 1},
                                       {"BN": 64, "BK": 64, "STAGES": 6}], ids=str)
@pytest.mark.parametrize("m", [4, 16, 40])
def test_pinned_constants_match_fp32(constants, m):
    import ktile.ops as ops
    from ktile.ops import _library as lib
    from ktile.ops.matmul import config
    from ktile.ops.matmul.op import OP
    a, w, bias = rand(m, 4100, seed=4), rand(12288, 4100, seed=5), rand(12288, seed=6)
    route = lib.Route("skinny_wgmma_nt", constants, targets=config.SM90)
    with lib.pinned(OP.table, route):
        assert_close(ops.matmul(a, w.t(), bias), a, w.t(), bias)


def test_same_bits_run_to_run_and_from_a_graph():
    import ktile.ops as ops
    a, w = rand(16, 4096, seed=7), rand(12288, 4096, seed=8)
    want = ops.matmul(a, w.t())
    for _ in range(3):
        assert torch.equal(ops.matmul(a, w.t()), want)
    out = torch.empty_like(want)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        ops.matmul(a, w.t(), out=out)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, want)
