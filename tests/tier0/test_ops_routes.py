"""The library's shipped routes are sound on every target (issue #13), checked by tracing only
(no compile; the kernels' trace caches serve repeated constants): every route of every op's
table traces for each target it is for with no KernelError, within the register budget and
with the occupancy the target asks for (or the measured exemption a route declares,
`Route.occupancy_exempt`, printed); `all_kernels()` ids are unique; `ktile.ops.<name>` is
the op function even where an op folder has the name (torch.compile reaches it); a width past
the widest route is refused naming that width; `import ktile; ktile.ops.rms_norm` works."""
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import ktile  # noqa: E402
from ktile.errors import InputError  # noqa: E402
from ktile.ops import _library as lib  # noqa: E402
from ktile.ir import query  # noqa: E402
from ktile.passes import budgets  # noqa: E402
from tests.bad_inputs import refused  # noqa: E402

KERNELS = list(lib.all_kernels())
OPS = sorted({k.op for k in KERNELS})


def register_estimate(trace) -> int:
    """The budgets pass's registers-per-lane estimate of a traced kernel (an attribute of its
    function): read from the trace, so a cached trace or a warning already given for the same
    kernel at other constants (budgets warns once per kernel) does not hide it."""
    fn = trace.module.body.block.ops.last
    return fn.attributes["kt.vgpr_estimate"].value.data


def budget_problems(k, honour_exemption: bool = True) -> list[str]:
    """What the budgets pass warns of for shipped kernel `k`, derived from its estimate: over
    REGISTER_WARN of the target's registers, or an occupancy below the target's floor. A kernel
    with warpgroup roles (hk.pipeline on sm_90a) has its roles' raised register limit and runs
    one block a multiprocessor by design (the budgets pass's rule)."""
    trace = k.kernel.trace(k.target, **k.constants)
    target, used = trace.target, register_estimate(trace)
    problems = [w for w in trace.warnings if "register" in w or "occupancy" in w]
    roles = query.roles(trace.module.body.block.ops.last)
    if used > budgets.REGISTER_WARN * (budgets.role_limit(roles) or target.vgprs_per_lane):
        problems.append(f"{used} registers per lane: close to spilling")
    if k.route is not None and k.route.estimate_exempt:
        # the estimate's warning is over-counted for this route; the compiler's count is tested
        problems = [p for p in problems if "spilling" not in p]
        print(f"{k.id}: register estimate exempt: {k.route.estimate_exempt}")
    sm = target.multiprocessor
    if honour_exemption and k.route is not None and k.route.occupancy_exempt:
        # a route measured faster below the floor says so; its other problems still count
        problems = [p for p in problems if "occupancy" not in p and "resident" not in p]
        print(f"{k.id}: occupancy exempt: {k.route.occupancy_exempt}")
        return problems
    if sm is not None and target.occupancy_warn_below and not roles:
        resident = sm.register_limited_warps(used, trace.warps)
        if resident / sm.max_warps < target.occupancy_warn_below:
            problems.append(f"{used} registers per lane x {trace.warps} warps: {resident} of "
                            f"{sm.max_warps} warps resident")
    return problems


def test_occupancy_exemptions_are_needed_and_say_why():
    """Each route that declares `occupancy_exempt` is below the floor in some dtype (a stale
    exemption fails) and names a measurement (a figure in its text)."""
    exempt = [k for k in KERNELS if k.route is not None and k.route.occupancy_exempt]
    assert exempt, "no route declares an occupancy exemption (layer_norm's 8192 did)"
    by_route = {}
    for k in exempt:
        assert any(ch.isdigit() for ch in k.route.occupancy_exempt), k.id
        by_route.setdefault(id(k.route), []).append(budget_problems(k, honour_exemption=False))
    for problems in by_route.values():
        assert any(any("resident" in p or "occupancy" in p for p in ps) for ps in problems)


@pytest.mark.parametrize("op", OPS)
def test_every_shipped_route_traces_within_budget(op):
    bad = {}
    for k in (k for k in KERNELS if k.op == op):
        problems = budget_problems(k)   # a KernelError (over budget) fails the test as is
        if problems:
            bad[k.id] = problems
    assert not bad, bad


def test_every_op_has_routes_on_every_target():
    assert {k.target for k in KERNELS} == set(lib.TARGETS)
    norms = ("rms_norm", "fused_add_rms_norm", "layer_norm", "layer_norm_backward")
    for op in norms:
        assert {k.target for k in KERNELS if k.op == op} == set(lib.TARGETS), op


