"""scaled_mm (issue #11) on the CPU interpreter, traced for sm_90a: the fp8 warp-specialised
kernel against the float64 reference at ragged M, N and K (K 208: not a multiple of the
128-wide K tile) in every epilogue form (per-tensor or per-token/per-channel scales, with and
without a bias) and output dtype; the routes by form and shape; bad inputs refused before
anything runs, each naming the parameter and the fix; AMD targets refused naming sm_90a."""
import numpy as np
import pytest

from ktile import dtypes
from ktile.errors import InputError
from ktile.ops import _library as lib
from ktile.ops.scaled_mm import config, op
from ktile.ops.scaled_mm.reference import scaled_mm as reference, tolerance
from tests.bad_inputs import refused

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("rows,cols,rowwise,bias,out", [
    (130, 200, True, True, "bf16"), (130, 200, False, False, "bf16"),
    (77, 136, True, False, "fp32"), (5, 300, False, True, "fp16")])
def test_matches_the_reference_at_ragged_shapes(rows, cols, rowwise, bias, out):
    err, tol = op.OP.check(rows, cols, f"fp8-{out}") if (rowwise, bias) == (True, True) else \
        op.case(rows, cols, f"fp8-{out}", rowwise=rowwise, bias=bias)
    assert err <= tol, (err, tol)


def test_scales_are_applied_not_ignored():
    """Per-token and per-channel scales of 1 and 2 differ from scales of 1: the reference's
    tolerance at those shapes is below the difference the scales make."""
    a, w, _, _, _ = op.operands(70, 136, 64, rowwise=True, bias=False)
    sa = torch.ones(70, 1)
    sb = torch.ones(1, 136)
    sb[0, ::2] = 2.0
    got = op.scaled_mm(a, w.t(), sa, sb).float().numpy()
    want = reference(a.double().numpy(), w.double().numpy().T, sa.numpy(), sb.numpy(), None,
                     dtypes.bf16)
    tol = tolerance(a.double().numpy(), w.double().numpy().T, sa.numpy(), sb.numpy(), want,
                    "bf16")
    assert np.abs(got - want).max() <= tol
    assert np.abs(want[:, ::2]).max() > 4 * tol        # scaled columns are far from unscaled


@pytest.mark.parametrize("rows,cols,rowwise,bias,bn", [
    (8192, 4096, False, False, 192), (8192, 4096, True, False, 192),
    (8192, 4096, False, True, 192), (8192, 4096, True, True, 128),
    (512, 6144, False, False, 192), (512, 4096, False, False, 128), (1, 4096, True, False, 128)])
def test_routes_by_form_and_shape(rows, cols, rowwise, bias, bn):
    route = config.choose(rows, cols, "sm_90a", rowwise, bias)
    assert route.constants["BN"] == bn
    assert (route.constants["ROWWISE"], route.constants["BIAS"]) == (rowwise, bias)


@pytest.mark.parametrize("rowwise,bias,bn", [(False, False, 256), (True, False, 256),
                                              (False, True, 256), (True, True, 192)])
def test_fast_accumulation_takes_the_unpromoted_routes(rowwise, bias, bn):
    """use_fast_accum=True routes to PROMOTE False (128 x 256; 192 with both column vectors)
    at every M; the default never does; gfx950's one route (fp32 MFMA) serves both."""
    for rows in (1, 512, 8192):
        fast = config.choose(rows, 6144, "sm_90a", rowwise, bias, fast=True)
        assert (fast.constants["PROMOTE"], fast.constants["BN"]) == (False, bn)
        assert config.choose(rows, 6144, "sm_90a", rowwise, bias).constants["PROMOTE"]
    if not bias:
        assert config.choose(70, 136, "gfx950", rowwise, False, fast=True) is \
            config.choose(70, 136, "gfx950", rowwise, False)


