"""`ktile tune --static` for real (clang-22, cocheck, wave emulation), on a tiny space: rms_norm
on gfx950 at one ranked bucket (the default's kernel at its WARPS halved and doubled), in bf16
only. The table is marked not measured, names its method and rule, holds the quality
report of the winner and of the default, follows the rule, and loads (no route ignored; a
bucket where the default stayed is left to the built-in routes)."""
import pytest

import build_gates

pytest.importorskip("torch")

from ktile.autotune import static, tuner  # noqa: E402
from ktile.ops import _library as lib, _shipped  # noqa: E402

pytestmark = pytest.mark.tier1
TARGET = "gfx950"


def test_a_tiny_space_ranked_by_its_reports(monkeypatch, tmp_path):
    build_gates.amd()
    op = next(op for op in lib.all_ops() if op.name == "rms_norm")
    monkeypatch.setattr(op, "dtypes", ("bf16",))          # gated in bf16 only: fewer builds
    result = tuner.tune("rms_norm", TARGET, [(static.FILL_ROWS, 1024)], static=True,
                        command="ktile tune rms_norm --target gfx950 --static")
    assert result.ok and result.table is not None
    bucket = result.buckets[0]
    usable = [c for c in bucket.candidates if c.refused is None]
    assert len(bucket.candidates) >= 2 and bucket.default in usable
    for cand in usable:                       # every usable candidate has its report
        quality = bucket.qualities[cand]
        assert quality.spills == 0 and quality.waves >= 1 and quality.vgprs > 0
        assert quality.instructions_per_element > 0
    winner, default = bucket.qualities[bucket.winner], bucket.qualities[bucket.default]
    assert not any(static.better(bucket.qualities[c], winner) for c in usable)
    if bucket.replaced:
        assert static.better(winner, default) and "ok" in result.table["check"]["lines"][0]
    table = result.table
    assert table["measured"] is False and table["method"] == static.METHOD
    assert table["rule"] == static.RULE and "clang" in table["metadata"]["toolchain"]
    row = table["buckets"][0]
    assert row["quality"] == winner.to_json() and row["default_quality"] == default.to_json()
    path = _shipped.write_table(table, _shipped.table_path("rms_norm", TARGET, tmp_path))
    loaded = _shipped.shipped_routes(op, TARGET, tmp_path)      # a kept default is not loaded
    assert len(loaded) == (1 if bucket.replaced else 0), path
