"""Alternative routes (ktile/ops/alternatives.py, alternatives_dispatch.py, _shipped.py): a
table's "torch" and "triton" buckets load, the registered op runs the alternative at a
bucket's shapes and ktile's route outside them, with out= and in-place semantics kept; the
switch (routing(alternatives=False), KTILE_ALTERNATIVES=0); a missing triton warns once and
loads nothing; alternatives an op does not offer (dropout's torch) are refused with the
reason; the tuner's candidates include the alternatives and a faster one wins its bucket.

No GPU here: a CUDA tensor is what takes an alternative, so the tests swap the dispatch's
device probe for one that gives CPU tensors the sm_90a target (`gpu`), and the torch formulas
run on the CPU. tests/tier3/test_alternative_routes_gpu.py runs them on the H200, with
torch.compile(fullgraph=True) and CUDA-graph capture (a CPU compile costs ~25 s here).
"""
import json
import warnings

import pytest

torch = pytest.importorskip("torch")

from ktile.errors import KernelWarning  # noqa: E402
from ktile.autotune import tuner  # noqa: E402
from ktile.ops import _library as lib, _shipped, alternatives  # noqa: E402
from ktile.ops import alternatives_dispatch as dispatch  # noqa: E402
import ktile.ops as ops  # noqa: E402
from tests.tier0.test_autotune_tuner import FakeTimer, fake_builds  # noqa: E402,F401

TARGET = "sm_90a"
EPS = 1e-5


@pytest.fixture
def gpu(monkeypatch):
    """CPU tensors dispatch as on an sm_90a GPU; records the route each routed call took."""
    taken = []
    monkeypatch.setattr(dispatch, "_GPU_TARGET", [lambda lead: TARGET])
    real = dispatch.route_of

    def recording(alternative, args):
        route = real(alternative, args)
        taken.append(None if route is None else route.kernel)
        return route
    monkeypatch.setattr(dispatch, "route_of", recording)
    return taken


@pytest.fixture
def table(tmp_path, monkeypatch):
    """write(op_name, buckets) -> the op, reading that table (fresh) from a tmp routes folder."""
    monkeypatch.setattr(_shipped, "ROUTES_DIR", tmp_path)

    def write(op_name, buckets):
        op = lib.op_named(op_name)
        monkeypatch.setattr(op.table, "measured", lib.MeasuredRoutes(op.table.plans))
        op.table.bind(op)
        path = _shipped.table_path(op_name, TARGET, tmp_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"format": _shipped.FORMAT, "op": op_name, "target": TARGET,
                                    "buckets": buckets}))
        return op
    return write


def bucket(rows, cols, kind) -> dict:
    return {"rows": list(rows), "cols": list(cols), "route": {"kind": kind}}


def loading(op):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        found = op.table.measured.alternatives(TARGET)
    return found, [str(w.message) for w in seen if issubclass(w.category, KernelWarning)]


def rand(*shape, seed=0, dtype=torch.bfloat16):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def test_a_torch_route_loads_beside_the_ktile_routes(table):
    op = table("rms_norm", [bucket((1, 8), (1, 64), "torch")])
    found, seen = loading(op)
    assert not seen and [(r.kernel, r.max_rows, r.max_cols) for r in found] == [("torch", 8, 64)]
    assert op.table.measured.get(TARGET) == []         # choose() never sees it
    assert op.table.choose(4, 64, TARGET).kernel not in alternatives.KINDS


def test_dispatch_takes_the_alternative_in_its_bucket_only(table, gpu):
    table("rms_norm", [bucket((1, 8), (1, 64), "torch")])
    x, w = rand(4, 64), rand(64, seed=1)
    got = ops.rms_norm(x, w, EPS)
    assert gpu[-1] == "torch"
    assert torch.equal(got, alternatives.rms_norm_torch(x, w, EPS))
    out = torch.empty_like(x)
    assert ops.rms_norm(x, w, EPS, out=out) is out and gpu[-1] == "torch"
    assert torch.equal(out, got)                       # out= written by the alternative
    tall = rand(9, 64)
    ops.rms_norm(tall, w, EPS)                         # 9 rows: outside, ktile's route
    assert gpu[-1] is None


def test_the_in_place_form_mutates_what_the_op_mutates(table, gpu):
    table("fused_add_rms_norm", [bucket((1, 8), (1, 64), "torch")])
    x, residual, w = rand(2, 3, 64), rand(2, 3, 64, seed=1), rand(64, seed=2)
    want_out, want_residual = alternatives.fused_add_rms_norm_torch(x, residual, w, EPS)
    ops.fused_add_rms_norm_(x, residual, w, EPS)
    assert gpu[-1] == "torch"
    assert torch.equal(x, want_out) and torch.equal(residual, want_residual)


@pytest.mark.parametrize("name", ["rms_norm", "fused_add_rms_norm", "layer_norm", "softmax"])
def test_each_torch_route_matches_the_ops_reference(name):
    """The tuner's check of an alternative (`Op.check` pinned to it), for the ops with one."""
    op = lib.op_named(name)
    route = lib.Route("torch", {})
    with lib.pinned(op.table, route):
        error, tolerance = op.check(5, 96, "bf16")
    assert error <= tolerance


