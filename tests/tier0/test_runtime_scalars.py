"""Runtime scalar kernel arguments (issue #10): `eps: float`, `seed: int` given at each call,
passed by value, with one trace and one build for every value.

The interpreter runs them against the references; the GPU call's logic runs without a GPU (CPU
tensors stand in for CUDA ones and a fake loader records each launch's parameter block, as in
test_runtime_dispatch.py); bad values are refused naming the parameter."""
import ctypes
import inspect
import math
import struct
import sys
import types

import numpy as np
import pytest

import ktile as hk
from ktile.errors import InputError, KernelError
from ktile.ops.dropout.reference import dropout as dropout_reference
from ktile.ops.rmsnorm.reference import rmsnorm as rmsnorm_reference
from ktile.ops.rmsnorm.reference import tolerance
from ktile.runtime import build as build_mod
from ktile.runtime import gpu
from ktile.runtime.devices import Device
from ktile.runtime.fastcall import fast_call
from ktile.runtime.loaders.packing import GLOBAL_ARG_BYTES, KernelParams
from bad_inputs import marked_line, points_at, refused

torch = pytest.importorskip("torch")


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16), p.x.batch))
def rmsnorm(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], eps: float):
    """RMSNorm over rows of x, with eps given at each call."""
    b, r = hk.arch.block_idx.y, hk.arch.block_idx.x
    tiles = hk.cdiv(x.cols, 64)
    t = hk.RT(hk.bf16, 16, 64)
    squares = hk.zeros(hk.RV(hk.fp32, 16))
    for c in range(tiles):
        xs = x[hk.tile_coord(b, 0, r, c)].load(t).to(hk.fp32)
        squares += hk.row_sum(xs * xs)
    inv_rms = hk.rsqrt(squares / hk.to_float(x.cols) + eps)
    for c in range(tiles):
        xs = x[hk.tile_coord(b, 0, r, c)].load(t).to(hk.fp32)
        ws = w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.bf16, 64, "col")).to(hk.fp32)
        o[hk.tile_coord(b, 0, r, c)] = (xs * inv_rms * ws).to(hk.bf16)


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, 64), hk.cdiv(p.x.rows, 16)))
def dropout(x: hk.Tensor[hk.fp32], seed: int, o: hk.Tensor[hk.fp32], *,
            p: hk.Scalar[hk.fp32] = 0.5):
    """Triton's low-memory dropout with the seed (positional, among the tensors) and the
    probability (keyword-only hk.Scalar) given at each call."""
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    idx = hk.tile_coord(0, 0, r, c)
    rows = hk.iota(hk.RT(hk.i32, 16, 64), "row") + r * 16
    cols = hk.iota(hk.RT(hk.i32, 16, 64), "col") + c * 64
    keep = hk.rand(seed, rows * x.cols + cols) > p
    xs = x[idx].load(hk.RT(hk.fp32, 16, 64))
    o[idx] = hk.where(keep, xs / (1 - p), 0.0)


