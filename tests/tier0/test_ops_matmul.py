"""ktile.ops.matmul and ktile.ops.linear on CPU tensors (the interpreter) against the reference
at ragged shapes (M, N, K no multiple of any tile): b row-major and as W.t() (no copy), every
route kind (skinny split-K for M ≤ 64, the tile kernels above; sm_90a's wgmma kernel and
decode GEMV traced for sm_90a), bias or none, each output dtype; linear over 1 to 4 dimensions; out=; the split
count; refusals naming the parameter; torch.compile(fullgraph=True) and fake tensors."""
import pytest

import ktile as hk
import ktile.ops as ops
from ktile.errors import InputError
from ktile.ops.matmul import config
from ktile.ops.matmul.reference import matmul as reference, tolerance

from bad_inputs import refused

torch = pytest.importorskip("torch")

TORCH = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def rand(shape, seed, dtype=torch.bfloat16):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def check(m, n, k, *, layout="nt", dtype="bf16", out_dtype=None, bias=True):
    """matmul at (m, n, k) against the reference; returns the route kind it took."""
    a, w = rand((m, k), 1, TORCH[dtype]), rand((n, k), 2, TORCH[dtype])
    b = w.t() if layout == "nt" else w.t().contiguous()
    bias_t = rand((n,), 3, TORCH[dtype]) if bias else None
    out_name = out_dtype or dtype
    got = ops.matmul(a, b, bias_t, out_dtype=None if out_dtype is None else TORCH[out_dtype])
    want = reference(a.float().numpy(), b.float().numpy(),
                     None if bias_t is None else bias_t.float().numpy(), getattr(hk, out_name))
    assert got.shape == (m, n) and got.dtype == TORCH[out_name]
    assert float(abs(got.float().numpy() - want).max()) <= tolerance(
        a.float().numpy(), b.float().numpy(), want, out_name)
    return config.choose(layout, m, n, None).kernel


@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("m,n,k", [(1, 70, 200), (5, 33, 100), (16, 96, 48), (29, 50, 130),
                                   (61, 40, 70), (70, 100, 90), (130, 45, 33)], ids=str)
def test_matches_reference_at_ragged_shapes(m, n, k, layout):
    kind = check(m, n, k, layout=layout, bias=m % 2 == 1)
    assert kind == (f"skinny_{layout}" if m <= 64 else f"tiles_{layout}")


@pytest.mark.parametrize("dtype,out_dtype", [("bf16", "fp32"), ("fp16", None),
                                             ("fp16", "fp32"), ("bf16", "fp16"),
                                             ("fp16", "bf16")])
@pytest.mark.parametrize("m", [3, 70])
def test_output_dtypes(m, dtype, out_dtype):
    check(m, 40, 100, dtype=dtype, out_dtype=out_dtype)


def test_wgmma_route_on_the_interpreter_for_sm90a(monkeypatch):
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")
    assert check(130, 70, 150) == "wgmma_ws_nt"      # tiles_ws.py, before wgmma_nt
    assert check(40, 70, 150) == "skinny_wgmma_nt"   # sm_90a's M 9..64 (skinny_wgmma.py)
    assert check(20, 70, 150) == "skinny_wgmma_nt"
    assert check(5, 70, 150) == "skinny_wgmma_nt"    # M 2..8 too (config.py's measurements)


@pytest.mark.parametrize("m,n,k", [(1, 70, 256), (2, 37, 208), (3, 70, 4112), (5, 33, 128),
                                   (8, 20, 400), (9, 24, 128), (33, 20, 128)], ids=str)
def test_decode_gemv_route_for_sm90a(m, n, k, monkeypatch):
    """sm_90a's routes for b = W.t() and K a multiple of 16: gemv_nt for M = 1, the wgmma
    skinny kernel for M 2..64 (faster than gemv_nt at M 2 and skinny_nt at M 3..8 on the H200:
    config.py), at ragged N and K (K/16 rows of 16 not a multiple of the 16-row tile), with
    and without a bias; gemv_nt's blocks of 2 rows of a also at M 2..8 (pinned: ⌈M / 2⌉
    blocks per band of W)."""
    from ktile.ops import _library as lib
    from ktile.ops.matmul.op import OP
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")
    check(m, n, k, bias=m % 2 == 1)
    want = "gemv_nt" if m == 1 else "skinny_wgmma_nt"
    assert config.choose("nt", m, n, None, k).kernel == want
    if 2 <= m <= 8:
        with lib.pinned(OP.table, config.gemv(2, 2, 8)):
            check(m, n, k, bias=m % 2 == 1)
    assert not config.choose("nt", m, n, None, k + 8).kernel.startswith("gemv")   # K % 16
    assert not config.choose("nn", m, n, None, k).kernel.startswith("gemv")       # row-major


