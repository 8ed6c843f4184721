"""examples/validate.py covers every public ktile.ops function (issue #13): the op benchmark's
benches plus the compute-bound ones of ktile/bench/bench_compute.py; each of the latter passes
on the interpreter at its tiny shape, and its tolerance is tight enough to see a wrong value."""
import os
import sys

import pytest

from ktile.bench import bench_compute, cases

torch = pytest.importorskip("torch")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_bench_examples import validate  # noqa: E402

# public functions validate.py leaves out, each with its reason (none today)
NOT_VALIDATED: dict[str, str] = {}
COMPUTE = [b.name for b in bench_compute.BENCHES]


@pytest.fixture(autouse=True)
def on_the_cpu():
    cases.DEVICE[0] = "cpu"
    yield
    cases.DEVICE[0] = "cuda"


def test_validate_lists_every_public_op_once():
    import ktile.ops
    public = {name for op in ktile.ops.all_ops() for name in op.functions}
    listed = [*cases.benches(), *COMPUTE]
    assert len(listed) == len(set(listed)), "an op in both the op benchmark and bench_compute"
    assert set(listed) == public - set(NOT_VALIDATED)
    assert not set(COMPUTE) & set(cases.benches()), "benchmarks/ops.py must not sweep these"


def test_the_compute_bound_ops_match_torch_on_the_interpreter(monkeypatch, capsys):
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")     # scaled_dot_product_attention's target
    code, out, _ = validate(monkeypatch, capsys, "--cpu", "--only", ",".join(COMPUTE))
    assert code == 0, out
    assert out.splitlines()[-1] == f"{len(COMPUTE)} of {len(COMPUTE)} ops match torch"


def test_attention_off_its_target_is_skipped_not_failed(monkeypatch, capsys):
    monkeypatch.delenv("KTILE_TARGET", raising=False)
    code, out, _ = validate(monkeypatch, capsys, "--cpu", "--only",
                            "scaled_dot_product_attention")
    assert code == 0 and "not on this target" in out, out
    assert out.splitlines()[-1].endswith("skipped: scaled_dot_product_attention")


def _first_tensor(result):
    return cases.tensors(result)[0]


@pytest.mark.parametrize("name", COMPUTE)
def test_the_tolerance_sees_a_wrong_value(name):
    bench = {b.name: b for b in bench_compute.BENCHES}[name]
    inputs = bench.make(bench.extra["small"])
    want = bench.torch(*inputs)
    assert bench.compare(want, want)[0] <= bench.compare(want, want)[1]
    wrong = [t.clone() for t in cases.tensors(want)]
    flat = wrong[0].view(-1)
    flat[0] = flat[0] + max(flat.float().abs().max().item(), 1.0) * 0.5 + 1
    got = tuple(wrong) if isinstance(want, tuple) else wrong[0]
    error, tolerance = bench.compare(got, want)
    assert error > tolerance, f"{name}: a changed output passes ({error} <= {tolerance})"
