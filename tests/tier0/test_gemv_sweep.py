"""benchmarks/gemv_sweep.py without a GPU: every variant it pins is a route of the matmul table
for sm_90a whose constants pass the kernel's own shape rules at that M (a variant that could
never run would waste the H200's minutes), and the summary picks the fastest correct variant
and states it against cuBLAS and W's copy."""
import math
import os
import sys

import pytest

from ktile.ops.matmul.op import KERNELS

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))

import gemv_sweep  # noqa: E402
from matmul import pinned_route  # noqa: E402


@pytest.mark.parametrize("m", gemv_sweep.DECODE_M)
def test_every_variant_is_a_table_route_that_takes_m(m):
    specs = gemv_sweep.variants(m)
    assert len(specs) == len(set(specs))
    kinds = {spec.partition(":")[0] for spec in specs}
    assert {"skinny_wgmma_nt", "wgmma_gemv_nt", "swap_gemv_nt"} <= kinds
    assert ("gemv_nt" in kinds) == (m <= 8)
    for spec in specs:
        route = pinned_route(spec, m, 4096)
        assert route.kernel in KERNELS
        c = route.constants
        if route.kernel == "gemv_stream_nt":
            assert m <= c["MB"] and c["RW"] * c["MB"] <= 8
        if route.kernel == "skinny_nt":
            assert c["ROWS"] >= m
        if route.kernel == "swap_gemv_nt":
            assert m <= c["MN"] and 3 <= c["STAGES"] <= 8


def test_summary_takes_the_fastest_correct_variant():
    row = {"m": 4, "n": 4096, "k": 4096, "bytes": (4096 * 4096 + 2 * 4 * 4096) * 2,
           "cublas_ms": 0.020, "copy_w_ms": 0.030,
           "kernels": {"routed": {"ms": 0.025}, "b": {"ms": 0.016},
                       "c": {"error": "did not build"},
                       "d": {"wrong": True, "error": "max error 3 over tolerance 1"}}}
    s = gemv_sweep.summarize(row)
    assert s["best"] == "b" and s["ms"] == 0.016
    assert s["x_cublas"] == pytest.approx(0.020 / 0.016)
    assert s["routed_x_cublas"] == pytest.approx(0.020 / 0.025)
    copy_rate = 2 * 4096 * 4096 * 2 / 0.030
    assert s["pct_copy"] == pytest.approx(100 * row["bytes"] / 0.016 / copy_rate)


def test_summary_of_a_shape_where_nothing_ran():
    row = {"m": 1, "n": 64, "k": 64, "bytes": 1, "cublas_ms": 0.01, "copy_w_ms": 0.01,
           "kernels": {"routed": {"wrong": True, "error": "max error 3 > 1"}}}
    s = gemv_sweep.summarize(row)
    assert s["best"] is None and s["routed_x_cublas"] is None
    assert math.isnan(gemv_sweep.geomean([s["routed_x_cublas"], s["x_cublas"]]))  # none ran
    assert gemv_sweep.geomean([2.0, None, 8.0]) == pytest.approx(4.0)


def test_matmul_decode_rows_report_both_flushes(capsys):
    """benchmarks/matmul.py: a decode row's `*_clean` timings (timing.time_call(clean=True))
    give their own speedup line beside the default flush's."""
    import matmul
    row = {"kind": "decode", "m": 4, "n": 4096, "k": 4096, "correct": True}
    for who, ms in (("ktile", 0.030), ("torch", 0.020)):
        row[who] = {"ms": ms, "pct_copy": 50.0}
        row[who + "_graph"] = {"ms": ms - 0.004}
        row[who + "_clean"] = {"ms": ms - 0.010}
        row[who + "_graph_clean"] = {"ms": ms - 0.008}
    assert matmul.best(row, "ktile") == pytest.approx(0.026)
    assert matmul.best(row, "ktile", "_clean") == pytest.approx(0.020)
    matmul.print_table([row])
    lines = capsys.readouterr().out.splitlines()
    clean = [line for line in lines if line.startswith("  clean")]
    assert len(clean) == 1 and "0.50x" in clean[0], lines          # 0.010 / 0.020
    assert "0.62x" in lines[1], lines                               # 0.016 / 0.026
