"""The tuner's logic on the CPU (ktile/autotune/tuner.py): builds replaced by a fake that
passes every gate, times by a synthetic timer, so what is tested is the decision: a clearly
faster candidate replaces the default (and its p-value is below the level), equal ones do
not, a winner slower on the re-check is reverted, refusals keep their reason, and the
written table is what `RoutingTable.choose` then takes, inside its buckets only."""
import numpy as np
import pytest

pytest.importorskip("torch")

from ktile.autotune import candidates, spaces, tuner  # noqa: E402
from ktile.ops import _library as lib, _shipped  # noqa: E402
from ktile.runtime.gates import ResourceReport  # noqa: E402

TARGET = "sm_90a"
SHAPE = (4, 1024)


class FakeBuild:
    def __init__(self, trace):
        self.kernel, self.warps = trace.name, trace.warps
        self.resources = ResourceReport(trace.name, TARGET, registers=32)


class FakeTimer:
    """Seconds per call: 10 us x the candidate kernel's factor x 1% noise; `after` switches
    to other factors once `switch` calls were timed (a drift the re-check must catch)."""
    device = None

    def __init__(self, factors: dict, *, after: dict | None = None, switch: int = 0):
        self.factors, self.after, self.switch = factors, after, switch
        self.calls, self.rng = 0, np.random.default_rng(0)

    def __call__(self, candidate, shape, run) -> float:
        self.calls += 1
        factors = self.after if self.after and self.calls > self.switch else self.factors
        return 10e-6 * factors.get(candidate.route.kernel, 1.0) * (1 + self.rng.normal(0, .01))


@pytest.fixture
def fake_builds(monkeypatch):
    """No compiler: every trace 'builds' and passes the gates; the space is the default and
    the first route of each other kernel (no variants), to keep the traces few."""
    monkeypatch.setattr(candidates, "_build", lambda trace: (FakeBuild(trace), None))
    monkeypatch.setattr(spaces, "SPACES", {**spaces.SPACES, "rms_norm": spaces.Space(vary=())})


def rms_norm_op():
    return next(op for op in lib.all_ops() if op.name == "rms_norm")


def other_kernel(result) -> str:
    bucket = result.buckets[0]
    return next(c.route.kernel for c in bucket.candidates[1:]
                if c.route.kernel != bucket.default.route.kernel)


def test_buckets_cover_rows_and_cols_below_each_shape():
    found = tuner.buckets_of([(1, 4096), (512, 4096), (64, 1024)])
    assert [(b.rows, b.cols) for b in found] == [((1, 64), (1, 1024)), ((1, 1), (1025, 4096)),
                                                 ((2, 512), (1025, 4096))]


def test_a_clearly_faster_candidate_replaces_the_default(fake_builds):
    probe = tuner.tune("rms_norm", TARGET, [SHAPE], dry_run=True)
    assert len(probe.buckets[0].candidates) >= 2
    fast = other_kernel(probe)
    result = tuner.tune("rms_norm", TARGET, [SHAPE], rounds=20, timer=FakeTimer({fast: 0.8}))
    bucket = result.buckets[0]
    assert bucket.replaced and bucket.winner.route.kernel == fast
    assert bucket.p_value < 0.01 / (len(bucket.candidates) - 1)
    table = result.table
    assert table["buckets"][0]["route"]["kernel"] == fast
    assert table["buckets"][0]["winner_us"] < table["buckets"][0]["default_us"]
    assert table["check"]["never_slower"] and "ok" in table["check"]["lines"][0]
    assert table["metadata"]["command"] and table["metadata"]["utc"]


def test_equal_candidates_keep_the_default(fake_builds):
    result = tuner.tune("rms_norm", TARGET, [SHAPE], rounds=20, timer=FakeTimer({}))
    bucket = result.buckets[0]
    assert not bucket.replaced and bucket.winner is bucket.default
    assert result.table["buckets"][0]["route"] == result.table["buckets"][0]["default"]