@pytest.mark.parametrize("m,n,k,mb,unroll", [(1, 70, 208, 1, 2), (2, 37, 400, 2, 4),
                                             (5, 20, 4112, 8, 3)], ids=str)
def test_decode_gemv_with_the_next_step_loaded_ahead(m, n, k, mb, unroll, monkeypatch):
    """gemv_nt AHEAD 1 (a step's W tiles loaded during the step before, carried by name): K/16
    rows no multiple of the 16-row tile nor of UNROLL's step (the loads ahead past K read 0),
    M below MB, N cut by the last block's warps."""
    from ktile.ops import _library as lib
    from ktile.ops.matmul.op import OP
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")
    route = config.Route("gemv_nt", {"MB": mb, "UNROLL": unroll, "WARPS": 4, "AHEAD": 1},
                         max_rows=mb, targets=config.SM90)
    with lib.pinned(OP.table, route):
        check(m, n, k, bias=m % 2 == 1)
    wrong = config.Route("gemv_nt", {**route.constants, "AHEAD": 2}, targets=config.SM90)
    with lib.pinned(OP.table, wrong):
        refused(lambda: check(m, n, k), "AHEAD must be 0 or 1", kind=InputError)


@pytest.mark.parametrize("m,n,k,mb,rw,unroll,depth", [
    (1, 203, 208, 2, 2, 2, 1), (2, 130, 496, 2, 1, 3, 1), (4, 99, 272, 4, 1, 1, 3),
    (2, 141, 48, 2, 4, 1, 2), (5, 70, 4112, 8, 1, 1, 2)], ids=str)