def rmsnorm_inputs(rows=32, cols=128, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(1, 1, rows, cols, generator=g).to(torch.bfloat16)
    w = (torch.rand(1, 1, 1, cols, generator=g) + 0.5).to(torch.bfloat16)
    return x, w, torch.zeros_like(x)


def count_traces(monkeypatch) -> list:
    """Every trace_kernel call from now on, appended to the returned list."""
    from ktile.lang import trace_kernel as module
    made, real = [], module.trace_kernel

    def counted(*args, **kwargs):
        made.append(args[0].name)
        return real(*args, **kwargs)
    monkeypatch.setattr(module, "trace_kernel", counted)
    return made


# ---- the interpreter: two values, two right results, one trace ------------------------------

def test_rmsnorm_takes_eps_at_run_time(monkeypatch):
    rmsnorm._traces.clear()
    traces = count_traces(monkeypatch)
    x, w, o = rmsnorm_inputs()
    # a tiny mean square makes eps visible: rows of 1e-3 have mean square 1e-6
    x[:, :, :16] = 1e-3
    results = {}
    for eps in (1e-6, 0.25):
        rmsnorm(x, w, o, eps)
        want = rmsnorm_reference(x.float().numpy(), w.float().numpy(), eps, hk.bf16)
        got = o.float().numpy()
        assert np.max(np.abs(got - want)) <= tolerance(want)
        results[eps] = got.copy()
    assert not np.array_equal(results[1e-6], results[0.25])
    assert traces == ["rmsnorm"]


def test_dropout_takes_seed_and_p_at_run_time(monkeypatch):
    dropout._traces.clear()
    traces = count_traces(monkeypatch)
    x = torch.rand(1, 1, 37, 90, generator=torch.Generator().manual_seed(3)) + 0.5
    outs = []
    for seed, p in ((123, 0.5), (2024, 0.5), (7, 0.25)):
        o = torch.full_like(x, float("nan"))
        dropout(x, seed, o, p=p)
        want, _ = dropout_reference(x.numpy().reshape(-1), p, seed)
        np.testing.assert_allclose(o.numpy().reshape(-1), want, rtol=0, atol=1e-6)
        outs.append(o)
    assert not torch.equal(outs[0], outs[1])          # another seed drops other elements
    assert traces == ["dropout"]


def test_scalars_by_position_keyword_and_default():
    x = torch.rand(1, 1, 16, 64) + 0.5
    a, b, c = (torch.zeros_like(x) for _ in range(3))
    dropout(x, 5, a)                                   # p's default, 0.5
    dropout.interpret(x, 5, b, p=0.5)
    assert torch.equal(a, b)
    dropout(x, 5, c, p=0.75)
    assert not torch.equal(a, c)
    rmsnorm(*rmsnorm_inputs()[:3], eps=1e-5)          # a positional scalar by keyword


def test_the_ir_takes_scalars_after_the_globals():
    text = dropout.trace().dump()
    assert "func.func @dropout(%0: !kt.global<f32>, %1: !kt.global<f32>, %2: i32, %3: f32)" \
        in text
    assert "func.func @dropout__grid(%0: !kt.global<f32>, %1: !kt.global<f32>)" in text


@pytest.mark.parametrize("target", ["gfx1100", "gfx1201", "gfx942", "gfx950", "sm_90a"])
def test_the_cpp_takes_scalars_by_value(target):
    src = dropout.source(target=target)
    assert "void dropout(kt::gl<float> v0, kt::gl<float> v1, int32_t v2, float v3)" in src
    assert "rmsnorm(kt::gl<kt::bf16> v0, kt::gl<kt::bf16> v1, kt::gl<kt::bf16> v2, float v3)" \
        in rmsnorm.source(target=target)


def test_hk_dsl_keyword_only_float_stays_a_constant():
    @hk.kernel(grid=(1,))
    def scaled(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, EPS: float = 1e-6):
        idx = hk.tile_coord(0, 0, 0, 0)
        o[idx] = x[idx].load(hk.RT(hk.fp32, 16, 16)) + EPS
    assert scaled.scalars == () and "EPS" in scaled.constexprs
    assert "1.000000e-06" in scaled.trace(EPS=1e-6).dump()


@pytest.mark.parametrize("annotation, kind", [
    ("float", "float"), ("int", "int"), ("hk.Scalar[hk.fp32]", "float"),
    ("hk.Scalar[hk.i32]", "int"), ("hk.Scalar[float]", "float"), ("hk.Scalar[int]", "int")])
def test_scalar_spellings(annotation, kind):
    namespace = {"hk": hk}
    exec(f"def k(x: hk.Tensor[hk.fp32], v: {annotation}): pass", namespace)
    fn = namespace["k"]
    from ktile.lang.kernel import _scalar_param
    p = inspect.signature(fn, eval_str=True).parameters["v"]
    assert _scalar_param(fn, p, None).dtype.kind == kind


def test_scalars_in_arithmetic_loops_comparisons_and_tiles():
    @hk.kernel(grid=(1,))
    def mixed(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], n: int, scale: float, *,
              base: hk.Scalar[int] = 0):
        t = hk.RT(hk.fp32, 16, 16)
        acc = hk.zeros(t)
        for i in range(n):                          # a runtime loop bound
            acc = acc + x[hk.tile_coord(0, 0, 0, i + base)].load(t)
        if n * 2 > 4:                               # a comparison with an Int value
            acc = acc * scale                       # a tile with a broadcast scalar
        o[hk.tile_coord(0, 0, 0, 0)] = acc + hk.to_float(n) + scale * 2
    x = np.arange(16 * 64, dtype=np.float32).reshape(1, 1, 16, 64)
    blocks = [x[..., 16 * i:16 * (i + 1)] for i in range(4)]
    for n, scale, base in ((2, 1.5, 0), (3, 0.5, 1), (1, 4.0, 2)):
        o = np.zeros((1, 1, 16, 16), np.float32)
        mixed(x, o, n, scale, base=base)
        acc = sum(blocks[base:base + n])
        want = (acc * scale if n * 2 > 4 else acc) + n + scale * 2
        np.testing.assert_allclose(o, want, rtol=1e-6)
    assert len(mixed._traces) == 1


