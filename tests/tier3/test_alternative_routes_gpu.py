"""Alternative routes on the GPU (issue #14): each op routed to each of its alternatives
("torch": the engines' formula; "triton": the package's Triton kernel, where triton imports)
matches ktile's own kernels at the op's tolerance - bit for bit for dropout, whose Triton
kernel is ktile's semantics - with out= and in-place forms writing what the op writes; a CUDA
graph captured over routed calls replays them; torch.compile(fullgraph=True) runs them; and
after warm-up, routed and ktile calls compile nothing."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

import ktile.ops as ops  # noqa: E402
from ktile.bench.cases import close  # noqa: E402
from ktile.ops import _library as lib, alternatives  # noqa: E402

EPS = 1e-6
ROWS, COLS = 37, 4096


def rand(*shape, seed=0, dtype=torch.bfloat16):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype).cuda()


def _rms(out=None):
    x, w = rand(ROWS, COLS), rand(COLS, seed=1)
    return lambda: ops.rms_norm(x, w, EPS, out=None if out is None else out(x))


def _fused_in_place():
    x, r, w = rand(ROWS, COLS), rand(ROWS, COLS, seed=1), rand(COLS, seed=2)

    def call():
        xs, rs = x.clone(), r.clone()
        ops.fused_add_rms_norm_(xs, rs, w, EPS)
        return xs, rs
    return call


CASES = {   # function -> (op, a maker of a call returning its outputs)
    "rms_norm": ("rms_norm", _rms),
    "rms_norm_out": ("rms_norm", lambda: _rms(out=torch.empty_like)),
    "fused_add_rms_norm": ("fused_add_rms_norm", lambda: (lambda x, r, w: lambda: ops.
                           fused_add_rms_norm(x, r, w, EPS))(rand(ROWS, COLS),
                                                             rand(ROWS, COLS, seed=1),
                                                             rand(COLS, seed=2))),
    "fused_add_rms_norm_": ("fused_add_rms_norm", _fused_in_place),
    "layer_norm": ("layer_norm", lambda: (lambda x, w, b: lambda: ops.layer_norm(x, w, b, EPS))(
        rand(ROWS, COLS), rand(COLS, seed=1), rand(COLS, seed=2))),
    "softmax": ("softmax", lambda: (lambda x: lambda: ops.softmax(x))(
        rand(ROWS, 32000, dtype=torch.float32))),
    "silu_and_mul": ("act_and_mul", lambda: (lambda x: lambda: ops.silu_and_mul(x))(
        rand(ROWS, 2 * COLS))),
    "gelu_and_mul": ("act_and_mul", lambda: (lambda x: lambda: ops.gelu_and_mul(x))(
        rand(ROWS, 2 * COLS))),
    "scaled_int8_quant": ("scaled_int8_quant", lambda: (lambda x: lambda: ops.scaled_int8_quant(
        x))(rand(ROWS, COLS))),
    "scaled_fp8_quant": ("scaled_fp8_quant", lambda: (lambda x: lambda: ops.scaled_fp8_quant(
        x, use_per_token_if_dynamic=True))(rand(ROWS, COLS))),
    "embedding": ("embedding", lambda: (lambda ids, w: lambda: ops.embedding(ids, w))(
        torch.tensor([0, 5, 31999, -1, 32000, 7], device="cuda"), rand(32000, 512))),
    "dropout": ("dropout", lambda: (lambda x: lambda: ops.dropout(x, 0.1, 1234))(
        rand(ROWS, COLS))),
}


def _target() -> str:
    from ktile.runtime.devices import device, target_of
    return target_of(device(torch.cuda.current_device()))


@pytest.fixture
def route_to(monkeypatch):
    """route_to(op, kind): every shape of `op` on this GPU takes `kind` (a fresh table)."""
    def set_route(op_name: str, kind: str):
        if kind == "triton" and alternatives.triton_missing():
            pytest.skip(alternatives.triton_missing())
        op = lib.op_named(op_name)
        monkeypatch.setattr(op.table, "measured", lib.MeasuredRoutes(op.table.plans))
        op.table.bind(op)
        op.table.override(_target(), [lib.Route(kind, {}, targets=(_target(),))])
    return set_route


def _quantized(result):
    q, scale = result
    return q.float() * scale.view(-1, 1)


def _compare(function, got, want):
    if function.startswith("scaled_"):
        got, want = _quantized(got), _quantized(want)
        error = (got - want).abs().max().item() / want.abs().max().item()
        return error, 2 ** -3 if function == "scaled_fp8_quant" else 1.01 / 127
    return close(got, want)


@pytest.mark.parametrize("kind", alternatives.KINDS)
@pytest.mark.parametrize("function", list(CASES))
def test_each_alternative_matches_ktiles_kernels(function, kind, route_to):
    op_name, make = CASES[function]
    if kind not in alternatives.kinds_of(op_name):
        pytest.skip(f"{op_name} offers no {kind} route (ktile/ops/alternatives.py says why)")
    call = make()
    with ops.routing(alternatives=False):
        want = call()
    route_to(op_name, kind)
    got = call()
    torch.cuda.synchronize()
    if function == "dropout":
        assert torch.equal(got, want)                  # the same Philox stream
        return
    error, tolerance = _compare(function, got, want)
    assert error <= tolerance, (function, kind, error, tolerance)


def test_a_cuda_graph_replays_routed_calls(route_to):
    route_to("rms_norm", "torch")
    x, w = rand(8, COLS), rand(COLS, seed=1)
    out = torch.empty_like(x)
    ops.rms_norm(x, w, EPS, out=out)                   # eager first, as torch's warm-up does
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        ops.rms_norm(x, w, EPS, out=out)
    x.copy_(rand(8, COLS, seed=3))
    out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, alternatives.rms_norm_torch(x, w, EPS))


def test_compile_fullgraph_runs_the_alternative(route_to):
    route_to("softmax", "torch")
    x = rand(8, 1000, dtype=torch.float32)
    compiled = torch.compile(lambda x: ops.softmax(x) * 2, fullgraph=True)
    torch.testing.assert_close(compiled(x), torch.softmax(x, -1) * 2)


def test_routed_calls_after_warmup_compile_nothing(route_to):
    from ktile.runtime import build_count
    ops.warmup({"rms_norm": [(8, COLS)], "softmax": [(8, COLS)]}, dtypes=("bf16",))
    route_to("rms_norm", "torch")
    before = build_count()
    x, w = rand(8, COLS), rand(COLS, seed=1)
    ops.rms_norm(x, w, EPS)
    ops.softmax(x)                                     # ktile's own route, warmed up
    torch.cuda.synchronize()
    assert (build_count() - before).compiles == 0
