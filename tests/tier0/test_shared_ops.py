"""Shared memory across warps (issue #10): sub-tile stores `s.store(t, row=, col=)` and
cross-warp reductions of register tiles `hk.group.sum/max/min(tile)`, each checked through the
stack on the CPU: the interpreter against numpy (the tile reduction bit for bit in its tree
order), the IR's text, lds-alloc's scratch, the C++ calls, and a split-K GEMM whose warps
combine their partial tiles with one `hk.group.sum`."""
import sys
from pathlib import Path

import numpy as np
import pytest

import ktile as hk
from ktile.dtypes import bf16
from ktile.errors import KernelError
from ktile.interpret import run_module
from ktile.interpret.ops_shared import tile_reduce_rounds
from ktile.ir.printing import module_text, parse_module

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import shared_ops_kernels as K  # noqa: E402

TARGETS = ("gfx1100", "gfx1201", "gfx942", "gfx950", "sm_90a")


def _rand(shape, dtype=None, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return x if dtype is None else dtype.round(x)


# ---- sub-tile stores ------------------------------------------------------------------------

@pytest.mark.parametrize("target", TARGETS)
def test_each_warp_stores_its_tile_at_a_device_coordinate(target):
    a, o = _rand((1, 1, 64, 32), bf16), np.zeros((1, 1, 64, 32), np.float32)
    run_module(K.reversed_rows.trace(target).module, [a, o])
    np.testing.assert_array_equal(o, K.reversed_rows_reference(a))


def test_each_warp_stores_its_piece_of_a_shared_vector():
    a, o = _rand((1, 1, 1, 64)), np.zeros((1, 1, 4, 64), np.float32)
    run_module(K.staged_partials.trace().module, [a, o])
    np.testing.assert_array_equal(o[0, 0], np.tile(a[0, 0], (4, 1)))


def test_sub_tile_store_reads_back_as_ir_text():
    module = K.reversed_rows.trace().module
    text = module_text(module)
    assert '"kt.lds_store"(' in text and "index, index) -> ()" in text
    assert module_text(parse_module(text, verify=True)) == text


def test_sub_tile_store_is_a_call_with_the_coordinates():
    for target in TARGETS:
        source = K.reversed_rows.trace(target).source()
        line = next(l for l in source.splitlines() if "kt::lds_store(" in l)
        assert line.count(",") == 3, line   # dst, value, row, col


def test_device_coordinate_outside_fails_at_the_store():
    @hk.kernel(grid=(1, 1, 1), warps=4)
    def past(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.fp32, 32, 32))
        s.store(a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32)), row=hk.arch.warp_id)  # @past
        hk.barrier()
    with pytest.raises(KernelError) as info:
        run_module(past.trace().module, [np.zeros((1, 1, 16, 32), np.float32)] * 2)
    err = info.value
    assert "sub-tile store at (row 2, col 0) is outside the shared tile" in err.message
    assert "keep row in [0, 2) and col in [0, 1)" in err.hint


def test_store_into_a_tile_still_filling_is_refused():
    @hk.kernel(grid=(1, 1, 1))
    def filling(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.fp32, 32, 32))
        hk.group.load(s, a[0, 0, 0, 0])
        s.store(a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32)), row=1)
        hk.wait_for(s)
    with pytest.raises(KernelError, match="still filling"):
        filling.trace()


# ---- cross-warp tile reductions ---------------------------------------------------------------

@pytest.mark.parametrize("warps,rounds", [
    (1, []), (2, [[(0, 1)]]), (3, [[(0, 1)], [(0, 2)]]),
    (4, [[(0, 1), (2, 3)], [(0, 2)]]),
    (8, [[(0, 1), (2, 3), (4, 5), (6, 7)], [(0, 2), (4, 6)], [(0, 4)]])])
def test_tree_order(warps, rounds):
    assert tile_reduce_rounds(warps) == rounds


