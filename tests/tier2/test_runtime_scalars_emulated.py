"""Runtime scalars under wave emulation of gfx1100 and gfx950: the generated AMD C++ takes them by
value after the globals, the harness passes the launch's values, and two calls with different
values give the reference's two results from one trace and one host build."""
import numpy as np
import pytest

import ktile as hk
from ktile.emulate import build as emulate_build
from ktile.emulate import emulate
from ktile.ops.dropout.reference import dropout as dropout_reference

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, 64), hk.cdiv(p.x.rows, 16)))
def dropout(x: hk.Tensor[hk.fp32], seed: int, o: hk.Tensor[hk.fp32], p: float, *,
            scale: hk.Scalar[hk.fp32] = 1.0):
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    idx = hk.tile_coord(0, 0, r, c)
    rows = hk.iota(hk.RT(hk.i32, 16, 64), "row") + r * 16
    cols = hk.iota(hk.RT(hk.i32, 16, 64), "col") + c * 64
    keep = hk.rand(seed, rows * x.cols + cols) > p
    xs = x[idx].load(hk.RT(hk.fp32, 16, 64))
    o[idx] = hk.where(keep, xs / (1 - p), 0.0) * scale


@pytest.mark.parametrize("target", ["gfx1100", "gfx950"])
def test_two_values_one_trace_one_build(target, monkeypatch):
    dropout._traces.clear()
    builds, real = [], emulate_build.build_emulator
    monkeypatch.setattr("ktile.emulate.run.build_emulator",
                        lambda source, tgt, **kw: builds.append(source) or real(source, tgt, **kw))
    x = torch.rand(1, 1, 20, 90, generator=torch.Generator().manual_seed(1)) + 0.5
    outs = []
    for seed, p, scale in ((123, 0.5, 1.0), (7, 0.25, 2.0)):
        o = torch.full_like(x, float("nan"))
        emulate(dropout, x, seed, o, p, target=target, scale=scale)
        want, _ = dropout_reference(x.numpy().reshape(-1), p, seed)
        np.testing.assert_allclose(o.numpy().reshape(-1), want * np.float32(scale), rtol=0,
                                   atol=1e-6)
        outs.append(o)
    assert not torch.equal(outs[0], outs[1])
    assert len(dropout._traces) == 1 and len(set(builds)) == 1


def test_the_harness_is_told_the_scalar_types():
    program, kernel, _ = emulate_build.program_source(dropout.source(target="gfx1100"))
    assert "with_scalars<int32_t, float, float>::run_kernel(dropout, dropout__grid" in program
