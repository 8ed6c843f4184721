"""scaled_mm (issue #11) on the H200 (tier 3, skipped without a GPU): the fp8 kernel against
the float64 reference and against torch._scaled_mm at ragged M (1, 77, 385, 1000, 1500) and
the Qwen3-8B widths, per-tensor and per-token/per-channel scales, with and without a bias,
every output dtype; every route pinned at a ragged shape; a CUDA-graph replay with new scales
matches the eager call. The tolerance is the reference's on Hopper (reference.on_hopper):
torch._scaled_mm's own error at the same operands measures the wgmma's fp8 accumulation; the
fast-accumulation routes (use_fast_accum=True, PROMOTE False) miss by more at K 4096 and are
shown to, and are checked within torch's own use_fast_accum=True error instead."""
import pytest

from ktile.ops import _library as lib
from ktile.ops.scaled_mm import config, op
from ktile.ops.scaled_mm.reference import on_hopper, scaled_mm as reference, tolerance
from ktile import dtypes

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

SHAPES = [(1, 4096, 4096), (77, 6144, 4096), (385, 6144, 4096), (1000, 4096, 12288),
          (1500, 24576, 4096), (2048, 4096, 4096), (300, 300, 208)]
TORCH_MULTIPLE = 16     # torch._scaled_mm refuses b [K, N] unless K and N are multiples of 16


def wgmma_error(a, w, fast: bool = False) -> float:
    """torch._scaled_mm's max error against the float64 a · wᵀ at unit scales, fp32 out: the
    GPU's fp8 accumulation (W padded with zero rows to a width torch takes), promoted or
    (`fast`) torch's use_fast_accum=True."""
    pad = -w.shape[0] % TORCH_MULTIPLE
    if pad:
        zeros = torch.zeros(pad, w.shape[1], dtype=torch.uint8, device=w.device)
        w = torch.cat([w.view(torch.uint8), zeros]).view(torch.float8_e4m3fn)
    one = torch.ones((), device=a.device)
    got = torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.float32, use_fast_accum=fast)
    exact = a.double() @ w.double().t()
    return float((got.double() - exact).abs().max())


def against_reference(m, n, k, rowwise, bias, out="bf16", fast=False, tolerance_fast=None):
    """(result, max error, tolerance, operands) of scaled_mm (use_fast_accum=`fast`), the
    tolerance widened by torch's error in the same mode (`tolerance_fast`: another mode's)."""
    a, w, sa, sb, b_vec = op.operands(m, n, k, out, "cuda", rowwise, bias)
    got = op.scaled_mm(a, w.t(), sa, sb, b_vec, out_dtype=op.TORCH_DTYPES[out],
                       use_fast_accum=fast)
    an, bn = a.double().cpu().numpy(), w.double().cpu().numpy().T
    san, sbn = sa.double().cpu().numpy(), sb.double().cpu().numpy()
    bias_n = None if b_vec is None else b_vec.double().cpu().numpy()
    want = reference(an, bn, san, sbn, bias_n, getattr(dtypes, out))
    mode = fast if tolerance_fast is None else tolerance_fast
    tol = on_hopper(tolerance(an, bn, san, sbn, want, out), wgmma_error(a, w, mode),
                    float(sa.abs().max() * sb.abs().max()))
    return got, lib.max_error(got, want), tol, (a, w, sa, sb)


@pytest.mark.parametrize("rowwise", [False, True], ids=["tensor", "rowwise"])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_matches_reference_and_torch_scaled_mm(m, n, k, rowwise):
    got, err, tol, (a, w, sa, sb) = against_reference(m, n, k, rowwise, bias=False)
    assert err <= tol, (err, tol)
    if n % TORCH_MULTIPLE:
        return                                  # torch refuses this b; the reference checked
    ref = torch._scaled_mm(a, w.t(), sa, sb, out_dtype=torch.bfloat16)
    assert (got.float() - ref.float()).abs().max().item() <= 2 * tol


