"""ktile/integrations/_core.py: switches, counters, the engine contract (any mismatch leaves
the engine stock with one warning), undo, the CUDA-graph contract, shadow mode."""
import types
import warnings

import pytest

from ktile.integrations import _core as core

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    for name in ("KTILE_TOY", "KTILE_TOY_NORM", "KTILE_TOY_SHADOW"):
        monkeypatch.delenv(name, raising=False)
    core.reset()
    yield
    core.reset()


class Layer:
    def forward(self, x, residual=None):
        return ("stock", x)


def test_switches_turn_the_whole_integration_or_one_op_off(monkeypatch):
    assert core.enabled("toy") and core.enabled("toy", "norm")
    monkeypatch.setenv("KTILE_TOY_NORM", "0")
    assert core.enabled("toy") and not core.enabled("toy", "norm") and core.enabled("toy", "mlp")
    monkeypatch.setenv("KTILE_TOY", "0")
    assert not core.enabled("toy", "mlp")
    assert core.install("toy", [core.Hook(Layer, "forward", ("self", "x"), lambda s, x: 1)]) is None
    assert Layer().forward(2) == ("stock", 2)


def test_install_replaces_and_undo_restores():
    hook = core.Hook(Layer, "forward", ("self", "x", "residual"),
                     lambda self, x, residual=None: ("ktile", x))
    done = core.install("toy", [hook])
    assert Layer().forward(3) == ("ktile", 3)
    done.undo()
    assert Layer().forward(3) == ("stock", 3)


@pytest.mark.parametrize("params,word", [(("self", "x", "eps"), "takes (self, x, residual)"),
                                         (("self",), None)])
def test_a_moved_signature_leaves_everything_stock_with_one_warning(params, word):
    good = core.Hook(types.SimpleNamespace(f=lambda a: a), "f", ("a",), lambda a: -a)
    module = good.owner
    moved = core.Hook(Layer, "forward", params, lambda self, x, residual=None: "ktile")
    gone = core.Hook(Layer, "backward", ("self",), lambda self: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert core.install("toy", [good, moved, gone]) is None
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "stays stock" in text and "Layer.backward is gone" in text
    if word:
        assert word in text
    assert module.f(5) == 5 and Layer().forward(1) == ("stock", 1)   # nothing was patched


def test_counters_keep_eager_captured_fallback_and_shadow_apart():
    core.record("toy.norm")
    core.record("toy.norm", "captured")
    core.record("toy.norm", "fallback")
    core.record("toy.norm", "reference")
    assert core.counters()["toy.norm"] == {"eager": 1, "captured": 1, "fallback": 1,
                                           "reference": 1, "shadow_mismatch": 0}
    assert core.calls("toy.norm") == 2


def test_a_never_op_is_refused_during_capture(monkeypatch):
    core.check_graph("toy.norm", "never")             # not capturing: fine
    monkeypatch.setattr(core, "capturing", lambda: True)
    core.check_graph("toy.norm", "safe")
    with pytest.raises(RuntimeError, match="graph='never'"):
        core.check_graph("toy.norm", "never")
    with pytest.raises(ValueError):
        core.check_graph("toy.norm", "sometimes")


def test_shadow_compare_counts_and_warns_once():
    a = torch.ones(4)
    assert core.shadow_compare("toy.norm", a, a + 1e-7, atol=1e-3, rtol=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not core.shadow_compare("toy.norm", a, a + 1, atol=1e-3, rtol=0)
        assert not core.shadow_compare("toy.norm", (a,), (a * 3,), atol=1e-3, rtol=0)
    assert len(caught) == 1 and "differs" in str(caught[0].message)
    assert core.counters()["toy.norm"]["shadow_mismatch"] == 2