@pytest.mark.parametrize("rowwise,bias,out", [(True, True, "bf16"), (False, False, "fp32")])
def test_fast_accumulation_matches_the_reference_and_plans_unpromoted(rowwise, bias, out):
    """scaled_mm(use_fast_accum=True) on the interpreter (fp32 accumulation: the reference's
    tolerance holds) at ragged M, N, K, through the public function and the torch op, planned
    at PROMOTE False."""
    a, w, sa, sb, b_vec = op.operands(77, 264, op.CASE_K, out, "cpu", rowwise, bias)
    dtype = op.TORCH_DTYPES[out]
    got = op.scaled_mm(a, w.t(), sa, sb, b_vec, out_dtype=dtype, use_fast_accum=True)
    an, bn = a.double().numpy(), w.double().numpy().T
    bias_n = None if b_vec is None else b_vec.double().numpy()
    want = reference(an, bn, sa.double().numpy(), sb.double().numpy(), bias_n,
                     getattr(dtypes, out))
    tol = tolerance(an, bn, sa.double().numpy(), sb.double().numpy(), want, out)
    assert lib.max_error(got, want) <= tol
    _, (route, _) = op.plan(a, 264, out, rowwise, bias, True)
    assert route.constants["PROMOTE"] is False
    assert torch.equal(got, torch.ops.ktile.scaled_mm(a, w.t(), sa, sb, b_vec, out, True))


@pytest.mark.parametrize("variant", [dict(PAIR=True, BN=128, STAGES=3),
                                     dict(LAG=True, BN=96, STAGES=6),
                                     dict(PROMOTE_K=256, BN=192, STAGES=2)],
                         ids=["pair", "lag", "promote_k_256"])
def test_promotion_variants_match_the_reference(variant):
    """The pinnable promotion variants (kernels.py: PAIR, two K blocks a stage, the first
    promoted while the second runs; LAG, the previous block promoted while this one runs;
    PROMOTE_K 256, two K blocks a stage promoted together) on the interpreter at ragged M, N
    and K (3 K blocks: a pair's second step half past K), traced with the waits they are for
    (wgmma.wait_group 1 before the first add; PROMOTE_K 256: both blocks' MMAs, then 0)."""
    a, w, sa, sb, _ = op.operands(77, 136, 336, rowwise=True, bias=False)
    out = torch.zeros(77, 136).bfloat16()
    call = op.launcher(a, w.t(), sa, sb, out, variant)
    call()
    want = reference(a.double().numpy(), w.double().numpy().T, sa.numpy(), sb.numpy(), None,
                     dtypes.bf16)
    tol = tolerance(a.double().numpy(), w.double().numpy().T, sa.numpy(), sb.numpy(), want,
                    "bf16")
    assert np.abs(out.float().numpy() - want).max() <= tol
    route = config.choose(77, 136, "sm_90a", True, False)
    constants = dict(route.constants, **variant)
    source = op.OP.kernel(route, "fp8-bf16").trace("sm_90a", **constants).source()
    issue = source.index("kt::mma_ABt_shared<8, false>(")
    if "PROMOTE_K" in variant:
        second = source.index("kt::mma_ABt_shared<8, false>(", issue + 1)
        assert second < source.index("kt::wgmma_wait<0>()", issue) < source.index("kt::add(",
                                                                                    issue)
        return
    assert source.index("kt::wgmma_wait<1>()", issue) < source.index("kt::add(", issue)


def test_use_fast_accum_not_a_bool_is_refused():
    refused(lambda: op.scaled_mm(**operands(), use_fast_accum="yes"), "'use_fast_accum'",
            "bool", kind=InputError)


@pytest.mark.parametrize("target", ["gfx942", "gfx1100"])
def test_targets_without_fp8_mfma_are_refused_naming_the_others(monkeypatch, target):
    a, w, sa, sb, _ = op.operands(16, 32, 32, rowwise=False, bias=False)
    monkeypatch.setattr(lib, "target_of", lambda t: target)
    refused(lambda: op.scaled_mm(a, w.t(), sa, sb), target, "sm_90a", "gfx950",
            kind=InputError)