def test_a_winner_slower_on_the_recheck_is_reverted(fake_builds):
    probe = tuner.tune("rms_norm", TARGET, [SHAPE], dry_run=True)
    fast, n = other_kernel(probe), len(probe.buckets[0].candidates)
    timer = FakeTimer({fast: 0.8}, after={fast: 1.3}, switch=20 * n)
    result = tuner.tune("rms_norm", TARGET, [SHAPE], rounds=20, timer=timer)
    bucket = result.buckets[0]
    assert not bucket.replaced and bucket.winner is bucket.default
    assert not result.table["check"]["never_slower"]
    assert "reverted" in result.table["check"]["lines"][0]


def test_refused_candidates_keep_their_reason(monkeypatch, fake_builds):
    monkeypatch.setattr(candidates, "_build", lambda trace: (None, "spills: 8 bytes"))
    result = tuner.tune("rms_norm", TARGET, [SHAPE], dry_run=True)
    assert not result.ok
    assert all(c.refused == "spills: 8 bytes" for c in result.buckets[0].candidates)


def test_the_written_table_routes_its_buckets_only(fake_builds, tmp_path, monkeypatch):
    probe = tuner.tune("rms_norm", TARGET, [SHAPE], dry_run=True)
    fast = other_kernel(probe)
    result = tuner.tune("rms_norm", TARGET, [SHAPE], rounds=20, timer=FakeTimer({fast: 0.8}))
    op = rms_norm_op()
    _shipped.write_table(result.table, _shipped.table_path("rms_norm", TARGET, tmp_path))
    monkeypatch.setattr(_shipped, "ROUTES_DIR", tmp_path)
    monkeypatch.setattr(op.table, "measured", lib.MeasuredRoutes())
    op.table.bind(op)
    builtin = lib.RoutingTable(op.table.routes)
    assert op.table.choose(*SHAPE, TARGET).kernel == fast
    for rows, cols in [(SHAPE[0] + 1, SHAPE[1]), (1, SHAPE[1] + 16)]:    # outside the bucket
        assert op.table.choose(rows, cols, TARGET) == builtin.choose(rows, cols, TARGET)


def test_bad_input_is_refused_before_any_build():
    from ktile.errors import InputError
    for call in (lambda: tuner.tune("no_such_op", TARGET, [SHAPE]),
                 lambda: tuner.tune("rms_norm", "sm_80", [SHAPE]),
                 lambda: tuner.tune("rms_norm", TARGET, [(0, 5)]),
                 lambda: tuner.tune("rms_norm", TARGET, [SHAPE], dtype="i8"),
                 lambda: tuner.tune("rms_norm", TARGET, [SHAPE], rounds=2)):
        with pytest.raises(InputError):
            call()


def test_the_space_starts_at_the_default_and_keeps_held_coverage():
    op = rms_norm_op()
    default = lib.RoutingTable(op.table.routes).choose(*SHAPE, TARGET)
    found = spaces.SPACES["rms_norm"].candidates(op, TARGET, *SHAPE)
    assert found[0] == default
    keys = [(r.kernel, tuple(sorted(r.constants.items()))) for r in found]
    assert len(keys) == len(set(keys)) and len(found) > 2
    base = default.constants
    for route in found:
        if route.kernel == default.kernel and "HELD" in base:
            c = route.constants      # the view columns a block holds (C: tiles vary in width)
            assert c["HELD"] * c["WARPS"] * c.get("C", 1) >= \
                base["HELD"] * base["WARPS"] * base.get("C", 1)
            assert c["HELD"] <= spaces.MAX_HELD and c["WARPS"] <= spaces.MAX_WARPS


def test_progress_draws_only_when_enabled():
    import io
    from ktile.autotune.progress import Progress
    quiet, loud = io.StringIO(), io.StringIO()
    for stream, enabled in ((quiet, None), (loud, True)):      # StringIO is not a terminal
        bar = Progress(2, enabled=enabled, stream=stream)
        bar.step("a")
        bar.add(2)
        bar.step("b")
        bar.close()
    assert quiet.getvalue() == ""
    assert "1/2 a" in loud.getvalue() and "2/4 b" in loud.getvalue()
