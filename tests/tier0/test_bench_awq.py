"""benchmarks/awq.py's `--constants [KERNEL:]NAME=V,...` (no GPU: the spec's route only): a
spec without a kernel overrides the route the shape takes where it has every NAME and is
skipped elsewhere; KERNEL pins that kernel's route at its kind's shapes (decode or prefill);
an unknown kernel stops the run naming the spec."""
import importlib.util
from pathlib import Path

import pytest

# loaded by path: `import awq` could find AutoAWQ's package of that name
_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "awq.py"
_SPEC = importlib.util.spec_from_file_location("benchmarks_awq", _PATH)
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def test_a_spec_overrides_the_routed_constants_where_they_apply():
    prefill = bench.pinned_route("KB=16", 512, 4096)     # the dequantiser (wgmma_ws_nn unrouted)
    assert prefill.kernel == "awq_dequant"
    assert prefill.constants == {"R": 16, "KB": 16, "WARPS": 4}
    assert prefill.min_rows is None and prefill.max_rows is None     # pinned at any M
    assert bench.pinned_route("BN=256,STAGES=4", 512, 4096) is None  # no shipped route has BN
    decode = bench.pinned_route("UNROLL=1", 8, 4096)
    assert decode.kernel == "awq_gemv" and decode.constants["UNROLL"] == 1
    assert decode.constants["MB"] == 4                               # M 8's route otherwise


def test_a_named_kernel_is_pinned_at_its_kinds_shapes_only():
    gemv = bench.pinned_route("awq_gemv:MB=2,UNROLL=2", 1, 4096)
    assert (gemv.kernel, gemv.constants["MB"], gemv.constants["UNROLL"]) == ("awq_gemv", 2, 2)
    assert bench.pinned_route("awq_gemv:MB=2", 512, 4096) is None
    old = bench.pinned_route("awq_dequant:KB=64", 2048, 4096)
    assert old.kernel == "awq_dequant" and old.constants["KB"] == 64
    with pytest.raises(SystemExit, match="no_such_kernel"):
        bench.pinned_route("no_such_kernel:BN=1", 512, 4096)