def test_a_bias_on_gfx950_is_refused_naming_the_fix(monkeypatch):
    x = operands()
    monkeypatch.setattr(lib, "target_of", lambda t: "gfx950")
    refused(lambda: op.scaled_mm(**x), "bias", "gfx950", "bias=None", kind=InputError)


def test_gfx950_in_turns_matches_the_reference():
    """gfx950's route (every wave both roles in turn) on the interpreter traced for gfx950,
    per-token / per-channel scales, ragged M, N, K."""
    route = config.choose(70, 136, "gfx950", True, False)
    assert route.targets == ("gfx950",)
    a, w, sa, sb, bias = op.operands(70, 136, 208)     # the bias stands in, unread
    out = torch.zeros(70, 136).bfloat16()
    op.OP.kernel(route, "fp8-bf16").interpret(a, w, sa.view(1, -1), sb, bias, out,
                                              target="gfx950", **route.constants)
    want = reference(a.double().numpy(), w.double().numpy().T, sa.numpy(), sb.numpy(), None,
                     dtypes.bf16)
    tol = tolerance(a.double().numpy(), w.double().numpy().T, sa.numpy(), sb.numpy(), want,
                    "bf16")
    assert np.abs(out.float().numpy() - want).max() <= tol


def operands():
    a, w, sa, sb, bias = op.operands(32, 48, 64, rowwise=True, bias=True)
    return {"a": a, "b": w.t(), "scale_a": sa, "scale_b": sb, "bias": bias}


BAD = [
    ("a", lambda x: x["a"].bfloat16(), ["'a'", "float8_e4m3fn"]),
    ("b dtype", lambda x: x["b"].float(), ["'b'", "float8_e4m3fn"]),
    ("b row-major", lambda x: x["b"].contiguous(), ["'b'", "column-major", "w.t()"]),
    ("K", lambda x: x["a"][:, :40].contiguous(), ["K (a.shape[1]) is 40", "multiple of 16"]),
    ("K mismatch", lambda x: x["a"][:, :48].contiguous(), ["'a'", "'b'", "columns"]),
    ("scale_a shape", lambda x: torch.ones(32, 2), ["'scale_a'", "[32, 1]"]),
    ("scale_a dtype", lambda x: x["scale_a"].double(), ["'scale_a'", "float32"]),
    ("scale_a number", lambda x: 1.0, ["'scale_a'", "torch.tensor"]),
    ("mixed", lambda x: torch.ones(()), ["per tensor", "expand"]),
    ("bias dtype", lambda x: x["bias"].half(), ["'bias'", "bfloat16"]),
    ("bias shape", lambda x: x["bias"][:40], ["'bias'", "(48,)"]),
]
PARAM = {"a": "a", "b dtype": "b", "b row-major": "b", "K": "a", "K mismatch": "a",
         "scale_a shape": "scale_a", "scale_a dtype": "scale_a", "scale_a number": "scale_a",
         "mixed": "scale_a", "bias dtype": "bias", "bias shape": "bias"}


@pytest.mark.parametrize("name,change,words", BAD, ids=[b[0] for b in BAD])
def test_bad_inputs_are_refused_naming_the_parameter(name, change, words):
    x = operands()
    x[PARAM[name]] = change(x)
    if name == "K":
        x["b"] = x["b"].t()[:, :40].contiguous().t()
    refused(lambda: op.scaled_mm(**x), *words, kind=InputError)


def test_bad_out_dtype_is_refused():
    refused(lambda: op.scaled_mm(**operands(), out_dtype=torch.int8), "'out_dtype'",
            "torch.bfloat16", kind=InputError)


