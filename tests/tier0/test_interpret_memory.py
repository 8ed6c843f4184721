"""Interpreter: global memory. Ragged edges (load pad, store mask), vectors, gather and
scatter by row index, and the grid."""

import numpy as np
import pytest

import ktile as hk
from ktile.dtypes import bf16
from ktile.errors import InputError
from ktile.interpret import run_module


def _rand(shape, dtype=bf16, seed=0):
    rng = np.random.default_rng(seed)
    return dtype.round(rng.standard_normal(shape).astype(np.float32))


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


@pytest.mark.parametrize("shape", [(1, 1, 16, 64), (2, 1, 37, 100), (1, 1, 5, 3)])
def test_add_ragged_edges_are_masked(shape):
    a, b = _rand(shape, seed=1), _rand(shape, seed=2)
    o = np.full(shape, 7.0, np.float32)
    run_module(add.trace().module, [a, b, o])
    np.testing.assert_array_equal(o, bf16.round(a + b))


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, 16), 1))
def padded_row_max(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    r = hk.arch.block_idx.y
    t = x[hk.tile_coord(0, 0, r, 0)].load(hk.RT(hk.fp32, 16, 32), pad=float("-inf"))
    o[hk.tile_coord(0, 0, r, 0)] = hk.row_max(t)


def test_load_pad_fills_outside_the_global():
    x = -np.abs(_rand((1, 1, 20, 9), hk.fp32)) - 1.0  # all negative: a 0 pad would win
    o = np.full((1, 1, 2, 16), 99.0, np.float32)  # block r writes its 16 row maxima to row r
    run_module(padded_row_max.trace().module, [x, o])
    got = o.reshape(32)
    np.testing.assert_array_equal(got[:20], x[0, 0].max(axis=1))
    assert (got[20:] == -np.inf).all()  # rows past the global: all pad


@hk.kernel(grid=(1, 1, 1))
def edge_tiles(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    t = hk.RT(hk.fp32, 16, 64)
    edge = x[hk.tile_coord(0, 0, 1, 1)].load(t, pad=-2.0)
    o[hk.tile_coord(0, 0, 1, 1)] = edge + 1.0
    o[hk.tile_coord(0, 0, -1, 0)] = edge  # wholly outside: writes nothing
    o[hk.tile_coord(1, 0, 0, 0)] = edge  # no batch 1: writes nothing
    outside = x[hk.tile_coord(0, 3, 0, 0)].load(t, pad=-2.0)  # no depth 3: all pad
    o[hk.tile_coord(0, 0, 0, 0)] = outside - edge


def test_store_writes_only_inside_and_load_pads_any_coordinate():
    x = _rand((1, 1, 20, 70), hk.fp32, seed=5)
    o = np.full((1, 1, 20, 70), 7.0, np.float32)
    run_module(edge_tiles.trace().module, [x, o])
    edge = np.full((16, 64), -2.0, np.float32)
    edge[:4, :6] = x[0, 0, 16:, 64:]
    want = np.full((20, 70), 7.0, np.float32)
    want[:16, :64] = -2.0 - edge
    want[16:, 64:] = x[0, 0, 16:, 64:] + 1.0
    np.testing.assert_array_equal(o[0, 0], want)


@hk.kernel(grid=lambda p: (p.o.cols // 64 - 1, 1, 1))
def never_runs(o: hk.Tensor[hk.fp32]):
    o[hk.tile_coord(0, 0, 0, 0)] = hk.zeros(hk.RT(hk.fp32, 16, 64))


def test_grid_count_zero_runs_nothing():
    o = np.full((1, 1, 16, 64), 3.0, np.float32)
    run_module(never_runs.trace().module, [o])
    assert (o == 3.0).all()


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 16), p.o.rows, p.o.batch))
def block_index(o: hk.Tensor[hk.i32]):
    x, y, z = hk.arch.block_idx.x, hk.arch.block_idx.y, hk.arch.block_idx.z
    o[hk.tile_coord(z, 0, y, x)] = hk.zeros(hk.RV(hk.i32, 16)) + (z * 100 + y * 10 + x)


def test_grid_runs_every_block_with_its_index():
    o = np.full((2, 1, 3, 4 * 16), -1, np.int32)
    run_module(block_index.trace().module, [o])
    z, _, y, x = np.meshgrid(*(np.arange(n) for n in (2, 1, 3, 4)), indexing="ij")
    np.testing.assert_array_equal(o, np.repeat(100 * z + 10 * y + x, 16, axis=3))


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 16), p.o.rows, 1))
def copy_rows(x: hk.Tensor[hk.fp16], o: hk.Tensor[hk.fp16]):
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    v = x[hk.tile_coord(0, 0, r, c)].load(hk.RV(hk.fp16, 16), pad=-1.0)
    o[hk.tile_coord(0, 0, r, c)] = v * 2.0


def test_vector_load_store_address_rows_in_elements():
    x = _rand((1, 1, 3, 29), hk.fp16)     # two vectors a row, the second past the edge
    o = np.zeros((1, 1, 3, 29), np.float32)
    run_module(copy_rows.trace().module, [x, o])
    np.testing.assert_array_equal(o, hk.fp16.round(x * 2))


@hk.kernel(grid=(1, 1, 1))
def gather_scatter(x: hk.Tensor[hk.fp32], idx: hk.Tensor[hk.i32], o: hk.Tensor[hk.fp32],
                   g: hk.Tensor[hk.fp32]):
    rows = idx[hk.tile_coord(0, 0, 0, 0)].load(hk.RV(hk.i32, 16))
    t = hk.gather(x, rows, hk.RT(hk.fp32, 16, 16), col=0)
    g[hk.tile_coord(0, 0, 0, 0)] = t
    hk.scatter(o, rows, t + 1.0, col=0)


def test_gather_and_scatter_drop_out_of_range_rows():
    x = _rand((1, 1, 6, 12), hk.fp32)
    idx = np.array([3, -1, 0, 5, 6, 2, -7, 1, 4, 7, -3, 8, 9, -100, 6, 12],
                   np.int32).reshape(1, 1, 1, 16)
    o = np.full((1, 1, 6, 12), 5.0, np.float32)
    g = np.full((1, 1, 16, 16), 5.0, np.float32)
    run_module(gather_scatter.trace().module, [x, idx, o, g])
    want_g = np.zeros((16, 16), np.float32)
    want_o = np.full((6, 12), 5.0, np.float32)
    for i, row in enumerate(idx.reshape(16)):
        if 0 <= row < 6:
            want_g[i, :12] = x[0, 0, row]
            want_o[row] = x[0, 0, row] + 1.0
    np.testing.assert_array_equal(g[0, 0], want_g)
    np.testing.assert_array_equal(o[0, 0], want_o)


def test_wrong_arrays_are_an_input_error():
    with pytest.raises(InputError, match="takes 3 tensors, got 2"):
        run_module(add.trace().module, [np.zeros((1, 1, 16, 64), np.float32)] * 2)
    with pytest.raises(InputError, match="4-D numpy array of float32"):
        run_module(add.trace().module, [np.zeros((1, 1, 16, 64), np.float64)] * 3)