@pytest.mark.parametrize("target", TARGETS)
def test_group_sum_max_min_of_tiles_match_the_tree_bit_for_bit(target):
    a, o = _rand((1, 1, 64, 32)), np.zeros((1, 1, 64, 96), np.float32)
    run_module(K.tile_reductions.trace(target).module, [a, o])
    np.testing.assert_array_equal(o, K.tile_reductions_reference(a))


def test_bf16_tiles_round_after_every_combine():
    @hk.kernel(grid=(1, 1, 1), warps=4)
    def bsum(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        w = hk.arch.warp_id
        o[hk.tile_coord(0, 0, w, 0)] = hk.group.sum(a[hk.tile_coord(0, 0, w, 0)].load(
            hk.RT(hk.bf16, 16, 32)))
    a, o = _rand((1, 1, 64, 32), bf16, seed=3), np.zeros((1, 1, 64, 32), np.float32)
    run_module(bsum.trace().module, [a, o])
    parts = list(a[0, 0].reshape(4, 16, 32))
    want = K.tree(parts, lambda x, y: bf16.round(x + y))
    np.testing.assert_array_equal(o[0, 0, :16], want)
    assert not np.array_equal(want, bf16.round(sum(p.astype(np.float64) for p in parts)))


def test_lds_alloc_places_one_scratch_per_reduction_after_the_tiles():
    fn = next(op for op in K.tile_reductions.trace().module.walk()
              if op.name == "func.func" and "kt.kernel" in op.attributes)
    reduces = [op for op in fn.walk() if op.name == "kt.block_reduce"]
    offsets = [op.properties["offset"].value.data for op in reduces]
    per = 4 * 16 * 32 * 4                      # warps x one 16x32 f32 tile
    assert offsets == [0, per, 2 * per]
    assert fn.attributes["kt.lds_bytes"].value.data == 3 * per


@pytest.mark.parametrize("target", TARGETS)
def test_tile_reduction_is_a_call_with_its_scratch(target):
    source = K.tile_reductions.trace(target).source()
    for kind, offset in (("sum", 0), ("max", 8192), ("min", 16384)):
        assert (f"kt::block_reduce_tile_{kind}<4>(" in source
                and f"kt::shared_at<kt::st<float, 64, 32>, {offset}>())" in source), source


def test_scratch_over_the_shared_memory_is_refused_at_the_reduction():
    @hk.kernel(grid=(1, 1, 1), warps=8)
    def big(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 64, 128))
        o[0, 0, 0, 0] = hk.group.sum(x)  # <- here
    with pytest.raises(KernelError) as info:
        big.trace("gfx1100")
    err = info.value
    assert "group reduce's scratch" in err.message and "bytes" in err.message
    assert err.loc.source_line().strip().startswith("o[0, 0, 0, 0] = hk.group.sum(x)")


def test_tile_reduction_under_a_warp_branch_is_refused():
    @hk.kernel(grid=(1, 1, 1), warps=4)
    def branch(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32))
        if hk.arch.warp_id == 0:
            o[0, 0, 0, 0] = hk.group.sum(x)
    with pytest.raises(KernelError, match="every warp"):
        branch.trace()


# ---- split-K: the motivating kernel ---------------------------------------------------------

@pytest.mark.parametrize("target", ("gfx1100", "gfx950", "sm_90a"))
@pytest.mark.parametrize("shape", [(32, 32, 256), (64, 32, 160)])
def test_split_k_matches_numpy(target, shape):
    m, n, k = shape
    a, b = _rand((1, 1, m, k), bf16, 1), _rand((1, 1, n, k), bf16, 2)
    c = np.zeros((1, 1, m, n), np.float32)
    run_module(K.split_k.trace(target).module, [a, b, c])
    np.testing.assert_allclose(c, K.split_k_reference(a, b), rtol=1e-5, atol=1e-4)


def test_split_k_has_no_branch_per_warp():
    text = module_text(K.split_k.trace().module)
    assert text.count('"kt.block_reduce"') == 1 and text.count("scf.if") == 1
