"""scaled_mm (issue #11) on the H200 (tier 3, skipped without a GPU): the fp8 kernel against
the float64 reference and against torch._scaled_mm at ragged M (1, 77, 385, 1000, 1500) and
the Qwen3-8B widths, per-tensor and per-token/per-channel scales, with and without a bias,
every output dtype; every route pinned at a ragged shape; a CUDA-graph replay with new scales
matches the eager call."""
import pytest

from ktile.ops import _library as lib
from ktile.ops.scaled_mm import config, op
from ktile.ops.scaled_mm.reference import scaled_mm as reference, tolerance
from ktile import dtypes

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

SHAPES = [(1, 4096, 4096), (77, 6144, 4096), (385, 6144, 4096), (1000, 4096, 12288),
          (1500, 24576, 4096), (2048, 4096, 4096), (300, 300, 208)]


def against_reference(m, n, k, rowwise, bias, out="bf16"):
    a, w, sa, sb, b_vec = op.operands(m, n, k, out, "cuda", rowwise, bias)
    got = op.scaled_mm(a, w.t(), sa, sb, b_vec, out_dtype=op.TORCH_DTYPES[out])
    an, bn = a.double().cpu().numpy(), w.double().cpu().numpy().T
    san, sbn = sa.double().cpu().numpy(), sb.double().cpu().numpy()
    bias_n = None if b_vec is None else b_vec.double().cpu().numpy()
    want = reference(an, bn, san, sbn, bias_n, getattr(dtypes, out))
    return got, lib.max_error(got, want), tolerance(an, bn, san, sbn, want, out), (a, w, sa, sb)


@pytest.mark.parametrize("rowwise", [False, True], ids=["tensor", "rowwise"])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_matches_reference_and_torch_scaled_mm(m, n, k, rowwise):
    got, err, tol, (a, w, sa, sb) = against_reference(m, n, k, rowwise, bias=False)
    assert err <= tol, (err, tol)
    ref = torch._scaled_mm(a, w.t(), sa, sb, out_dtype=torch.bfloat16)
    assert (got.float() - ref.float()).abs().max().item() <= 2 * tol


@pytest.mark.parametrize("out", ["bf16", "fp16", "fp32"])
@pytest.mark.parametrize("rowwise", [False, True], ids=["tensor", "rowwise"])
def test_bias_and_every_output_dtype(rowwise, out):
    for m, n, k in [(77, 6144, 4096), (1500, 4096, 4096)]:
        _, err, tol, _ = against_reference(m, n, k, rowwise, bias=True, out=out)
        assert err <= tol, (m, n, k, err, tol)


@pytest.mark.parametrize("route", config.TABLE.routes,
                         ids=lambda r: "-".join(f"{k}{v}" for k, v in r.constants.items()))
def test_every_route_pinned_at_a_ragged_shape(route):
    c = route.constants
    with lib.pinned(config.TABLE, route):
        _, err, tol, _ = against_reference(1100, 6144 + 40, 4096 + 16, c["ROWWISE"], c["BIAS"])
    assert err <= tol, (err, tol)


def test_cuda_graph_replays_with_new_scales():
    a, w, sa, sb, _ = op.operands(512, 4096, 4096, "bf16", "cuda", True, False)
    op.scaled_mm(a, w.t(), sa, sb)                       # builds and plans outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = op.scaled_mm(a, w.t(), sa, sb)
    sa.mul_(2.0)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, op.scaled_mm(a, w.t(), sa, sb))
