"""ktile.ops.matmul on the GPU (tier 3, skipped without one), beyond the generic op test
(tests/tier3/test_ops_gpu.py: b as W.t() at K = 200): the model shapes of decode and prefill
at K 4096 in both layouts of b, with and without a bias, against an fp32 product; a ragged
K (4100: the skinny kernels; 4112: the decode GEMV's ragged last tile); each streaming GEMV
route at ragged shapes; linear over 3 dimensions; the same bits from a CUDA-graph replay and from run to run (the
split-K partials are summed in a fixed order)."""
import pytest

from ktile.ops.matmul.reference import ULP

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]


def rand(*shape, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, generator=g, device="cuda").bfloat16()


def assert_close(got, a, b, bias, out="bf16"):
    want = a.float() @ b.float() + (0 if bias is None else bias.float())
    accumulation = a.shape[1] * float(a.abs().max()) * float(b.abs().max()) * 2.0 ** -22
    tol = accumulation + float(want.abs().max()) * ULP[out] + 1e-3
    assert float((got.float() - want).abs().max()) <= tol


@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("m", [1, 3, 8, 32, 48, 64, 512])
@pytest.mark.parametrize("n,k", [(4096, 4096), (12288, 4096), (4096, 12288), (4000, 4100),
                                 (4000, 4112)])
def test_model_shapes_match_fp32(m, n, k, layout):
    import ktile.ops as ops
    a, w, bias = rand(m, k, seed=1), rand(n, k, seed=2), rand(n, seed=3)
    b = w.t() if layout == "nt" else w.t().contiguous()
    with_bias = m % 2 == 1
    assert_close(ops.matmul(a, b, bias if with_bias else None), a, b, bias if with_bias else None)


def test_fp32_out_and_linear_3d():
    import ktile.ops as ops
    x, w, bias = rand(2, 5, 4096, seed=4), rand(6144, 4096, seed=5), rand(6144, seed=6)
    y = ops.linear(x, w, bias)
    assert y.shape == (2, 5, 6144)
    assert_close(y.view(10, 6144), x.view(10, 4096), w.t(), bias)
    a = x.view(10, 4096)
    assert_close(ops.matmul(a, w.t(), out_dtype=torch.float32), a, w.t(), None, out="fp32")


def test_decode_replays_from_a_cuda_graph_with_the_same_bits():
    import ktile.ops as ops
    a, w = rand(4, 4096, seed=7), rand(4096, 4096, seed=8)
    want = ops.matmul(a, w.t())                              # builds and loads
    assert torch.equal(ops.matmul(a, w.t()), want)           # run to run
    out = torch.empty_like(want)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        ops.matmul(a, w.t(), out=out)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, want)


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("n,k", [(4001, 4112), (24576, 4096), (33, 208)])
def test_streaming_gemv_routes_at_ragged_shapes(m, n, k):
    """gemv_stream_nt on the device's grid (multiprocessors x blocks per SM), each listed form
    (config.STREAM_ROUTES: MB 1 / 2 / 4 / 8, pinnable, not routed first) pinned, at an odd N
    (a last group of W rows cut by N), K/16 no multiple
    of the step, more groups than warps (24576) and fewer (33); the same bits run to run."""
    import ktile.ops as ops
    from ktile.ops import _library as lib
    from ktile.ops.matmul import config
    from ktile.ops.matmul.op import OP
    a, w, bias = rand(m, k, seed=9), rand(n, k, seed=10), rand(n, seed=11)
    route = next(r for r in config.STREAM_ROUTES if r.fits(m, n, "sm_90a"))
    with lib.pinned(OP.table, route):
        got = ops.matmul(a, w.t(), bias if m % 2 else None)
        assert torch.equal(ops.matmul(a, w.t(), bias if m % 2 else None), got)
    assert_close(got, a, w.t(), bias if m % 2 else None)
