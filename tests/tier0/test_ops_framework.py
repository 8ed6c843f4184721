"""The ops framework (ktile/ops/_library.py): routing tables choose by shape and target and a
measured table overrides the shipped one; ops are discovered from their folders and exported
lazily (no torch at `import ktile.ops`); `all_kernels()` lists every shipped kernel for every
target; the eager fast path and the registered op agree."""
import subprocess
import sys

import pytest

from ktile.errors import InputError
from ktile.ops._library import Route, RoutingTable

torch = pytest.importorskip("torch")


def table():
    return RoutingTable([Route("small", {"W": 4}, max_cols=1024),
                         Route("gpu_only", {"W": 8}, max_cols=8192, targets=("sm_90a",)),
                         Route("wide", {"W": 16}, max_rows=100)])


def test_first_fitting_route_wins():
    t = table()
    assert t.choose(8, 1000, None).kernel == "small"
    assert t.choose(8, 4096, "sm_90a").kernel == "gpu_only"
    assert t.choose(8, 4096, "gfx950").kernel == "wide"


def test_a_route_for_some_targets_is_not_the_interpreters():
    assert table().choose(8, 4096, None).kernel == "wide"


def test_a_measured_table_comes_first_and_falls_back():
    t = table()
    t.override("gfx950", [Route("tuned", {"W": 2}, max_cols=2048)])
    assert t.choose(1, 2000, "gfx950").kernel == "tuned"
    assert t.choose(1, 4096, "gfx950").kernel == "wide"
    assert t.choose(1, 2000, "sm_90a").kernel == "gpu_only"


def test_no_route_is_an_input_error():
    with pytest.raises(InputError, match="1000 rows of 9000 columns"):
        table().choose(1000, 9000, "gfx1100")


def test_import_ktile_ops_does_not_import_torch():
    code = ("import sys, ktile, ktile.ops; "
            "assert 'torch' not in sys.modules, 'torch imported'; print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr


def test_norm_ops_are_discovered_and_exported():
    import ktile.ops as ops
    assert {"ktile.ops.rmsnorm.op", "ktile.ops.layernorm.op",
            "ktile.ops.fused_add_rmsnorm.op"} <= set(ops.op_modules())
    for name in ("rms_norm", "fused_add_rms_norm", "fused_add_rms_norm_", "layer_norm",
                 "layer_norm_backward"):
        assert callable(getattr(ops, name)) and name in dir(ops)


def test_an_unknown_op_function_names_the_ops():
    import ktile.ops as ops
    with pytest.raises(AttributeError, match="rms_norm"):
        ops.rms_nrom


def test_all_kernels_covers_every_route_and_target():
    from ktile.ops import all_kernels, all_ops
    from ktile.ops._library import TARGETS
    kernels = list(all_kernels())
    for op in all_ops():
        routes = [*op.table.routes, *op.also]
        mine = [k for k in kernels if k.op == op.name]
        # each (route kernel, constants, target, dtype) once: two routes of one kernel at the
        # same constants (softmax_rows) are one shipped kernel
        want = {(r.kernel, tuple(sorted(r.constants.items())), t, d) for r in routes
                for t in (r.targets or TARGETS) for d in op.dtypes}
        assert len(mine) == len(want), op.name
    norms = [k.id for k in kernels if k.op in NORMS]
    assert len(set(norms)) == len(norms) > 0


NORMS = ("rms_norm", "fused_add_rms_norm", "layer_norm", "layer_norm_backward")


def test_eager_fast_path_and_dispatcher_agree():
    from ktile.ops.rmsnorm import op
    x = torch.randn(3, 130).bfloat16()
    w = torch.randn(130).bfloat16()
    assert torch.equal(op._FUNCTIONAL(x, w, 1e-6), op._FUNCTIONAL.overload(x, w, 1e-6))


def test_opcheck_on_the_registered_ops():
    import ktile.ops  # noqa: F401 - registers
    from ktile.ops import rms_norm  # noqa: F401
    x, w = torch.randn(2, 64).bfloat16(), torch.randn(64).bfloat16()
    torch.library.opcheck(torch.ops.ktile.rms_norm.default, (x, w, 1e-6),
                          test_utils=("test_schema", "test_faketensor"))
    torch.library.opcheck(torch.ops.ktile.fused_add_rms_norm_.default,
                          (x.clone(), x.clone(), w, 1e-6),
                          test_utils=("test_schema", "test_faketensor"))
