"""What a call accepts, and what the interpreter does not copy: in-place calls the aliasing rule
allows run and give the out-of-place result; inputs are read where they lie, a stride-0 input
is never materialised (a 2^31-element view runs in a few KiB); the emulation's layout check
refuses aliasing as the interpreter's does. The refusals themselves are the corpus
(test_bad_inputs_calls.py); the GPU fast path's are in test_runtime_dispatch.py."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import ktile as hk
from ktile.errors import InputError
from ktile.runtime.arguments import (Argument, check_arguments, check_strides, in_place_refusal,
                                     to_carrier)

torch = pytest.importorskip("torch")

SHAPE = (2, 1, 32, 128)


def _tile():
    return hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.fp32], b: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    t = hk.RT(hk.fp32, 16, 64)
    o[_tile()] = a[_tile()].load(t) + b[_tile()].load(t)


@hk.kernel(grid=lambda p: (1, 1, 1))
def first_tile(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    o[hk.tile_coord(0, 0, 0, 0)] = a[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 64))


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.o.rows, 16), 1))
def next_row_tile(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    r = hk.arch.block_idx.y
    o[hk.tile_coord(0, 0, r, 0)] = a[hk.tile_coord(0, 0, r + 1, 0)].load(hk.RT(hk.fp32, 16, 64))


def ramp(shape=SHAPE, start=0.0):
    return torch.arange(np.prod(shape), dtype=torch.float32).reshape(shape) / 7 + start


# ---- in place ----------------------------------------------------------------------------------

def test_an_elementwise_kernel_runs_in_place_as_it_runs_out_of_place():
    a, b = ramp(), ramp(start=1.0)
    expected = a + b
    add(a, b, a)                      # o is a: one load of a, one store of o, same tile
    torch.testing.assert_close(a, expected)


def test_inputs_may_share_memory():
    x, o = ramp(), torch.zeros(SHAPE)
    add(x, x, o)
    torch.testing.assert_close(o, 2 * x)


def test_disjoint_views_of_one_buffer_are_not_aliased():
    base = ramp((4, 1, 32, 128))
    a, o = base[:2], base[2:]
    expected = a + a
    add(a, a, o)
    torch.testing.assert_close(o, expected)


def test_interleaved_views_are_refused_though_their_elements_differ():
    """The rule compares spans (first to last byte): the top and bottom halves of each batch
    are disjoint, but each one's span reaches into the other's. A documented limit."""
    base = ramp((2, 1, 64, 128))
    o = base[:, :, 32:]
    before = o.clone()
    with pytest.raises(InputError, match="'o' is written and overlaps input 'a'"):
        add(base[:, :, :32], base[:, :, :32], o)
    assert torch.equal(o, before)


def test_the_in_place_rule_reads_the_kernel():
    trace, shifted = add.trace(), next_row_tile.trace()
    assert in_place_refusal(trace, 0, 2) is None and in_place_refusal(trace, 1, 2) is None
    assert "other tile coordinates" in in_place_refusal(shifted, 0, 1)


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.o.rows, 16), 1))
def element_read_tile_write(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    """Reads from row r (an element coordinate), writes row tile r: the same numbers, other
    elements (block 1 reads rows 1-16, which block 0 writes)."""
    r = hk.arch.block_idx.y
    o[hk.tile_coord(0, 0, r, 0)] = a[hk.elem_coord(0, 0, r, 0)].load(hk.RT(hk.fp32, 16, 64))


def test_the_in_place_rule_compares_the_coordinates_unit():
    assert "element coordinates but writes 'o' at tile coordinates" in \
        in_place_refusal(element_read_tile_write.trace(), 0, 1)
    a = ramp((1, 1, 48, 64))
    before = a.clone()
    with pytest.raises(InputError, match="'o' is the same tensor as input 'a'.*element coord"):
        element_read_tile_write(a, a)
    assert torch.equal(a, before)


def test_a_shifted_view_is_refused_by_the_emulations_check_too():
    """Wave emulation checks a call with check_strides, which holds the aliasing rule."""
    base = torch.zeros(1, 1, 16, 72, dtype=torch.float32)
    args = check_arguments(add, (base[..., :64], torch.zeros(1, 1, 16, 64), base[..., 8:]))
    with pytest.raises(InputError, match="'o' is written and overlaps input 'a'"):
        check_strides(add, add.trace("gfx950"), args)


# ---- carriers ----------------------------------------------------------------------------------

def argument(value) -> Argument:
    return check_arguments(first_tile, (value, value))[0]


def test_an_input_of_the_carriers_type_is_read_where_it_lies():
    x = np.ones((1, 1, 16, 64), np.float32)
    carrier = to_carrier(argument(x), written=False)
    assert np.shares_memory(carrier, x)
    assert not np.shares_memory(to_carrier(argument(x), written=True), x)


def test_a_stride_0_input_is_converted_once_and_broadcast():
    row = torch.arange(64, dtype=torch.float32).reshape(1, 1, 1, 64)
    carrier = to_carrier(argument(row.expand(3, 5, 16, 64)), written=False)
    assert carrier.shape == (3, 5, 16, 64) and carrier.strides[:3] == (0, 0, 0)
    np.testing.assert_array_equal(carrier[2, 4, 15], row.numpy()[0, 0, 0])


def test_a_2_to_the_31_element_expanded_input_runs_without_copying_it():
    """sm_90a has no 32-bit index limit: the interpreter runs the call, as the GPU would,
    reading the one row the view holds (an 8 GiB copy before)."""
    huge = torch.arange(64, dtype=torch.float32).reshape(1, 1, 1, 64).expand(2, 2**14, 2**16, 64)
    assert huge.numel() == 2**37
    o = torch.zeros(1, 1, 16, 64)
    tracemalloc.start()
    try:
        first_tile(huge, o, target="sm_90a")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"{peak} bytes allocated"
    torch.testing.assert_close(o, huge[:1, :1, :16])


def test_the_default_amd_target_refuses_the_same_call_as_its_gpu_would():
    huge = torch.zeros(1, 1, 1, 64).expand(1, 1, 2**31, 64)
    with pytest.raises(InputError, match="2147483648 entries along its row dimension"):
        first_tile(huge, torch.zeros(1, 1, 16, 64), target="gfx942")
