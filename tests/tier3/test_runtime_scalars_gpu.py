"""Runtime scalars on an NVIDIA GPU (tier 3, skipped without one): RMSNorm with `eps: float` and
dropout with `seed: int`/`p: float` given at each call match their references for several
values with one build, inside a CUDA graph the values are those captured, and the torch op takes
them through the fast path."""
import numpy as np
import pytest

import ktile as hk
from ktile.ops.dropout.reference import dropout as dropout_reference
from ktile.ops.rmsnorm.reference import rmsnorm as rmsnorm_reference
from ktile.ops.rmsnorm.reference import tolerance
from ktile.runtime import build as build_mod

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16), p.x.batch))
def rmsnorm(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], eps: float):
    b, r = hk.arch.block_idx.y, hk.arch.block_idx.x
    tiles = hk.cdiv(x.cols, 64)
    t = hk.RT(hk.bf16, 16, 64)
    squares = hk.zeros(hk.RV(hk.fp32, 16))
    for c in range(tiles):
        xs = x[hk.tile_coord(b, 0, r, c)].load(t).to(hk.fp32)
        squares += hk.row_sum(xs * xs)
    inv_rms = hk.rsqrt(squares / hk.to_float(x.cols) + eps)
    for c in range(tiles):
        xs = x[hk.tile_coord(b, 0, r, c)].load(t).to(hk.fp32)
        ws = w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.bf16, 64, "col")).to(hk.fp32)
        o[hk.tile_coord(b, 0, r, c)] = (xs * inv_rms * ws).to(hk.bf16)


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, 64), hk.cdiv(p.x.rows, 16)))
def dropout(x: hk.Tensor[hk.fp32], seed: int, o: hk.Tensor[hk.fp32], *,
            p: hk.Scalar[hk.fp32] = 0.5):
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    idx = hk.tile_coord(0, 0, r, c)
    rows = hk.iota(hk.RT(hk.i32, 16, 64), "row") + r * 16
    cols = hk.iota(hk.RT(hk.i32, 16, 64), "col") + c * 64
    keep = hk.rand(seed, rows * x.cols + cols) > p
    xs = x[idx].load(hk.RT(hk.fp32, 16, 64))
    o[idx] = hk.where(keep, xs / (1 - p), 0.0)


@pytest.fixture
def builds(monkeypatch):
    made, real = [], build_mod.build_trace
    monkeypatch.setattr(build_mod, "build_trace", lambda *a, **k: made.append(1) or real(*a, **k))
    return made


def test_rmsnorm_eps_at_each_call_one_build(builds):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(2, 1, 40, 256, generator=g, device="cuda").to(torch.bfloat16)
    x[:, :, :16] = 1e-3
    w = (torch.rand(1, 1, 1, 256, generator=g, device="cuda") + 0.5).to(torch.bfloat16)
    o = torch.empty_like(x)
    for eps in (1e-6, 0.25, 1e-6):
        rmsnorm(x, w, o, eps)
        want = rmsnorm_reference(x.float().cpu().numpy(), w.float().cpu().numpy(), eps, hk.bf16)
        got = o.float().cpu().numpy()
        assert np.max(np.abs(got - want)) <= tolerance(want)
    assert len(builds) <= 1   # 0 when an earlier test of this process built it


def test_dropout_seed_and_p_at_each_call_one_build(builds):
    x = torch.rand(1, 1, 37, 90, device="cuda") + 0.5
    for seed, p in ((123, 0.5), (2024, 0.25), (-5, 0.75)):
        o = torch.full_like(x, float("nan"))
        dropout(x, seed, o, p=p)
        want, _ = dropout_reference(x.cpu().numpy().reshape(-1), p, seed)
        np.testing.assert_allclose(o.cpu().numpy().reshape(-1), want, rtol=0, atol=1e-6)
    assert len(builds) <= 1


def test_a_graph_replays_the_values_it_captured():
    x = torch.rand(1, 1, 32, 128, device="cuda") + 0.5
    o = torch.zeros_like(x)
    dropout(x, 1, o, p=0.5)                       # the first call builds, outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        dropout(x, 42, o, p=0.25)
    dropout(x, 7, o, p=0.9)                       # another value between capture and replay
    graph.replay()
    torch.cuda.synchronize()
    want, _ = dropout_reference(x.cpu().numpy().reshape(-1), 0.25, 42)
    np.testing.assert_allclose(o.cpu().numpy().reshape(-1), want, rtol=0, atol=1e-6)


def test_torch_op_with_scalars_on_the_gpu():
    op = hk.torch_op(dropout, name="dropout_scalars_gpu")
    x = torch.rand(1, 1, 16, 64, device="cuda") + 0.5
    for seed in (3, 4, 3):
        o = torch.zeros_like(x)
        op(x, seed, o, p=0.5)
        want, _ = dropout_reference(x.cpu().numpy().reshape(-1), 0.5, seed)
        np.testing.assert_allclose(o.cpu().numpy().reshape(-1), want, rtol=0, atol=1e-6)
