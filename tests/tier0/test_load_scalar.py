"""hk.load_scalar (kt.load_scalar): one element of a global as a scalar on the interpreter -
as a tile coordinate (a row picked by an id read from a tensor), padded outside the global,
fp32 elements as floats - its C++ call, and refusals naming the argument."""
import numpy as np
import pytest
import torch

import ktile as hk
from ktile.errors import KernelError


@hk.kernel(grid=lambda p: (p.ids.rows,), warps=1)
def pick_rows(ids: hk.Tensor[hk.i32], table: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32]):
    t = hk.arch.block_idx.x
    low, high = hk.load_scalar(ids, t, 0), hk.load_scalar(ids, t, 1)
    row = hk.where(high == 0, low, -1)
    tile = table[hk.elem_coord(0, 0, row * 16, 0)].load(hk.RT(hk.fp32, 16, 32, "flat"))
    out[hk.elem_coord(0, 0, t * 16, 0)] = tile


@hk.kernel(grid=(1,), warps=1)
def scaled(x: hk.Tensor[hk.fp32], s: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32]):
    at = hk.tile_coord(0, 0, 0, 0)
    t = hk.RT(hk.fp32, 16, 16, "flat")
    out[at] = x[at].load(t) * hk.load_scalar(s, 0, 3) + hk.load_scalar(s, 5, 0, pad=-2.5)


def test_rows_at_ids_read_from_a_tensor():
    ids = torch.tensor([[3, 0], [0, 0], [5, 1], [-1, 0], [7, 0], [8, 0]], dtype=torch.int32)
    table = torch.randn(8 * 16, 32)
    out = torch.full((6 * 16, 32), float("nan"))
    pick_rows.interpret(ids, table, out)
    rows = table.view(8, 16, 32)
    want = torch.zeros(6, 16, 32)
    want[0], want[1], want[4] = rows[3], rows[0], rows[7]    # high word set, -1, 8: zeros
    assert torch.equal(out.view(6, 16, 32), want)


def test_float_elements_and_the_pad():
    x, s = torch.randn(16, 16), torch.arange(4.0).view(1, 4)
    out = torch.empty(16, 16)
    scaled.interpret(x, s, out)
    np.testing.assert_array_equal(out.numpy(), (x * 3.0 - 2.5).numpy())


def test_cpp_reads_one_element_per_call():
    src = pick_rows.source(target="sm_90a")
    assert src.count("kt::load_scalar(") == 2
    assert "kt.load_scalar" in pick_rows.trace().dump()


def _bad(body):
    @hk.kernel(grid=(1,), warps=1)
    def bad(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
        body(x, o)
    return bad


@pytest.mark.parametrize("body,words", [
    (lambda x, o: hk.load_scalar(x, 0), "loads i32 or fp32 elements"),
    (lambda x, o: hk.load_scalar(3, 0), "reads one element of a global tensor"),
    (lambda x, o: hk.load_scalar(o, 0.5), "must be an integer"),
    (lambda x, o: hk.load_scalar(o, 0, pad="zero"), "pad must be a Python number"),
], ids=["bf16", "not a global", "float row", "pad"])
def test_refusals(body, words):
    with pytest.raises(KernelError, match=words):
        _bad(body).trace()
