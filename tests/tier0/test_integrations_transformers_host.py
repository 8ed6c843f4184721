"""The host cost of the transformers integration's eager calls, by counting what each does (no
timing): a patched eager forward enters torch's dispatcher for no ktile op (neither the
integration's `torch.ops.ktile_transformers.*` nor the `torch.ops.ktile.*` inside it, although
the norms' weights are `nn.Parameter`s), and a repeated forward prepares no GPU signature and
plans no route again. The GPU call path runs on the CPU with its launch stubbed
(benchmarks/stub_gpu.py), so the forward costs no interpreter time; its values are not
checked here (test_integrations_transformers.py checks them on the interpreter)."""
import copy
import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from ktile.integrations import _core  # noqa: E402
from ktile.integrations import transformers as kt  # noqa: E402
from ktile.integrations import transformers_bench as bench  # noqa: E402
from ktile.ops import _library as lib  # noqa: E402
from ktile.runtime import gpu  # noqa: E402

ROUTED = ("rms_norm", "fused_add_rms_norm", "silu_and_mul", "linear", "rotary_embedding",
          "kv_cache_write", "attention")


def _stub_module():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "stub_gpu.py"
    spec = importlib.util.spec_from_file_location("ktile_stub_gpu", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def counted(monkeypatch):
    """{"prepare": new GPU signatures prepared, "plan": routing plans made}, counted while the
    GPU call path runs stubbed."""
    counts = {"prepare": 0, "plan": 0}
    prepare, plan = gpu.GpuCall._prepare, lib.RoutingTable.plan

    def counting_prepare(self, args):
        counts["prepare"] += 1
        return prepare(self, args)

    def counting_plan(self, target, key, make):
        def counting_make():
            counts["plan"] += 1
            return make()
        return plan(self, target, key, counting_make)

    monkeypatch.setattr(gpu.GpuCall, "_prepare", counting_prepare)
    monkeypatch.setattr(lib.RoutingTable, "plan", counting_plan)
    for op in lib.all_ops():      # plans an earlier test memoized: the first forward makes them
        op.table.plans.clear()
    for name in ("KTILE_TRANSFORMERS", *(f"KTILE_TRANSFORMERS_{op.upper()}" for op in kt.OPS)):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(kt.fw, "STATE", {"shadow": False})
    _core.reset()
    with _stub_module().stubbed_gpu() as runner:
        lib._RUNNER.append(runner)
        try:
            yield counts
        finally:
            lib._RUNNER.remove(runner)
            _core.reset()


@torch.no_grad()
def _prefill(model, cache, ids):
    cache.reset()
    model(ids, past_key_values=cache, use_cache=True, logits_to_keep=1)


@pytest.mark.parametrize("routes", ["default", "all_ktile"])
def test_a_repeated_eager_forward_skips_the_dispatcher_and_prepares_nothing(counted, monkeypatch,
                                                                            routes):
    from torch.profiler import ProfilerActivity, profile
    from transformers import StaticCache
    if routes == "all_ktile":
        monkeypatch.setattr(kt.fw, "ROUTES", {op: "ktile" for op in kt.OPS})
    model = kt.patch(copy.deepcopy(bench.build("tiny", None, "cpu")))
    assert all(isinstance(p, torch.nn.Parameter) for p in model.parameters())
    cache = StaticCache(config=model.config, max_cache_len=16)
    ids = torch.arange(12, dtype=torch.long).view(2, 6) % model.config.vocab_size
    _prefill(model, cache, ids)
    # the first forward prepared signatures (its plans may be memoized by an earlier test in
    # the same process: tables outside lib.all_ops(), e.g. matmul's)
    assert counted["prepare"] > 0
    counted.update(prepare=0, plan=0)
    before = {r: _core.calls(kt.route_name(r)) for r in ROUTED}
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _prefill(model, cache, ids)
    entered = sorted({e.key for e in prof.key_averages() if e.key.startswith("ktile")})
    assert entered == [], f"eager calls went through torch's dispatcher: {entered}"
    assert counted == {"prepare": 0, "plan": 0}
    routed = {r for r in ROUTED if kt.fw.ROUTES[r] == "ktile"}
    for r in ROUTED:
        made = _core.calls(kt.route_name(r)) - before[r]
        assert (made > 0) == (r in routed), (r, made)


def test_a_parameter_that_autograd_would_record_goes_through_the_dispatcher(monkeypatch):
    """The direct path has no autograd formula to skip: with grad enabled and a weight that
    requires it, the call is the registered op's, whose autograd says so at backward."""
    seen = []
    monkeypatch.setattr(lib.Dispatch, "__call__",
                        lambda self, *args: seen.append(lib._plain_eager(args)))
    x = torch.ones(4, 32)
    weight = torch.nn.Parameter(torch.ones(32))
    import ktile.ops
    ktile.ops.rms_norm(x, weight, 1e-6)
    with torch.no_grad():
        ktile.ops.rms_norm(x, weight, 1e-6)
    ktile.ops.rms_norm(x, weight.detach(), 1e-6)
    assert seen == [False, True, True]


def test_the_registered_ops_pass_opcheck():
    """What `torch.compile` sees (the registered ops behind the entries): schema, fake
    implementation and dispatch agree."""
    x = torch.randn(3, 64, dtype=torch.bfloat16)
    weight, residual = torch.randn(64, dtype=torch.bfloat16), torch.randn(3, 64).bfloat16()
    for name, args in (("rms_norm", (x, weight, 1e-6)),
                       ("fused_add_rms_norm", (x, residual, weight, 1e-6)),
                       ("silu_and_mul", (x,))):
        torch.library.opcheck(getattr(torch.ops.ktile_transformers, name).default, args,
                              test_utils=("test_schema", "test_faketensor"))