def test_shipped_kernel_ids_are_unique():
    ids = [k.id for k in KERNELS]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)[:5]


def test_dequantize_variants_have_their_own_ids():
    ids = {k.id for k in KERNELS if k.op == "dequantize" and k.target == "gfx950"
           and k.dtype == "bf16"}
    assert {"dequantize/dequant_int8_per_token/bf16/COLS64/gfx950",
            "dequantize/dequant_fp8_per_token/bf16/COLS64/gfx950"} <= ids


def test_norms_take_row_tiles_for_multiples_of_16_and_loop_otherwise():
    from ktile.ops.fused_add_rmsnorm import config as fused
    from ktile.ops.rmsnorm import config
    for target in lib.TARGETS:
        for cols in (1024, 2880, 4096, 5120, 14336, 16384):
            assert config.TABLE.choose(1, cols, target).kernel == "rms_norm_tiles"
            assert fused.TABLE.choose(1, cols, target).kernel == "fused_add_rms_norm_tiles"
        assert config.TABLE.choose(1, 4100, target).kernel == "rms_norm_loop"
        assert config.TABLE.choose(1, 16400, target).kernel == "rms_norm_loop"
        assert fused.TABLE.choose(1, 1000, target).kernel == "fused_add_rms_norm_held"


@pytest.mark.parametrize("table,target,cols,widest", [("fused_add_rmsnorm", "gfx1100", 20000,
                                                       16384),
                                                      ("fused_add_rmsnorm", "gfx950", 16400,
                                                       16384)])
def test_a_row_past_the_widest_route_is_refused_naming_it(table, target, cols, widest):
    from importlib import import_module
    config = import_module(f"ktile.ops.{table}.config")
    routes = getattr(config, "FORWARD", None) or config.TABLE
    refused(lambda: routes.choose(2, cols, target), f"{cols} columns", target, str(widest),
            kind=InputError)


def test_the_interpreter_takes_the_default_targets_routes(monkeypatch):
    from ktile.ops.rmsnorm import config
    monkeypatch.delenv("KTILE_TARGET", raising=False)
    assert config.TABLE.choose(3, 1000, None).constants["VEC"] == 64    # gfx1100's
    monkeypatch.setenv("KTILE_TARGET", "gfx950")
    assert config.TABLE.choose(3, 1000, None).constants["VEC"] == 128


def test_an_empty_tensor_message_is_the_ops_not_a_norms():
    error = refused(lambda: ktile.ops.softmax(torch.ones(0, 4)), "'x'", "empty",
                    kind=InputError)
    assert "normalise" not in str(error)


# ---- ktile.ops.<name> is the op function ------------------------------------------------

def test_import_ktile_then_ktile_ops_in_a_fresh_interpreter():
    code = ("import torch, ktile; x = torch.randn(2, 40); w = torch.ones(40); "
            "y = ktile.ops.rms_norm(x, w, 1e-6); "
            "want = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6); "
            "torch.testing.assert_close(y, want); print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-2000:]


@pytest.mark.parametrize("name", ["softmax", "embedding", "dropout"])
def test_an_op_function_wins_over_its_folder(name):
    code = (f"import types, ktile; from ktile.ops.{name} import reference; "
            f"import ktile.ops.{name}.op; f = ktile.ops.{name}; "
            f"assert type(f) is types.FunctionType, type(f); "
            f"from ktile.ops import {name} as g; assert g is f; print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-2000:]


def test_folders_without_a_clash_stay_reachable():
    from ktile.ops.rmsnorm import config
    assert ktile.ops.rmsnorm.config is config


COMPILED = {
    "softmax": (lambda: ktile.ops.softmax(X, -1) * 2,
                lambda: torch.softmax(X, -1) * 2),
    "embedding": (lambda: ktile.ops.embedding(IDS, W) * 2, lambda: W[IDS] * 2),
    "dropout": (lambda: ktile.ops.dropout(X, 0.0, 3) + 1, lambda: X + 1),
}
X, W, IDS = torch.randn(4, 48), torch.randn(10, 32), torch.tensor([[3, 1, 4]])


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_torch_compile_fullgraph_through_ktile_ops_name(name):
    call, want = COMPILED[name]
    torch._dynamo.reset()
    compiled = torch.compile(call, fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(), want())
