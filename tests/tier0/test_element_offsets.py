"""Element coordinates (`hk.elem_coord`, issue #10): a tile read or written at any element
offset, ragged edges masked as for tile coordinates, through the IR, the interpreter and the
C++; and a bad coordinate refused at the line that wrote it."""
from __future__ import annotations

import numpy as np
import pytest

import ktile as hk
from bad_inputs import points_at, refused
from ktile.ir.ops import CopyAsyncOp, LoadOp, StoreOp, coord_unit
from ktile.ir.printing import module_text

R, C = 16, 32


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, C), hk.cdiv(p.o.rows, R)))
def shifted(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, R0: hk.Constexpr[int] = 0,
            C0: hk.Constexpr[int] = 5):
    """o[r, c] = x[r + R0, c + C0], -1 past x's edge."""
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    t = x[hk.elem_coord(0, 0, r * R + R0, c * C + C0)].load(hk.RT(hk.fp32, R, C), pad=-1.0)
    o[hk.tile_coord(0, 0, r, c)] = t


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, C), hk.cdiv(p.x.rows, R)))
def store_shifted(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, R0: hk.Constexpr[int] = 0,
                  C0: hk.Constexpr[int] = 3):
    """o[r + R0, c + C0] = x[r, c], dropped past o's edge."""
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    t = x[hk.tile_coord(0, 0, r, c)].load(hk.RT(hk.fp32, R, C))
    o[hk.elem_coord(0, 0, r * R + R0, c * C + C0)] = t


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.rows, R),))
def vector_at(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, C0: hk.Constexpr[int] = 7):
    """Row r of o (its first 32 columns) = row r of x from column C0."""
    for i in range(R):
        row = hk.arch.block_idx.x * R + i
        v = x[hk.elem_coord(0, 0, row, C0)].load(hk.RV(hk.fp32, C, "col"))
        o[hk.tile_coord(0, 0, row, 0)] = v


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, C), hk.cdiv(p.o.rows, R)), warps=2)
def group_at(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *, C0: hk.Constexpr[int] = 8):
    """A group load (global → shared) at an element offset."""
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    s = hk.shared(hk.ST(hk.bf16, R, 64))
    hk.group.load(s, x[hk.elem_coord(0, 0, r * R, c * 64 + C0)])
    hk.wait_for(s)
    hk.barrier()
    t = s.load(hk.RT(hk.bf16, R, 64))
    hk.wait_for(t)
    if hk.arch.warp_id == 0:
        o[hk.tile_coord(0, 0, r, c)] = t


def _shifted_reference(x, shape, r0, c0, pad):
    out = np.full(shape, pad, x.dtype)
    rows, cols = shape[2], shape[3]
    src = x[..., max(r0, 0):r0 + rows, max(c0, 0):c0 + cols]
    out[..., max(-r0, 0):max(-r0, 0) + src.shape[2], max(-c0, 0):max(-c0, 0) + src.shape[3]] = src
    return out


@pytest.mark.parametrize("r0, c0", [(0, 5), (3, 1), (0, 0), (7, 33), (-2, -3), (0, 64)],
                         ids=["col5", "row3-col1", "origin", "row7-col33", "negative", "col64"])
def test_a_load_at_an_element_offset_reads_from_that_element_padding_past_the_edge(r0, c0):
    x = np.random.default_rng(1).standard_normal((1, 1, 40, 100)).astype(np.float32)
    o = np.zeros((1, 1, 40, 95), np.float32)
    shifted.interpret(x, o, R0=r0, C0=c0)
    np.testing.assert_array_equal(o, _shifted_reference(x, o.shape, r0, c0, -1.0))


@pytest.mark.parametrize("r0, c0", [(0, 3), (5, 17), (-1, -2)])
def test_a_store_at_an_element_offset_writes_there_and_drops_past_the_edge(r0, c0):
    x = np.random.default_rng(2).standard_normal((1, 1, 32, 64)).astype(np.float32)
    o = np.zeros((1, 1, 40, 70), np.float32)
    store_shifted.interpret(x, o, R0=r0, C0=c0)
    want = np.zeros_like(o)
    rows = slice(max(r0, 0), min(r0 + 32, 40))
    cols = slice(max(c0, 0), min(c0 + 64, 70))
    want[..., rows, cols] = x[..., rows.start - r0:rows.stop - r0, cols.start - c0:cols.stop - c0]
    np.testing.assert_array_equal(o, want)


def test_a_vector_at_an_element_offset_reads_that_row_from_that_column():
    x = np.random.default_rng(3).standard_normal((1, 1, 32, 50)).astype(np.float32)
    o = np.zeros((1, 1, 32, 32), np.float32)
    vector_at.interpret(x, o, C0=7)
    want = np.zeros_like(o)
    want[..., :, :32] = np.pad(x[..., :, 7:], ((0, 0), (0, 0), (0, 0), (0, 0)))[..., :32]
    np.testing.assert_array_equal(o, want)


