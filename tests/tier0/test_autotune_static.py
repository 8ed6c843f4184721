"""Static tables (ktile/autotune/static.py) on the CPU: builds replaced by fakes whose static
quality reports are made up, the emulated check replaced, so what is tested is the rule (the
default's kernel only; spills, then waves, then instructions and waits per element loaded, the
default kept on a tie and in buckets too small to fill the GPU), the revert on a failed check, the table's marks
("measured": false, the method, the rule) and `ktile routes` showing them."""
from collections import Counter
from types import SimpleNamespace

import pytest

pytest.importorskip("torch")

from ktile.autotune import candidates, cli_routes, spaces, static, tuner  # noqa: E402
from ktile.errors import InputError  # noqa: E402
from ktile.ops import _library as lib, _shipped  # noqa: E402
from ktile.runtime.gates import ResourceReport  # noqa: E402

TARGET = "gfx950"
SHAPES = [(1, 1024), (static.FILL_ROWS, 1024)]      # one unranked bucket, one ranked


def quality(**given):
    found = dict(spills=0, waves=4, vgprs=64, instructions_per_element=10.0,
                 waits_per_element=1.0, hot_loop=True)
    return static.Quality(**{**found, **given})


def fake_report(*, vgprs=64, waves=4, spills=0, instructions=100, waits=4, loads=None,
                loop=True):
    """What static.py reads of an AmdReport: resources, occupancy, the (hot loop's) mix."""
    mix = SimpleNamespace(instructions=instructions, waits=waits,
                          global_loads=Counter(loads or {128: 2}))
    resources = SimpleNamespace(vgpr_spills=spills, sgpr_spills=0, scratch_bytes=0, vgprs=vgprs)
    checked = SimpleNamespace(resources=resources, occupancy=SimpleNamespace(waves=waves))
    whole = SimpleNamespace(instructions=instructions * 2, waits=waits * 2,
                            global_loads=Counter(loads or {128: 2}))
    return SimpleNamespace(checked=checked, mix=SimpleNamespace(
        hot_loop=mix if loop else None, whole=whole))


def built(report):
    return SimpleNamespace(quality=report)


def test_the_rule_orders_spills_waves_then_counts_per_element():
    assert static.better(quality(), quality(spills=16))
    assert static.better(quality(waves=8, instructions_per_element=20), quality(waves=4))
    # waves past WAVES_COUNTED are a tie: the per-element counts decide
    assert static.better(quality(waves=static.WAVES_COUNTED, instructions_per_element=9),
                         quality(waves=2 * static.WAVES_COUNTED))
    assert static.better(quality(instructions_per_element=9.0), quality())
    assert not static.better(quality(instructions_per_element=9.8), quality())   # within 5%
    assert static.better(quality(waits_per_element=0.5), quality())
    assert not static.better(quality(), quality())


def test_quality_counts_per_element_loaded_in_the_hot_loop():
    # 2 loads of 128 bits per lane = 16 bf16 elements; 100 instructions, 4 waits
    found = static.quality_of([built(fake_report())], 16)
    assert found.instructions_per_element == pytest.approx(100 / 16)
    assert found.waits_per_element == pytest.approx(4 / 16) and found.hot_loop
    whole = static.quality_of([built(fake_report(loop=False))], 16)       # no loop: the whole kernel
    assert whole.instructions_per_element == pytest.approx(200 / 16) and not whole.hot_loop
    worst = static.quality_of([built(fake_report(waves=8)),
                               built(fake_report(waves=2, vgprs=200))], 16)
    assert worst.waves == 2 and worst.vgprs == 200
    nvidia = SimpleNamespace(quality=None)
    assert static.quality_of([nvidia], 16) is None


class FakeBuild:
    """A build that passed the gates; its report says what REPORTS holds for its kernel's
    WARPS (the variants of one kernel differ by WARPS)."""
    reports: dict = {}

    def __init__(self, trace):
        self.kernel, self.warps = trace.name, trace.warps
        self.resources = ResourceReport(trace.name, TARGET, registers=32)
        self.quality = self.reports.get(trace.constants.get("WARPS"), fake_report())


@pytest.fixture
def fake_builds(monkeypatch):
    monkeypatch.setattr(candidates, "_build", lambda trace: (FakeBuild(trace), None))
    monkeypatch.setattr(spaces, "SPACES", {**spaces.SPACES, "rms_norm": spaces.Space()})
    monkeypatch.setattr(FakeBuild, "reports", {})


def ok_check(*args):
    return None


def other_warps(result):
    bucket = result.buckets[-1]
    default = bucket.default.route
    return next(c.route.constants["WARPS"] for c in bucket.candidates[1:]
                if c.refused is None and c.route.kernel == default.kernel
                and c.route.constants["WARPS"] != default.constants["WARPS"])