def test_a_float_is_rounded_to_f32_and_nan_and_inf_pass():
    @hk.kernel(grid=(1,))
    def fill(o: hk.Tensor[hk.fp32], v: float):
        o[hk.tile_coord(0, 0, 0, 0)] = hk.zeros(hk.RT(hk.fp32, 16, 16)) + v
    o = np.zeros((1, 1, 16, 16), np.float32)
    fill(o, 0.1)
    assert o[0, 0, 0, 0] == np.float32(0.1)
    fill(o, 3)                                       # an int for a float scalar
    assert o[0, 0, 0, 0] == 3.0
    fill(o, np.float64(2.5))                         # a numpy number
    assert o[0, 0, 0, 0] == 2.5
    fill(o, float("nan"))
    assert np.isnan(o).all()
    fill(o, -math.inf)
    assert (o == -np.inf).all()


def test_i32_bounds_pass():
    @hk.kernel(grid=(1,))
    def put(o: hk.Tensor[hk.i32], v: int):
        o[hk.tile_coord(0, 0, 0, 0)] = hk.zeros(hk.RT(hk.i32, 16, 16)) + v
    o = np.zeros((1, 1, 16, 16), np.int32)
    for v in (-2**31, 2**31 - 1, np.int64(12)):
        put(o, v)
        assert (o == int(v)).all()


# ---- bad values: refused before anything runs, naming the parameter --------------------------

def _call_dropout(seed=5, p=0.5):
    x = torch.rand(1, 1, 16, 64)
    return lambda: dropout(x, seed, torch.zeros_like(x), p=p)


@pytest.mark.parametrize("seed, words", [
    ("5", ["'seed'", "str", "not a number", "seed=1234"]),
    (None, ["'seed'", "NoneType", "not a number"]),
    (2**31, ["'seed'", "outside i32's range", "modulo 2**31"]),
    (-2**31 - 1, ["'seed'", "outside i32's range"]),
    (True, ["'seed'", "a bool", "not an int"]),
    (5.0, ["'seed'", "a float, not an int"]),
    (torch.tensor(5), ["'seed'", "torch Tensor", ".item()"]),
    (np.array([5]), ["'seed'", "numpy ndarray"]),
    ([5], ["'seed'", "list", "not a number"]),
], ids=["str", "None", "2^31", "below-i32", "bool", "float", "tensor", "array", "list"])
def test_bad_int_values_are_refused(seed, words):
    refused(_call_dropout(seed=seed), *words, kind=InputError)


@pytest.mark.parametrize("p, words", [
    ("0.5", ["'p'", "str", "not a number", "p=1e-6"]),
    (None, ["'p'", "NoneType"]),
    (1e39, ["'p'", "beyond f32's range", "inf"]),
    (-1e300, ["'p'", "beyond f32's range"]),
    (False, ["'p'", "a bool"]),
    (torch.tensor(0.5), ["'p'", "torch Tensor", ".item()"]),
    (1j, ["'p'", "complex", "not a number"]),
], ids=["str", "None", "1e39", "-1e300", "bool", "tensor", "complex"])
def test_bad_float_values_are_refused(p, words):
    refused(_call_dropout(p=p), *words, kind=InputError)