def test_streaming_gemv_loops_over_groups_of_rows(m, n, k, mb, rw, unroll, depth, monkeypatch):
    """gemv_stream_nt with more groups of RW rows than warps on the interpreter's grid (4
    multiprocessors: each warp loops over several groups), a last group cut by N, K/16 rows
    no multiple of UNROLL's step, a queue DEPTH steps deep (the loads ahead past K read 0),
    M below MB (rows of a past M read 0, their outputs are not written)."""
    from ktile.ops import _library as lib
    from ktile.ops.matmul.op import OP
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")
    route = config.Route("gemv_stream_nt", {"MB": mb, "RW": rw, "UNROLL": unroll,
                                            "DEPTH": depth, "WARPS": 2},
                         max_rows=mb, targets=config.SM90)
    groups, warps = -(-n // rw), config.stream_blocks(route, config.CPU_MULTIPROCESSORS) * 2
    assert groups > warps
    assert config.stream_blocks_per_sm(route) is None                  # no shipped route's
    assert config.stream_blocks(route, 4, resident=6) == 24            # its build's residency
    with lib.pinned(OP.table, route):
        check(m, n, k, bias=m != 2)


def test_decode_gemv_output_dtypes_and_refusal(monkeypatch):
    """The GEMV's other dtypes; pinned at a K its views cannot take, it is refused naming K."""
    from ktile.ops import _library as lib
    from ktile.ops.matmul.op import OP
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")
    check(2, 40, 256, dtype="fp16", out_dtype="fp32")
    check(1, 40, 256, dtype="bf16", out_dtype="fp16", bias=False)
    a, w = rand((1, 200), 1), rand((40, 200), 2)
    for route in (config.STREAM_ROUTES[0], config.gemv(1, 4, 1)):
        with lib.pinned(OP.table, route):
            refused(lambda: ops.matmul(a, w.t()), route.kernel, "K", "multiple of 16",
                    kind=InputError)


def test_k_splits_over_blocks_when_few_slices():
    assert config.splits(n_blocks=3, k_tiles=100, warps=4, multiprocessors=4) == 6
    assert config.splits(n_blocks=3, k_tiles=4, warps=4, multiprocessors=4) == 1
    assert config.splits(n_blocks=1000, k_tiles=128, warps=4, multiprocessors=132) == 1
    assert config.splits(n_blocks=1, k_tiles=4096, warps=4, multiprocessors=132) == \
        config.MAX_SPLITS
    check(2, 20, 1000)                               # 1 slice, 32 K tiles: 4 splits on the CPU


@pytest.mark.parametrize("shape", [(100,), (3, 100), (2, 3, 100), (2, 1, 3, 100)], ids=str)
def test_linear_folds_leading_dims(shape):
    x, w, b = rand(shape, 4), rand((24, 100), 5), rand((24,), 6)
    got = ops.linear(x, w, b)
    want = torch.nn.functional.linear(x.double(), w.double(), b.double())
    assert got.shape == (*shape[:-1], 24) and got.dtype == torch.bfloat16
    assert float((got.double() - want).abs().max()) <= float(want.abs().max()) * 2 ** -7 + 1e-2


def test_out_is_written_and_returned():
    a, w = rand((5, 64), 7), rand((48, 64), 8)
    out = torch.full((5, 48), float("nan"))
    assert ops.matmul(a, w.t(), out_dtype=torch.float32, out=out) is out
    assert torch.equal(out, ops.matmul(a, w.t(), out_dtype=torch.float32))


# ---- refusals ----------------------------------------------------------------------------

A, W = rand((3, 64), 1), rand((40, 64), 2)
REFUSALS = {
    "a-float32": (lambda: ops.matmul(A.float(), W.t()), ["'a'", "float32", "bfloat16"]),
    "a-3d": (lambda: ops.matmul(A.reshape(1, 3, 64), W.t()), ["'a'", "3 dimensions"]),
    "a-not-contiguous": (lambda: ops.matmul(rand((64, 3), 1).t(), W.t()), ["'a'", "contiguous"]),
    "b-dtype": (lambda: ops.matmul(A, W.t().half()), ["'b'", "a.dtype"]),
    "b-strided": (lambda: ops.matmul(A, rand((64, 80), 2)[:, ::2]),
                  ["'b'", "strides", "b.contiguous()"]),
    "b-1d": (lambda: ops.matmul(A, W[0]), ["'b'", "1 dimensions"]),
    "shape-mismatch": (lambda: ops.matmul(A, W), ["'a'", "'b'", "W.t()"]),
    "bias-length": (lambda: ops.matmul(A, W.t(), W[0, :39]), ["'bias'", "(40,)"]),
    "bias-dtype": (lambda: ops.matmul(A, W.t(), W[0, :40].float()), ["'bias'", "float32"]),
    "out-dtype-arg": (lambda: ops.matmul(A, W.t(), out_dtype=torch.float64),
                      ["'out_dtype'", "torch.float32"]),
    "out-shape": (lambda: ops.matmul(A, W.t(), out=torch.empty(3, 41, dtype=torch.bfloat16)),
                  ["'out'", "(3, 40)"]),
    "out-dtype": (lambda: ops.matmul(A, W.t(), out=torch.empty(3, 40)), ["'out'", "float32"]),
    "out-not-contiguous": (lambda: ops.matmul(A, W.t(), out=torch.empty(
        40, 3, dtype=torch.bfloat16).t()), ["'out'", "contiguous"]),
    "out-is-b": (lambda: ops.matmul(A, W.t(), out=W.view(-1)[:120].view(3, 40)),
                 ["'out'", "shares memory"]),
    "device-mix": (lambda: ops.matmul(A, W.t().to("meta")), ["devices"]),
    "linear-weight-k": (lambda: ops.linear(A, rand((40, 32), 2)), ["'weight'", "x.shape[-1]"]),
    "linear-weight-1d": (lambda: ops.linear(A, W[0]), ["'weight'", "1 dimensions"]),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_bad_input_is_refused_naming_the_parameter(case):
    action, words = REFUSALS[case]
    refused(action, *words, kind=InputError)


# ---- torch.compile and fake tensors ------------------------------------------------------

def test_compiled_fullgraph_matches_eager():
    x, w, b = rand((2, 3, 64), 9), rand((40, 64), 10), rand((40,), 11)

    def layer(x, w, b):
        return ops.linear(x, w, b) * 2

    compiled = torch.compile(layer, fullgraph=True, backend="eager")
    assert torch.equal(compiled(x, w, b), layer(x, w, b))


def test_fake_tensors_give_shape_and_dtype_only():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        a, w = torch.empty(5, 64, dtype=torch.float16), torch.empty(48, 64, dtype=torch.float16)
        y = ops.matmul(a, w.t(), out_dtype=torch.float32)
    assert y.shape == (5, 48) and y.dtype == torch.float32


# ---- the benchmark's own logic (benchmarks/matmul.py; its timing needs a GPU) ------------

def test_benchmark_sweeps_the_issue_shapes_and_flags_a_wrong_result():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "matmul.py"
    spec = importlib.util.spec_from_file_location("matmul_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    full = bench.shapes(quick=False)
    assert len(full) == 5 * 6 + 5 * 4 + 2 and ("prefill", 8192, 8192, 8192) in full
    assert set(bench.shapes(quick=True)) < set(full)
    a, w = rand((3, 64), 1), rand((40, 64), 2)
    got = ops.matmul(a, w.t())
    err, tol = bench.check(a, w, None, got, "bf16")
    assert err <= tol
    got[1, 3] += 1.0
    err, tol = bench.check(a, w, None, got, "bf16")
    assert err > tol
    route = bench.pinned_route("gemv_nt:MB=4,UNROLL=1", 8, 4096)     # --route's spec
    assert (route.kernel, route.constants["MB"], route.constants["UNROLL"]) == ("gemv_nt", 4, 1)
    assert bench.pinned_route("skinny_nt", 20, 4096).constants["ROWS"] == 32
    with pytest.raises(SystemExit, match="no tiles_nn2"):
        bench.pinned_route("tiles_nn2", 8, 4096)
