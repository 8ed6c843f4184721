"""Warm-up, then nothing compiles (issue #14), on the CPU with nvcc: `ktile.ops.warmup` of a
small decoder model for sm_90a builds every kernel its op calls reach; then every one of those
op calls, made again the way a call on an sm_90a GPU gets its code objects (build-only mode),
asks the build cache for no key warm-up did not, and runs no compiler (`build_count`). The key
set makes the check hold whatever the disk cache held before the test."""
import importlib

import pytest

import build_gates

from ktile.runtime import build_count
from ktile.runtime.builds import build_keys, building

torch = pytest.importorskip("torch")
warm = importlib.import_module("ktile.ops.warmup")   # ktile.ops.warmup is the function
pytestmark = pytest.mark.tier1

MODEL = {"hidden_size": 256, "intermediate_size": 512, "vocab_size": 1000, "num_heads": 4,
         "head_dim": 64, "max_tokens": 600}


@pytest.fixture(scope="module")
def nvcc():
    build_gates.hopper()


def test_no_compile_after_warmup(nvcc):
    report = warm.warmup(MODEL, target="sm_90a")
    assert report.calls > 0 and report.compiles + report.hits > 0
    before, keys = build_count(), build_keys()
    shapes = warm.model_shapes(MODEL)
    with building("sm_90a"):
        for function, problems in shapes.items():
            for rows, cols in problems:
                warm.call_op(function, rows, cols, torch.bfloat16, MODEL)
    after = build_count() - before
    assert after.compiles == 0
    assert after.hits > 0 and build_keys() == keys


def test_model_shapes_split_rows_at_the_tables_bounds():
    shapes = warm.model_shapes(MODEL)
    assert set(shapes) == set(warm.CALLS) - {"layer_norm"}
    softmax_rows = [rows for rows, _ in shapes["softmax"]]
    bounds = [r.max_rows for r in warm._op("softmax").table.routes
              if r.max_rows is not None and r.max_rows < MODEL["max_tokens"]]
    for bound in bounds:
        assert bound in softmax_rows and bound + 1 in softmax_rows
    assert softmax_rows[0] == 1 and softmax_rows[-1] == MODEL["max_tokens"]


def test_bad_warmup_input_is_refused():
    from ktile.errors import InputError
    for given, kwargs in [({"hidden_size": 8}, {"target": "sm_90a"}),
                          ({"rms_norm": [(0, 8)]}, {"target": "sm_90a"}),
                          ({"no_such_fn": [(1, 8)]}, {"target": "sm_90a"}),
                          ({"rms_norm": [(1, 8)]}, {"target": "sm_90a", "dtypes": ("bf17",)}),
                          ([(1, 8)], {"target": "sm_90a"})]:
        with pytest.raises(InputError):
            warm.warmup(given, **kwargs)
