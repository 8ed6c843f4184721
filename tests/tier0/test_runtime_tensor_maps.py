"""The tensor maps of a GPU call's TMA copies, without a GPU: CPU tensors stand in for CUDA
ones, a fake loader records the launches and encodes a marker instead of a CUtensorMap. Checks
what each map describes (dims innermost first, byte strides, box, swizzle, data type), that
the parameter block carries the maps after the tensors, one encoding per data pointer, and
that a signature no map can describe (or one the driver refuses) runs the kernel traced
without TMA copies."""
import ctypes
import struct
import sys
import types

import pytest

import ktile as hk
from ktile.runtime import build as build_mod
from ktile.runtime import gpu
from ktile.runtime.devices import Device
from ktile.runtime.tensor_maps import MAP_BYTES, tensor_layout

torch = pytest.importorskip("torch")


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def staged(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    s = hk.shared(hk.ST(hk.bf16, 16, 64))
    hk.group.load(s, x[idx])
    hk.wait_for(s)
    hk.barrier()
    t = s.load(hk.RT(hk.bf16, 16, 64))
    hk.wait_for(t)
    o[idx] = t


class FakeKernel:
    def __init__(self, log, sources):
        self.log, self.sources = log, sources

    def bind(self, grid, pointers):
        def launch():
            maps = [ctypes.string_at(pointers[i], 8) for i in range(2, len(pointers))]
            self.log.append((len(pointers), [struct.unpack("<Q", m)[0] for m in maps]))
        return launch


@pytest.fixture
def fake(monkeypatch):
    state = types.SimpleNamespace(launches=[], encoded=[], sources=[], refuse=0)
    loader = types.ModuleType("fake_loader")
    loader.MAX_GRID = (2**31 - 1, 65535, 65535)
    loader.load = lambda built, index: FakeKernel(state.launches, state.sources)

    def encode(out, data_type, address, dims, strides, box, swizzle):
        state.encoded.append((data_type, address, list(dims), list(strides), list(box), swizzle))
        if state.refuse:
            return state.refuse
        ctypes.memmove(out, struct.pack("<Q", address) + bytes(MAP_BYTES - 8), MAP_BYTES)
        return 0
    loader.encode_tensor_map = encode
    loader.describe_result = lambda result: f"CUDA_ERROR_INVALID_VALUE ({result})"
    monkeypatch.setitem(sys.modules, "fake_loader", loader)
    monkeypatch.setitem(gpu.LOADERS, "nvidia", "fake_loader")
    monkeypatch.setattr(build_mod, "build_trace", lambda trace: state.sources.append(
        trace.source()))
    monkeypatch.setattr(gpu, "device", lambda index: Device(index, "nvidia", "9.0", "fake H200"))
    monkeypatch.setattr(gpu, "_LOADED", {})
    return state


def bf16(shape):
    return torch.zeros(shape, dtype=torch.bfloat16)


def test_a_contiguous_call_encodes_its_map_and_passes_it_after_the_tensors(fake):
    call = gpu.GpuCall(staged, None, {})
    x, o = bf16((2, 1, 40, 128)), bf16((2, 1, 40, 128))
    call.fast((x, o))
    assert call.tensor_copies and "kt_map0" in fake.sources[-1]
    # UINT16 (bf16 bits), dims (cols, rows, depth, batch), byte strides (rows, depth, batch),
    # the box one 128-byte swizzle atom (64 columns) by the tile's 16 rows, SWIZZLE_128B
    assert fake.encoded == [(1, x.data_ptr(), [128, 40, 1, 2], [256, 10240, 10240],
                             [64, 16, 1, 1], 3)]
    assert fake.launches[-1] == (3, [x.data_ptr()])


def test_one_encoding_per_data_pointer(fake):
    call = gpu.GpuCall(staged, None, {})
    x, y, o = bf16((1, 1, 16, 64)), bf16((1, 1, 16, 64)), bf16((1, 1, 16, 64))
    for src in (x, y, x, y, x):
        call.fast((src, o))
        assert fake.launches[-1] == (3, [src.data_ptr()])
    assert [e[1] for e in fake.encoded] == [x.data_ptr(), y.data_ptr()]


def test_a_row_stride_no_map_describes_runs_the_build_without_tma(fake):
    call = gpu.GpuCall(staged, None, {})
    x = bf16((1, 1, 16, 100))                          # rows 200 bytes apart
    call.fast((x, bf16((1, 1, 16, 100))))
    assert not call.tensor_copies
    assert call.no_tensor_copies_because == (
        "parameter 'x': a stride of 200 bytes is no multiple of 16 below 2^40")
    assert fake.encoded == [] and fake.launches[-1] == (2, [])
    assert "kt_map" not in fake.sources[-1] and "kt::wait<0, -1>();" in fake.sources[-1]
    call.fast((bf16((1, 1, 16, 128)), bf16((1, 1, 16, 128))))   # a describable one: TMA again
    assert call.tensor_copies and fake.launches[-1][0] == 3


def test_a_map_the_driver_refuses_runs_the_build_without_tma(fake):
    fake.refuse = 1
    call = gpu.GpuCall(staged, None, {})
    call.fast((bf16((1, 1, 16, 64)), bf16((1, 1, 16, 64))))
    assert not call.tensor_copies and "the driver refuses its map" in \
        call.no_tensor_copies_because and fake.launches[-1] == (2, [])


@pytest.mark.parametrize("shape, strides, reason", [
    ((1, 1, 0, 64), (0, 0, 64, 1), "it is empty"),
    ((1, 1, 2**31, 8), (0, 0, 8, 1), "an extent reaches 2^31"),
    ((1, 1, 4, 64), (0, 0, 128, 2), "its columns are strided (2 elements apart)"),
    ((1, 3, 4, 64), (0, 4 * 64 + 4, 64, 1), "a stride of 520 bytes"),   # depth stride
])
def test_layouts_no_map_describes(shape, strides, reason):
    assert reason in tensor_layout(shape, strides, 2)


def test_unused_strides_of_extent_one_are_given_packed():
    # batch and depth of extent 1: their strides are never used; rows of 100 fp32 = 400 bytes
    assert tensor_layout((1, 1, 3, 100), (7, 5, 100, 1), 4) == ([100, 3, 1, 1], [400, 1200, 1200])
    assert tensor_layout((1, 1, 1, 100), (0, 0, 3, 1), 2) == ([100, 1, 1, 1], [208, 208, 208])