def test_a_better_report_replaces_the_default_in_ranked_buckets_only(fake_builds):
    probe = tuner.tune("rms_norm", TARGET, SHAPES, dry_run=True, static=True)
    small, large = probe.buckets
    assert not static.ranked(small) and len(small.candidates) == 1     # only the default built
    assert static.ranked(large) and len(large.candidates) >= 2
    assert {c.route.kernel for c in large.candidates} == {large.default.route.kernel}
    FakeBuild.reports[other_warps(probe)] = fake_report(waves=8)
    result = tuner.tune("rms_norm", TARGET, SHAPES, static=True, check=ok_check)
    small, large = result.buckets
    assert not small.replaced and small.winner is small.default
    assert large.replaced and large.winner.route.constants["WARPS"] == other_warps(probe)
    table = result.table
    assert table["measured"] is False and table["method"] == static.METHOD
    assert table["rule"] == static.RULE and table["check"]["emulated"]
    assert table["buckets"][1]["quality"]["waves"] == 8
    assert table["buckets"][1]["default_quality"]["waves"] == 4


def test_equal_reports_keep_the_default(fake_builds):
    result = tuner.tune("rms_norm", TARGET, SHAPES, static=True, check=ok_check)
    assert not any(b.replaced for b in result.buckets)
    assert all(b["route"] == b["default"] for b in result.table["buckets"])


def test_a_winner_failing_the_emulated_check_is_reverted(fake_builds):
    probe = tuner.tune("rms_norm", TARGET, SHAPES, dry_run=True, static=True)
    FakeBuild.reports[other_warps(probe)] = fake_report(waves=8)
    result = tuner.tune("rms_norm", TARGET, SHAPES, static=True,
                        check=lambda *args: "max error 1 over the tolerance 0.01 at 2x1024")
    large = result.buckets[-1]
    assert not large.replaced and large.winner is large.default
    assert not result.table["check"]["emulated"]
    assert "reverted" in result.table["check"]["lines"][0]


def test_static_is_refused_for_an_nvidia_target():
    with pytest.raises(InputError, match="static quality report"):
        tuner.tune("rms_norm", "sm_90a", SHAPES, static=True)


def test_routes_shows_a_static_table_as_not_measured(fake_builds, tmp_path, monkeypatch, capsys):
    probe = tuner.tune("rms_norm", TARGET, SHAPES, dry_run=True, static=True)
    FakeBuild.reports[other_warps(probe)] = fake_report(waves=8)
    result = tuner.tune("rms_norm", TARGET, SHAPES, static=True, check=ok_check,
                        command="ktile tune rms_norm --target gfx950 --static")
    _shipped.write_table(result.table, _shipped.table_path("rms_norm", TARGET, tmp_path))
    monkeypatch.setattr(_shipped, "ROUTES_DIR", tmp_path)
    op = next(op for op in lib.all_ops() if op.name == "rms_norm")
    monkeypatch.setattr(op.table, "measured", lib.MeasuredRoutes())
    op.table.bind(op)
    assert op.table.choose(static.FILL_ROWS - 1, 1024, TARGET).constants["WARPS"] == other_warps(probe)
    # the unranked bucket (the default stayed) is not loaded: the built-in routes serve it
    assert len(op.table.measured[TARGET]) == 1
    assert cli_routes.main(["rms_norm", "--target", TARGET, "--json"]) == 0
    out = capsys.readouterr().out
    assert "NOT measured: chosen by the static quality report" in out
    import json
    entry = json.loads(out.strip().splitlines()[-1])["tables"][0]["shipped"]
    assert entry["measured"] is False and entry["method"] == static.METHOD
    assert entry["rule"] == static.RULE and entry["ok"]
    assert [b["builtin"] for b in entry["buckets"]] == [True, False]
    assert "the default stayed: the built-in routes serve it" in out


def test_a_stale_static_table_is_ignored_with_one_warning(tmp_path, monkeypatch):
    """A static table naming a kernel the op no longer has (a kernel rewritten since the
    table was generated): its bucket is ignored with one KernelWarning, `ktile routes` says so
    (exit 1), and the op takes its built-in routes there."""
    from ktile.errors import KernelWarning
    stale = {"kind": "ktile", "kernel": "rms_norm_gone", "constants": {"WARPS": 4}}
    table = {"format": _shipped.FORMAT, "op": "rms_norm", "target": TARGET, "measured": False,
             "method": static.METHOD, "rule": static.RULE, "dtype": "bf16", "metadata": {},
             "buckets": [{"rows": [1, 4096], "cols": [1, 1024], "route": stale,
                          "default": stale, "replaced": True}]}
    _shipped.write_table(table, _shipped.table_path("rms_norm", TARGET, tmp_path))
    monkeypatch.setattr(_shipped, "ROUTES_DIR", tmp_path)
    op = next(op for op in lib.all_ops() if op.name == "rms_norm")
    monkeypatch.setattr(op.table, "measured", lib.MeasuredRoutes())
    op.table.bind(op)
    with pytest.warns(KernelWarning, match="rms_norm_gone") as caught:
        route = op.table.choose(8, 1024, TARGET)
    assert len([w for w in caught if issubclass(w.category, KernelWarning)]) == 1
    assert route == lib.RoutingTable(op.table.routes).choose(8, 1024, TARGET)
    assert cli_routes.main(["rms_norm", "--target", TARGET]) == 1


def test_the_recorded_command_leaves_out_where_the_table_went():
    from ktile.autotune.cli_tune import _command
    argv = ["rms_norm", "--target", TARGET, "--static", "--out", "/tmp/t.json"]
    assert _command("ktile tune", argv) == f"ktile tune rms_norm --target {TARGET} --static"
    assert _command("ktile tune", ["softmax", "--out=/tmp/t.json"]) == "ktile tune softmax"
