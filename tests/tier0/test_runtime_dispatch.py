"""The GPU call's logic without a GPU: CPU tensors stand in for CUDA ones, a fake loader records
what would be launched. Checks what the first call prepares, that a repeated call takes the
generated fast path with new pointers, that a new signature prepares again, and the refusals."""
import ctypes
import struct
import sys
import types

import pytest

import ktile as hk
from ktile.errors import InputError, KernelError
from ktile.runtime import build as build_mod
from ktile.runtime import gpu
from ktile.runtime.arguments import check_arguments
from ktile.runtime.devices import Device
from ktile.runtime.fastcall import fast_call
from ktile.runtime.loaders.packing import GLOBAL_ARG_BYTES

torch = pytest.importorskip("torch")


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


class FakeKernel:
    def __init__(self, log):
        self.log = log

    def bind(self, grid, pointers):
        def launch():
            structs = [ctypes.string_at(pointers[i], GLOBAL_ARG_BYTES) for i in range(3)]
            self.log.append((grid, [ctypes.c_uint64.from_buffer_copy(s[:8]).value
                                    for s in structs], structs))
        return launch


@pytest.fixture
def launches(monkeypatch):
    log, loads = [], []
    loader = types.ModuleType("fake_loader")
    loader.MAX_GRID = (2**31 - 1, 65535, 65535)
    loader.load = lambda built, index: loads.append(index) or FakeKernel(log)
    monkeypatch.setitem(sys.modules, "fake_loader", loader)
    monkeypatch.setitem(gpu.LOADERS, "nvidia", "fake_loader")
    monkeypatch.setattr(build_mod, "build_trace", lambda trace: None)
    monkeypatch.setattr(gpu, "device", lambda index: Device(index, "nvidia", "9.0", "fake H200"))
    monkeypatch.setattr(gpu, "_LOADED", {})
    return types.SimpleNamespace(log=log, loads=loads)


def tensors(shape, count=3):
    return [torch.zeros(shape, dtype=torch.bfloat16) for _ in range(count)]


def test_first_call_prepares_then_the_fast_path_launches(launches):
    call = gpu.GpuCall(add, None, {})
    a, b, o = tensors((2, 1, 48, 192))
    call.fast((a, b, o))
    grid, pointers, structs = launches.log[-1]
    assert grid == (3, 3, 2) and pointers == [a.data_ptr(), b.data_ptr(), o.data_ptr()]
    assert structs[2][8:] == struct.pack("<8q", 2, 1, 48, 192, 9216, 1, 192, 1)
    fast = call.fast
    x, y, z = tensors((2, 1, 48, 192))
    call.fast((x, y, z))
    assert call.fast is fast                          # same signature: no new preparation
    assert launches.log[-1][1] == [x.data_ptr(), y.data_ptr(), z.data_ptr()]
    assert launches.loads == [-1]                     # loaded once


def test_a_new_signature_prepares_again(launches):
    call = gpu.GpuCall(add, None, {})
    call.fast(tuple(tensors((1, 1, 16, 64))))
    first = call.fast
    call.fast(tuple(tensors((1, 1, 37, 100))))
    assert call.fast is not first and launches.log[-1][0] == (2, 3, 1)
    base = torch.zeros(1, 1, 37, 128, dtype=torch.bfloat16)
    call.fast((base[..., :100], base[..., :100], base[..., :100]))   # same shape, new strides
    assert launches.log[-1][2][0][8:] == struct.pack("<8q", 1, 1, 37, 100, 1, 1, 128, 1)
    assert launches.loads == [-1]                     # one trace, one load


def test_refusals_before_any_launch(launches):
    call = gpu.GpuCall(add, None, {})
    a, b, o = tensors((1, 1, 16, 128))
    with pytest.raises(InputError, match="stride 2 in its last dimension"):
        call.fast((a[..., ::2], b[..., :64], o[..., :64]))
    flat = torch.zeros(16 * 64 + 8, dtype=torch.bfloat16)
    shifted = flat[1:1 + 16 * 64].view(1, 1, 16, 64)
    x, y, z = tensors((1, 1, 16, 64))
    with pytest.raises(InputError, match="'a' starts 2 bytes past a 16-byte boundary"):
        call.fast((shifted, y, z))
    assert launches.log == []
    call.fast((x, y, z))
    with pytest.raises(InputError, match="'b' starts 2 bytes past"):  # on the fast path too
        call.fast((x, shifted, z))
    assert len(launches.log) == 1
    with pytest.raises(InputError, match="must hold hk.bf16 elements, got float32"):
        call.fast((x.float(), y, z))
    with pytest.raises(InputError, match="takes 3 tensors"):
        call.fast((x, y))
    with pytest.raises(KernelError, match="the kernel is for gfx950, but its tensors are on"):
        gpu.GpuCall(add, "gfx950", {}).fast((x, y, z))


