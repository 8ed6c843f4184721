"""A kernel defined anew by the same `def` (a factory called twice) reads its source and
compiles its control-flow rewrite once, and each definition still binds its own closure."""
import inspect

import numpy as np

import ktile as hk
from ktile.lang import rewrite, sources


def make_scale(factor: float):
    @hk.kernel(grid=lambda p: (1, 1, 1))
    def scale(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        for c in range(0, 1):            # a loop, so the rewrite has work to do
            o[0, 0, 0, c] = a[0, 0, 0, c].load(hk.RT(hk.fp32, 16, 16)) * factor
    return scale


def test_the_same_def_reads_its_source_once(monkeypatch):
    calls = []
    real = inspect.getsourcelines
    monkeypatch.setattr(sources.inspect, "getsourcelines",
                        lambda fn: calls.append(fn.__name__) or real(fn))
    monkeypatch.setattr(sources, "_LINES", {})
    monkeypatch.setattr(rewrite, "_REWRITTEN", {})
    for factor in (2.0, 3.0, 4.0):
        make_scale(factor).trace()
    assert calls.count("scale") == 1
    assert len(rewrite._REWRITTEN) == 1


def test_each_definition_keeps_its_own_closure():
    a = np.arange(256, dtype=np.float32).reshape(1, 1, 16, 16)
    for factor in (2.0, -0.5):
        o = np.zeros_like(a)
        make_scale(factor)(a, o)
        np.testing.assert_array_equal(o, a * np.float32(factor))