def test_binding_mistakes_are_refused():
    x = torch.rand(1, 1, 16, 64)
    o = torch.zeros_like(x)
    refused(lambda: dropout(x, o), "tensor parameter 'o' was not given", kind=InputError)
    refused(lambda: dropout(x, 5, o, 6), "takes 3 positional arguments", "x, seed, o",
            kind=InputError)
    refused(lambda: dropout(x, 5, o, seed=6), "'seed' is given twice", kind=InputError)
    refused(lambda: rmsnorm(*rmsnorm_inputs()), "runtime scalar 'eps' was not given",
            "eps=", kind=InputError)
    refused(lambda: dropout(x, 5, o, q=1), "unknown constant 'q'", kind=InputError)


# ---- declarations: refused at the author's line ----------------------------------------------

def test_a_scalar_of_another_dtype_is_refused_at_its_line():
    def make():
        @hk.kernel(grid=(1,))
        def k(x: hk.Tensor[hk.fp32], v: hk.Scalar[hk.bf16]):  # <- here
            pass
    err = refused(make, "hk.Scalar", "f32 or an i32", "hk.Scalar[hk.fp32]")
    assert err.loc is not None and err.loc.line == marked_line(make)


def test_a_default_the_call_could_not_pass_is_refused_at_its_line():
    def make():
        @hk.kernel(grid=(1,))
        def k(x: hk.Tensor[hk.fp32],
              seed: int = 2**40):  # <- here
            pass
    err = refused(make, "runtime scalar 'seed'", "outside i32's range", "default")
    assert err.loc is not None and err.loc.line == marked_line(make)


def test_a_grid_reading_a_runtime_scalar_is_refused_at_its_line():
    @hk.kernel(grid=lambda p: (p.n,))  # <- here
    def k(x: hk.Tensor[hk.fp32], n: int):
        pass
    err = refused(lambda: k.trace(), "the grid reads runtime scalar 'n'", "hk.Constexpr")
    points_at(err, k)


def test_a_requirement_reading_a_runtime_scalar_is_refused():
    @hk.kernel(grid=(1,), requires=[(lambda p: p.eps > 0, "eps must be positive")])
    def k(x: hk.Tensor[hk.fp32], eps: float):
        idx = hk.tile_coord(0, 0, 0, 0)
        x[idx] = x[idx].load(hk.RT(hk.fp32, 16, 16)) * eps
    refused(lambda: k(np.zeros((1, 1, 16, 16), np.float32), 1.0),
            "reads runtime scalar 'eps'", "hk.Constexpr")


def test_a_positional_bool_is_no_scalar():
    def make():
        @hk.kernel(grid=(1,))
        def k(x: hk.Tensor[hk.fp32], flag: bool):  # <- here
            pass
    err = refused(make, "'flag' must be a tensor", "runtime scalar")
    assert err.loc is not None and err.loc.line == marked_line(make)


# ---- the GPU call without a GPU: one build, the values packed at each call ---------------------

class FakeKernel:
    """Records each launch's globals' data pointers and the 4 bytes of each scalar."""

    def __init__(self, log, globals_, scalars):
        self.log, self.globals, self.scalars = log, globals_, scalars

    def bind(self, grid, pointers):
        def launch():
            data = [ctypes.c_uint64.from_buffer_copy(
                ctypes.string_at(pointers[i], GLOBAL_ARG_BYTES)[:8]).value
                for i in range(self.globals)]
            values = [ctypes.string_at(pointers[self.globals + j], 4)
                      for j in range(self.scalars)]
            self.log.append((grid, data, values))
        return launch


@pytest.fixture
def gpu_launches(monkeypatch):
    log, builds = [], []
    loader = types.ModuleType("fake_scalar_loader")
    loader.MAX_GRID = (2**31 - 1, 65535, 65535)

    def load(built, index):
        trace = built
        return FakeKernel(log, len(trace.params), len(gpu_launches.kernel.scalars))
    loader.load = load
    monkeypatch.setitem(sys.modules, "fake_scalar_loader", loader)
    monkeypatch.setitem(gpu.LOADERS, "nvidia", "fake_scalar_loader")
    monkeypatch.setattr(build_mod, "build_trace", lambda trace: builds.append(trace) or trace)
    monkeypatch.setattr(gpu, "device", lambda index: Device(index, "nvidia", "9.0", "fake H200"))
    monkeypatch.setattr(gpu, "_LOADED", {})
    gpu_launches = types.SimpleNamespace(log=log, builds=builds, kernel=None)
    return gpu_launches