@pytest.mark.parametrize("out", ["bf16", "fp16", "fp32"])
@pytest.mark.parametrize("rowwise", [False, True], ids=["tensor", "rowwise"])
@pytest.mark.parametrize("m,n,k", [(77, 6144, 4096), (1500, 4096, 4096), (77, 200, 336)])
def test_bias_and_every_output_dtype(m, n, k, rowwise, out):
    _, err, tol, _ = against_reference(m, n, k, rowwise, bias=True, out=out)
    assert err <= tol, (err, tol)


@pytest.mark.parametrize("route", config.TABLE.routes,
                         ids=lambda r: "-".join(f"{k}{v}" for k, v in r.constants.items()))
def test_every_route_pinned_at_a_ragged_shape(route):
    if "sm_90a" not in route.targets:
        pytest.skip("an AMD route (tier 2 emulates it)")
    c = route.constants
    with lib.pinned(config.TABLE, route):     # the unpromoted routes within torch's fast error
        _, err, tol, _ = against_reference(1100, 6144 + 40, 4096 + 16, c["ROWWISE"], c["BIAS"],
                                           out="fp32", tolerance_fast=not c["PROMOTE"])
    assert err <= tol, (err, tol)


@pytest.mark.parametrize("rowwise,bias", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("m,n,k", [(77, 6144, 4096), (1500, 4096, 12288), (300, 300, 208)])
def test_use_fast_accum_matches_torchs_fast_accumulation(m, n, k, rowwise, bias):
    """use_fast_accum=True (routed: PROMOTE False) within the reference's tolerance widened by
    torch's own use_fast_accum=True error at the same operands, and near torch's result."""
    got, err, tol, (a, w, sa, sb) = against_reference(m, n, k, rowwise, bias, fast=True)
    assert err <= tol, (err, tol)
    if bias or n % TORCH_MULTIPLE:
        return
    ref = torch._scaled_mm(a, w.t(), sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True)
    assert (got.float() - ref.float()).abs().max().item() <= 2 * tol


VARIANTS = [dict(PAIR=True, BN=128, STAGES=3), dict(LAG=True, BN=96, STAGES=6),
            dict(PAIR=True, BN=96, STAGES=3),
            dict(PROMOTE_K=256, BN=192, STAGES=2), dict(PROMOTE_K=256, BN=128, STAGES=3)]


@pytest.mark.parametrize("rowwise", [False, True], ids=["tensor", "rowwise"])
@pytest.mark.parametrize("variant", VARIANTS,
                         ids=lambda v: ",".join(f"{k}={int(x)}" for k, x in v.items()))
@pytest.mark.parametrize("m,n,k", [(1100, 6144 + 40, 4096 + 16), (2048, 4096, 12288)])
def test_promotion_variants_within_the_promoted_tolerance(m, n, k, variant, rowwise):
    """The pinnable promotion variants (kernels.py) within the promoted routes' tolerance (the
    reference's plus twice torch's default error), fp32 out. PROMOTE_K 256 adds 256 of K at
    the wgmma's precision before promoting: this decides whether it may be routed (a failure
    here says it may not)."""
    route = config.choose(m, n, "sm_90a", rowwise, False)
    pinned = lib.Route("fp8_ws_nt", dict(route.constants, **variant), targets=("sm_90a",))
    with lib.pinned(config.TABLE, pinned):
        _, err, tol, _ = against_reference(m, n, k, rowwise, False, out="fp32")
    assert err <= tol, (err, tol)


def test_fast_accumulation_misses_by_more_than_the_promoted_tolerance():
    """The variant accumulating all of K in the wgmma (PROMOTE False, torch's
    use_fast_accum=True) is outside the tolerance at K 4096 in fp32: the tolerance tells the
    two accumulations apart, so the promoted routes' passing means they promote."""
    _, err, tol, _ = against_reference(2048, 4096, 4096, False, False, out="fp32", fast=True,
                                       tolerance_fast=False)
    assert err > tol, (err, tol)


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