def test_the_switch_turns_alternatives_off(table, gpu):
    table("softmax", [bucket((1, 8), (1, 64), "torch")])
    x = rand(3, 64, dtype=torch.float32)
    with ops.routing(alternatives=False):
        ops.softmax(x)
    assert gpu == []                                   # not even looked for
    ops.softmax(x)
    assert gpu[-1] == "torch"
    from ktile.errors import InputError
    with pytest.raises(InputError, match="alternatives"):
        with ops.routing(alternatives="no"):
            pass


def test_ktile_alternatives_0_turns_them_off(monkeypatch):
    """Read once, at import (`_ENABLED`'s first entry is `from_env()`)."""
    for value, on in [("0", False), ("off", False), ("1", True), ("", True)]:
        monkeypatch.setenv("KTILE_ALTERNATIVES", value)
        assert dispatch.from_env() is on


def test_a_missing_triton_warns_once_and_loads_no_triton_route(table, monkeypatch):
    def no_triton():
        raise ImportError("No module named 'triton'")
    monkeypatch.setattr(alternatives, "_norms", no_triton)
    op = table("rms_norm", [bucket((1, 8), (1, 64), "triton"),
                            bucket((9, 64), (1, 64), "triton"),
                            bucket((1, 8), (65, 128), "torch")])
    found, seen = loading(op)
    assert [r.kernel for r in found] == ["torch"]
    assert len(seen) == 1 and "triton does not import" in seen[0] and "[9, 64]" in seen[0]


def test_a_triton_route_loads_where_triton_imports(table, monkeypatch):
    monkeypatch.setattr(alternatives, "triton_missing", lambda: None)
    found, seen = loading(table("layer_norm", [bucket((1, 8), (1, 64), "triton")]))
    assert not seen and [r.kernel for r in found] == ["triton"]


def test_routes_an_op_does_not_offer_are_refused_with_the_reason(table):
    found, seen = loading(table("dropout", [bucket((1, 8), (1, 64), "torch")]))
    assert not found and len(seen) == 1
    assert "no torch alternative" in seen[0] and "random numbers" in seen[0]
    assert alternatives.kinds_of("dropout") == ("triton",)
    assert alternatives.kinds_of("embedding") == ("triton",)
    for name in ("rms_norm", "fused_add_rms_norm", "layer_norm", "softmax", "act_and_mul",
                 "scaled_int8_quant", "scaled_fp8_quant"):
        assert alternatives.kinds_of(name) == ("torch", "triton"), name


def test_the_tuner_times_the_alternatives_and_a_faster_one_wins(fake_builds, monkeypatch,
                                                                 tmp_path):
    monkeypatch.setattr(alternatives, "triton_missing", lambda: "triton does not import here")
    shape = (4, 1024)
    result = tuner.tune("rms_norm", TARGET, [shape], rounds=20, alternatives=True,
                        timer=FakeTimer({"torch": 0.8}))
    bucket_ = result.buckets[0]
    labels = [c.label for c in bucket_.candidates]
    assert labels[0] not in alternatives.KINDS and labels[-2:] == ["torch", "triton"]
    assert bucket_.candidates[-1].refused == "triton does not import here"   # reported
    assert bucket_.replaced and bucket_.winner.label == "torch"
    assert result.table["buckets"][0]["route"] == {"kind": "torch"}
    assert result.table["check"]["never_slower"]
    _shipped.write_table(result.table, _shipped.table_path("rms_norm", TARGET, tmp_path))
    monkeypatch.setattr(_shipped, "ROUTES_DIR", tmp_path)
    op = lib.op_named("rms_norm")
    monkeypatch.setattr(op.table, "measured", lib.MeasuredRoutes(op.table.plans))
    op.table.bind(op)
    found, seen = loading(op)
    assert not seen and [(r.kernel, r.max_rows, r.max_cols) for r in found] == [("torch", 4,
                                                                                  1024)]


def test_an_equal_alternative_keeps_the_default(fake_builds):
    result = tuner.tune("rms_norm", TARGET, [(4, 1024)], rounds=20, alternatives=True,
                        timer=FakeTimer({}))
    assert not result.buckets[0].replaced
    assert "torch" in [c.label for c in result.buckets[0].candidates]


def test_every_alternative_has_its_registered_ops_arguments():
    """An alternative is called with the registered op's arguments: the same count, for every
    kind (a renamed op or a changed schema is caught here, not on the GPU)."""
    import inspect
    lib.all_ops()
    for qualname, alternative in alternatives.ALTERNATIVES.items():
        namespace, name = qualname.split("::")
        schema = getattr(getattr(torch.ops, namespace), name).default._schema
        for kind in alternatives.KINDS:
            fn = getattr(alternative, kind)
            if fn is not None:
                assert len(inspect.signature(fn).parameters) == len(schema.arguments), \
                    (qualname, kind)
