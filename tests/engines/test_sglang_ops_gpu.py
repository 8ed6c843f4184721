"""The SGLang integration's ops (`torch.ops.ktile_sglang.*`) on a GPU, without SGLang (which
cannot run on the H200 here): at serving shapes, each op runs ktile's kernel (counted eager,
no fallback) and matches SGLang's semantics (`sglang_ops._engine_*`, its layers'
forward_native math) within the route's tolerance, the in-place CUDA forms included; one op
captured in a CUDA graph and replayed. Skips without CUDA. On the H200:

    python -m pytest tests/engines/test_sglang_ops_gpu.py -q
"""
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

from ktile.integrations import _core, sglang_ops  # noqa: E402
from ktile.integrations.sglang_hooks import TOLERANCE  # noqa: E402

ROWS = (1, 7, 256, 4096)
HIDDEN, HEAD, HEADS, KV_HEADS = 4096, 128, 32, 8
ops = torch.ops.ktile_sglang


def _close(route, got, want):
    atol, rtol = TOLERANCE[route]
    pairs = list(zip(got, want)) if isinstance(want, tuple) else [(got, want)]
    for g, w in pairs:
        torch.testing.assert_close(g.float(), w.float(), atol=atol, rtol=rtol)


def _ran_ktile(route):
    c = _core.counters()[f"sglang.{route}"]
    assert c["eager"] > 0 and c["fallback"] == 0 and c["reference"] == 0, c


def _bf16(*shape):
    return torch.randn(*shape, device="cuda").to(torch.bfloat16)


@pytest.fixture(autouse=True)
def _fresh_counters():
    _core.reset()


@pytest.mark.parametrize("rows", ROWS)
def test_norms(rows):
    x, res, w = _bf16(rows, HIDDEN), _bf16(rows, HIDDEN), 1 + 0.1 * _bf16(HIDDEN)
    _close("rms_norm", ops.rms_norm(x, w, 1e-6), sglang_ops._engine_rms(x, w, 1e-6))
    want = sglang_ops._engine_fused(x, res, w, 1e-6)
    _close("fused_add_rms_norm", ops.fused_add_rms_norm(x, res, w, 1e-6), want)
    xi, ri = x.clone(), res.clone()
    ops.fused_add_rms_norm_(xi, ri, w, 1e-6)
    _close("fused_add_rms_norm", (xi, ri), want)
    _ran_ktile("rms_norm")
    _ran_ktile("fused_add_rms_norm")


@pytest.mark.parametrize("rows", ROWS)
def test_activations(rows):
    x = _bf16(rows, 2 * 12288)
    _close("silu_and_mul", ops.silu_and_mul(x), sglang_ops._engine_silu(x))
    for approximate in ("tanh", "none"):
        _close("gelu_and_mul", ops.gelu_and_mul(x, approximate),
               sglang_ops._engine_gelu(x, approximate))
    _ran_ktile("silu_and_mul")
    _ran_ktile("gelu_and_mul")


@pytest.mark.parametrize("rows", ROWS)
@pytest.mark.parametrize("neox", (True, False))
def test_rotary(rows, neox):
    pos = torch.randint(0, 4096, (rows,), device="cuda")
    q, k = _bf16(rows, HEADS * HEAD), _bf16(rows, KV_HEADS * HEAD)
    angles = torch.arange(4096, device="cuda")[:, None] * 1e4 ** (
        -torch.arange(0, HEAD, 2, device="cuda") / HEAD)
    cache = torch.cat((angles.cos(), angles.sin()), -1).to(torch.bfloat16)
    want = sglang_ops._engine_rope(pos, q, k, cache, HEAD, neox)
    _close("rotary_embedding", ops.rotary_embedding(pos, q, k, cache, HEAD, neox), want)
    qi, ki = q.clone(), k.clone()
    ops.rotary_embedding_(pos, qi, ki, cache, HEAD, neox)
    _close("rotary_embedding", (qi, ki), want)
    _ran_ktile("rotary_embedding")


def test_fused_norm_in_a_cuda_graph():
    x, res, w = _bf16(32, HIDDEN), _bf16(32, HIDDEN), 1 + 0.1 * _bf16(HIDDEN)
    xi, ri = x.clone(), res.clone()
    ops.fused_add_rms_norm_(xi, ri, w, 1e-6)          # warm-up: builds the kernel
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        ops.fused_add_rms_norm_(xi, ri, w, 1e-6)
    assert _core.counters()["sglang.fused_add_rms_norm"]["captured"] == 1
    xi.copy_(x)
    ri.copy_(res)
    graph.replay()
    _close("fused_add_rms_norm", (xi, ri), sglang_ops._engine_fused(x, res, w, 1e-6))
