"""Argument packing: each kt::gl<T> is 72 bytes, `T* data; int64 extent[4]; int64 stride[4]`,
little-endian, strides in elements; the parameter array points at each struct."""
import ctypes
import struct

import pytest

from ktile.runtime.loaders.packing import (GLOBAL_ARG_BYTES, GlobalArg, KernelParams,
                                           pack_global)


def expected(data, shape, stride) -> bytes:
    return struct.pack("<Q4q4q", data, *shape, *stride)


def test_global_is_72_bytes_8_aligned():
    assert GLOBAL_ARG_BYTES == 72 == ctypes.sizeof(GlobalArg)
    assert ctypes.alignment(GlobalArg) == 8
    assert GlobalArg.data.offset == 0 and GlobalArg.extent.offset == 8
    assert GlobalArg.stride.offset == 40


def test_pack_global_bytes():
    packed = pack_global(0x7F00_0000_1230, (2, 3, 48, 192), (27648, 9216, 192, 1))
    assert packed == expected(0x7F00_0000_1230, (2, 3, 48, 192), (27648, 9216, 192, 1))
    assert packed[:8] == bytes.fromhex("3012000000 7f0000".replace(" ", ""))


def test_large_extents_and_strides_are_64_bit():
    big = 3 * 2**31
    assert pack_global(16, (1, 1, big, 1), (big, big, 1, 1)) == \
        expected(16, (1, 1, big, 1), (big, big, 1, 1))


def test_params_array_points_at_each_struct():
    params = KernelParams(3)
    params.set_layout([(1, 1, 16, 64)] * 3, [(1024, 1024, 64, 1)] * 3)
    params.set_data([0x1000, 0x2000, 0x3000])
    for i, arg in enumerate(params.globals):
        assert params.pointers[i] == ctypes.addressof(arg)
        raw = ctypes.string_at(params.pointers[i], GLOBAL_ARG_BYTES)
        assert raw == expected(0x1000 * (i + 1), (1, 1, 16, 64), (1024, 1024, 64, 1))
        assert params.as_bytes(i) == raw
    params.set_data([0x4000, 0x5000, 0x6000])       # a later call: only the pointers change
    assert params.as_bytes(2) == expected(0x6000, (1, 1, 16, 64), (1024, 1024, 64, 1))


def test_from_torch_tensors_uses_data_ptr_shape_and_element_strides():
    torch = pytest.importorskip("torch")
    base = torch.zeros(2, 1, 8, 32, dtype=torch.bfloat16)
    view = base[:, :, 2:6, :16]                  # a strided view: strides in elements
    params = KernelParams.from_tensors([base, view])
    assert params.as_bytes(0) == expected(base.data_ptr(), (2, 1, 8, 32), (256, 256, 32, 1))
    assert params.as_bytes(1) == expected(view.data_ptr(), (2, 1, 4, 16), (256, 256, 32, 1))
    assert view.data_ptr() == base.data_ptr() + 2 * 32 * 2