def test_the_public_function_and_torch_op():
    import ktile.ops
    x = operands()
    assert ktile.ops.scaled_mm is op.scaled_mm
    got = torch.ops.ktile.scaled_mm(x["a"], x["b"], x["scale_a"], x["scale_b"], x["bias"],
                                    "bf16")
    assert torch.equal(got, op.scaled_mm(**x))


def fp8_mma_from_shared(k_cols: int):
    """A 4-warp kernel multiplying e4m3 shared tiles 64 x k_cols (`acc += sa @ sb.T`)."""
    import ktile as hk

    @hk.kernel(grid=lambda p: (1, 1), warps=4)
    def fp8_mma(a: hk.Tensor[hk.fp8], b: hk.Tensor[hk.fp8], c: hk.Tensor[hk.fp32]):
        sa = hk.shared(hk.ST(hk.fp8, 64, k_cols))
        sb = hk.shared(hk.ST(hk.fp8, 64, k_cols))
        hk.group.load(sa, a[0, 0, 0, 0])
        hk.group.load(sb, b[0, 0, 0, 0])
        hk.wait_for(sa, sb)
        hk.barrier()
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        acc += sa @ sb.T  # <- here
        c[hk.tile_coord(0, 0, hk.arch.warp_id, 0)] = acc
    return fp8_mma


def test_fp8_mma_from_shared_steps_k_by_32():
    """The verify pass: e4m3 operands take wgmma k32, so K 16 is refused at the user's line;
    K 32 traces to the warpgroup MMA from shared memory."""
    from ktile.errors import KernelError
    refused(lambda: fp8_mma_from_shared(16).trace("sm_90a"), "mma from shared",
            "multiple of 32", "fp8", kind=KernelError)
    assert "kt::mma_ABt_shared<4" in fp8_mma_from_shared(32).trace("sm_90a").source()


def test_opcheck_on_the_registered_op():
    """The fake (shapes and dtypes only) of torch.ops.ktile.scaled_mm agrees with its call
    (torch's schema check compares fp8 CPU tensors with a mul that torch lacks for them)."""
    x = operands()
    torch.library.opcheck(torch.ops.ktile.scaled_mm.default,
                          (x["a"], x["b"], x["scale_a"], x["scale_b"], x["bias"], "bf16"),
                          test_utils=("test_faketensor",))


def test_benchmark_checks_every_variant_before_timing(monkeypatch):
    """benchmarks/matmul_fp8.py's measure() on the interpreter, the timer faked: the route
    and a `--constants` variant are checked against the reference before they are timed,
    and a variant made wrong (its result zeroed) is reported, not timed."""
    import argparse
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parents[2] / "benchmarks" / "matmul_fp8.py"
    spec = importlib.util.spec_from_file_location("matmul_fp8_bench", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.DEVICE[0] = "cpu"                 # this test loaded its own copy of the module
    monkeypatch.setattr(bench, "timed", lambda fn, repeats: (fn(), {"ms": 1.0})[1])
    monkeypatch.setattr(bench, "graphed", lambda fn: fn)
    specs = ["PROMOTE=0,BN=128,STAGES=3", "BN=128,STAGES=2"]
    args = argparse.Namespace(repeats=1, constants=specs)
    row = bench.measure(70, 144, 208, "rowwise", args)
    assert row["correct"] and row["ktile"]["ms"] == 1.0 and row["torch_fast"]["ms"] == 1.0
    assert row["fast_correct"] and row["ktile_fast"]["ms"] == 1.0      # both modes timed
    assert all(row[f"constants:{s}"]["correct"] and "ms" in row[f"constants:{s}"]
               for s in specs)
    real = bench.variant

    def zeroed(a, b, sa, sb, want, tol, spec, repeats):
        return real(a, b, sa * 0, sb, want, tol, spec, repeats)
    monkeypatch.setattr(bench, "variant", zeroed)
    wrong = bench.measure(70, 144, 208, "tensor", args)[f"constants:{specs[1]}"]
    assert not wrong["correct"] and "ms" not in wrong, wrong