def test_gpu_call_packs_each_value_with_one_build(gpu_launches):
    gpu_launches.kernel = dropout
    call = gpu.GpuCall(dropout, "sm_90a", {})
    x = torch.rand(1, 1, 32, 128)
    o = torch.zeros_like(x)
    call.fast((x, o, 123, 0.5))
    fast = call.fast
    call.fast((x, o, 2024, 0.25))
    call.fast((x, o, np.int32(-7), 1))               # converted by the slow check, same path
    assert call.fast is fast and len(gpu_launches.builds) == 1
    values = [(struct.unpack("<i", s)[0], struct.unpack("<f", f)[0])
              for _, _, (s, f) in gpu_launches.log]
    assert values == [(123, 0.5), (2024, 0.25), (-7, 1.0)]
    assert all(data == [x.data_ptr(), o.data_ptr()] for _, data, _ in gpu_launches.log)
    with pytest.raises(InputError, match="runtime scalar 'seed'.*outside i32's range"):
        call.fast((x, o, 2**31, 0.5))
    with pytest.raises(InputError, match="runtime scalar 'p'.*not a number"):
        call.fast((x, o, 1, "half"))
    assert len(gpu_launches.log) == 3


def test_gpu_path_through_the_kernel_call_keeps_one_call_per_constants(gpu_launches,
                                                                       monkeypatch):
    """`k(x, seed, o, p=...)` on CUDA-looking tensors: the values never reach the GpuCall key."""
    from ktile.runtime import launch as launch_mod
    gpu_launches.kernel = dropout
    monkeypatch.setattr(launch_mod, "_GPU_CALLS", {})
    monkeypatch.setattr(torch.Tensor, "is_cuda", property(lambda self: True))
    monkeypatch.setattr(gpu.GpuCall, "_target_name", lambda self, dev: "sm_90a")
    x = torch.rand(1, 1, 16, 64)
    o = torch.zeros_like(x)
    for seed, p in ((1, 0.5), (2, 0.75), (3, 0.125)):
        dropout(x, seed, o, p=p)
    assert len(launch_mod._GPU_CALLS) == 1 and len(gpu_launches.builds) == 1
    assert [struct.unpack("<f", f)[0] for _, _, (_, f) in gpu_launches.log] == [0.5, 0.75, 0.125]


def test_the_param_block_holds_scalars_between_globals_and_maps():
    params = KernelParams(2, maps=1, scalars=("int", "float"))
    params.set_scalars([-3, 0.1])
    assert len(params.pointers) == 5
    assert ctypes.string_at(params.pointers[2], 4) == struct.pack("<i", -3)
    assert ctypes.string_at(params.pointers[3], 4) == struct.pack("<f", 0.1)


def test_the_fast_path_checks_values_inline_and_keys_tensors_only():
    code = fast_call(2, (), (), ("int", "float"))
    assert "b0" not in code.source.split("key = (")[1].split("\n")[0]
    assert "type(b0) is int and -2147483648 <= b0 <= 2147483647" in code.source
    assert "else scalar(1, b1)" in code.source
    a, b = torch.zeros(1, 1, 16, 16), torch.zeros(1, 1, 16, 16)
    assert code.signature_of((a, b, 1, 2.0)) == code.signature_of((a, b, 9, 8.0))


# ---- the torch op -----------------------------------------------------------------------------

def test_torch_op_takes_scalars_in_its_schema():
    op = hk.torch_op(dropout)
    assert "SymInt seed, float p" in str(op.custom_op._opoverload._schema)
    x = torch.rand(1, 1, 16, 64) + 0.5
    a, b = torch.zeros_like(x), torch.zeros_like(x)
    op(x, 11, a, p=0.5)
    op(x, 12, b)
    want, _ = dropout_reference(x.numpy().reshape(-1), 0.5, 12)
    np.testing.assert_allclose(b.numpy().reshape(-1), want, atol=1e-6)
    assert not torch.equal(a, b)
    torch.ops.ktile.dropout(x, b, 11, 0.5)            # the schema's order: tensors, scalars
    assert torch.equal(a, b)
    refused(lambda: op(x, "11", a), "runtime scalar 'seed'", kind=InputError)