def test_generated_fast_path_reads_as_flat_code():
    code = fast_call(2)
    assert "a0.dtype, a0.shape, a0.stride(), a0.get_device(), a1.dtype" in code.source
    assert "if (p0 | p1) & 15:" in code.source
    a, b = tensors((1, 1, 16, 64), 2)
    assert code.signature_of((a, b)) == (a.dtype, a.shape, a.stride(), -1,
                                         b.dtype, b.shape, b.stride(), -1)


# ---- aliasing: prepared once, the pointers checked on every call -----------------------------

def one_buffer(rows_apart: int, columns_apart: int):
    """Two (1, 1, 16, 64) bf16 views of one buffer, the second `rows_apart` rows and
    `columns_apart` columns after the first (the same strides as each other)."""
    base = torch.zeros(1, 1, 16 + rows_apart, 64 + columns_apart, dtype=torch.bfloat16)
    return (base[..., :16, :64],
            base[..., rows_apart:rows_apart + 16, columns_apart:columns_apart + 64])


def test_the_fast_path_refuses_an_output_overlapping_an_input(launches):
    """The signature (dtype, shape, strides) cannot see aliasing; the pointers can. A view 8
    columns (16 bytes, so aligned) after the input, with the strides of the first call."""
    call = gpu.GpuCall(add, None, {})
    first, second = one_buffer(0, 8), one_buffer(0, 8)
    call.fast((first[0], torch.zeros_like(first[0]), second[1]))    # disjoint: launches
    fast = call.fast
    a, o = one_buffer(0, 8)
    with pytest.raises(InputError, match="'o' is written and overlaps input 'a'.*\\+16 bytes"):
        call.fast((a, torch.zeros_like(a), o))
    assert call.fast is fast and len(launches.log) == 1


def test_the_fast_path_takes_an_elementwise_call_in_place(launches):
    call = gpu.GpuCall(add, None, {})
    a, b = tensors((1, 1, 16, 64), 2)
    call.fast((a, b, a))
    call.fast((b, a, b))
    assert len(launches.log) == 2 and launches.log[-1][1] == [b.data_ptr(), a.data_ptr(),
                                                              b.data_ptr()]


def test_generated_overlap_test():
    arguments = check_arguments(add, tuple(tensors((1, 1, 16, 64))))
    pairs = gpu._overlaps(add.trace("sm_90a"), arguments)
    code = fast_call(3, (2,), pairs)
    assert "(p2 < p0 + s0 and p0 < p2 + s2 and p0 != p2)" in code.source
    assert "a2.requires_grad" in code.source and "a0.requires_grad" not in code.source


def test_the_fast_path_refuses_an_output_that_now_requires_grad(launches):
    call = gpu.GpuCall(add, None, {})
    a, b, o = tensors((1, 1, 16, 64))
    call.fast((a, b, o))
    with pytest.raises(InputError, match="'o' is written in place but requires grad"):
        call.fast((a, b, o.requires_grad_()))
    assert len(launches.log) == 1


@hk.kernel(grid=lambda p: (p.o.cols // 128, 1, 1))
def rounded_down(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    o[0, 0, 0, hk.arch.block_idx.x] = a[0, 0, 0, hk.arch.block_idx.x].load(hk.RT(hk.bf16, 16, 64))


def test_a_grid_of_no_blocks_is_refused_not_launched(launches):
    a, o = tensors((1, 1, 16, 64), 2)
    with pytest.raises(InputError, match="0 blocks along x"):
        gpu.GpuCall(rounded_down, None, {}).fast((a, o))
    assert launches.log == []


ALIASINGS = {
    "disjoint": lambda: (*tensors((1, 1, 16, 64), 2), torch.zeros(1, 1, 16, 64,
                                                                  dtype=torch.bfloat16)),
    "in-place": lambda: (lambda a, b: (a, b, a))(*tensors((1, 1, 16, 64), 2)),
    "inputs-shared": lambda: (lambda a, o: (a, a, o))(*tensors((1, 1, 16, 64), 2)),
    "shifted-8-columns": lambda: (lambda a, o: (a, torch.zeros_like(a), o))(*one_buffer(0, 8)),
    "shifted-8-rows": lambda: (lambda b, o: (torch.zeros_like(b), b, o))(*one_buffer(8, 0)),
}


@pytest.mark.parametrize("make", ALIASINGS.values(), ids=ALIASINGS.keys())
def test_the_interpreter_and_the_gpu_call_agree_on_aliasing(launches, make):
    """One rule, one function: a call refused on one backend is refused on the other."""
    def verdict(run) -> str:
        try:
            run(make())
        except InputError as err:
            return str(err).split("error: ", 1)[1].split(";")[0]
        return "runs"
    on_gpu = verdict(lambda args: gpu.GpuCall(add, "sm_90a", {}).fast(args))
    interpreted = verdict(lambda args: add.interpret(*args, target="sm_90a"))
    assert on_gpu == interpreted