@pytest.mark.parametrize("c0", [8, 3])
def test_a_group_load_at_an_element_offset_copies_from_that_element(c0):
    x = (np.random.default_rng(4).standard_normal((1, 1, 32, 140))).astype(np.float32)
    import torch
    xt = torch.from_numpy(x).to(torch.bfloat16)
    o = torch.zeros((1, 1, 32, 128), dtype=torch.bfloat16)
    group_at.interpret(xt, o, C0=c0)
    want = torch.zeros_like(o)
    want[..., :140 - c0] = xt[..., c0:c0 + 128]
    assert torch.equal(o, want)


def test_element_coordinates_are_a_unit_on_the_op_and_tile_ones_print_as_before():
    text = shifted.trace().dump()
    assert 'unit = "element"' in text
    fn_ops = list(shifted.trace().module.walk())
    units = {type(op).__name__: coord_unit(op) for op in fn_ops
             if isinstance(op, (LoadOp, StoreOp, CopyAsyncOp))}
    assert units == {"LoadOp": "element", "StoreOp": "tile"}
    assert "unit" not in module_text(store_shifted.trace().module).split("kt.load")[1].split("\n")[0]


@pytest.mark.parametrize("target", ["gfx1100", "gfx1201", "gfx942", "gfx950", "sm_90a"])
def test_the_cpp_passes_an_element_coordinate_to_the_same_load(target):
    source = shifted.source(target)
    assert "kt::elem_coord{" in source and "kt::coord{" in source
    assert "kt::elem_coord{" in group_at.source(target)


def test_the_module_reads_back_with_its_unit():
    from ktile.ir.printing import parse_module
    text = shifted.trace().dump(generic=True)
    again = parse_module(text, verify=True)
    assert 'unit = "element"' in module_text(again, generic=True)


def test_an_unknown_unit_is_refused_by_the_verifier():
    from ktile.ir.printing import parse_module
    from ktile.errors import KernelError
    text = shifted.trace().dump(generic=True).replace('unit = "element"', 'unit = "byte"')
    err = refused(lambda: parse_module(text, verify=True), "unit", "element")
    assert isinstance(err, KernelError)


# ---- a bad coordinate is refused where it is written -------------------------------------------

@hk.kernel(grid=(1,))
def float_part_then_load(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    idx = hk.tile_coord(0, 0, 0.5, 0)  # <- here
    o[hk.tile_coord(0, 0, 0, 0)] = x[idx].load(hk.RT(hk.fp32, 16, 16))


@hk.kernel(grid=(1,))
def float_part_multiline(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    t = x[hk.tile_coord(0, 0,  # <- here
                        0.5, 0)].load(hk.RT(hk.fp32, 16, 16))
    o[hk.tile_coord(0, 0, 0, 0)] = t


@hk.kernel(grid=(1,))
def float_scalar_elem(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    half = hk.to_float(x.cols) * 0.5
    idx = hk.elem_coord(0, 0, 0, half)  # <- here
    o[hk.tile_coord(0, 0, 0, 0)] = x[idx].load(hk.RT(hk.fp32, 16, 16))


@hk.kernel(grid=(1,))
def tile_part_elem(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    idx = hk.elem_coord(0, 0, hk.RT(hk.fp32, 16, 16), 0)  # <- here
    o[hk.tile_coord(0, 0, 0, 0)] = x[idx].load(hk.RT(hk.fp32, 16, 16))


@pytest.mark.parametrize("kernel, words", [
    (float_part_then_load, ("tile_coord row", "integer", "float 0.5")),
    (float_part_multiline, ("tile_coord row", "integer")),
    (float_scalar_elem, ("elem_coord col", "integer", "float scalar")),
    (tile_part_elem, ("elem_coord row", "integer")),
], ids=["float-then-load", "multiline-call", "float-scalar-elem", "type-as-part"])
def test_a_part_that_is_no_integer_is_refused_at_the_coordinate_s_own_line(kernel, words):
    points_at(refused(lambda: kernel.trace(), *words), kernel)


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, C), hk.cdiv(p.o.rows, R)))
def copied(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    idx = hk.tile_coord(0, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    o[idx] = x[idx].load(hk.RT(hk.fp32, R, C), pad=-1.0)


def test_the_column_view_pattern_gives_what_an_element_coordinate_gives():
    """docs/language.md: `x[..., N:]` passed as its own parameter is the older spelling."""
    torch = pytest.importorskip("torch")
    x = torch.randn((1, 1, 40, 100), generator=torch.Generator().manual_seed(5))
    by_view, by_coord = torch.zeros((1, 1, 40, 95)), torch.zeros((1, 1, 40, 95))
    copied.interpret(x[..., 5:], by_view)
    shifted.interpret(x, by_coord, C0=5)
    assert torch.equal(by_view, by_coord)


def test_a_column_view_with_strided_columns_is_refused_naming_the_parameter():
    torch = pytest.importorskip("torch")
    x = torch.randn((1, 1, 40, 200))
    from ktile.errors import InputError
    refused(lambda: copied.interpret(x[..., ::2], torch.zeros((1, 1, 40, 100))), "'x'",
            "stride", kind=InputError)
