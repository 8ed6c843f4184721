"""The flat register-tile layout (hk.RT(..., "flat")): memory order, for memory-bound kernels.
Checked here on the interpreter: a whole RMSNorm in it, whole-tile reductions (hk.sum /
hk.tile_sum / tile_max / tile_min), iota and masks; and every use that needs a row/col layout
refused at the kernel's line with a hint."""
import numpy as np
import pytest

import ktile as hk
from ktile.errors import KernelError
from flat_kernels import flat_extremes, flat_rms, rms_case

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("rows,cols,held,warps", [(1, 1024, 1, 2), (3, 512, 2, 1),
                                                  (2, 1008, 1, 2)])
def test_flat_rmsnorm_matches_reference_on_the_interpreter(rows, cols, held, warps):
    # 1008 columns: a 63-column view, so the second warp's tile is masked past column 63
    args, constants, o, want = rms_case(rows, cols, held, warps)
    flat_rms(*args, **constants)
    got = o.float().numpy()
    assert np.isfinite(got).all()
    assert np.max(np.abs(got - want)) <= np.max(np.abs(want)) * 2.0 ** -7 + 1e-3


def test_iota_masks_and_whole_tile_extremes_in_the_flat_layout():
    x = torch.randn(20, 40)
    o = torch.full_like(x, float("nan"))
    m = torch.zeros(4 * 16, 16)
    flat_extremes(x, o, m)
    rows, cols = np.indices(x.shape)
    assert np.array_equal(o.numpy(), np.where(cols % 32 <= rows % 16, x.numpy(), 0.0))
    padded = np.zeros((32, 64), np.float32)       # tiles past the edge read 0
    padded[:20, :40] = x.numpy()
    for by in range(2):
        for bx in range(2):
            tile = padded[16 * by:16 * by + 16, 32 * bx:32 * bx + 32]
            got = m[16 * (2 * by + bx)].numpy()
            assert got[0] == tile.max() and got[1] == tile.min()


def _kernel(body):
    @hk.kernel(grid=(1,), warps=1)
    def k(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        body(x, o)
    return k


def _flat(x):
    return x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 16, "flat"))


def _refused(body, *words):
    x, o = torch.zeros(16, 16), torch.zeros(16, 16)
    with pytest.raises(KernelError) as info:
        _kernel(body)(x, o)
    text = str(info.value)
    assert "test_flat_layout.py" in text, text          # at the kernel author's line
    for word in words:
        assert word in text, text
    return text


def test_a_row_reduction_of_a_flat_tile_is_refused_with_the_whole_tile_form():
    def body(x, o):
        v = hk.row_sum(_flat(x))
        o[hk.tile_coord(0, 0, 0, 0)] = hk.zeros(hk.RT(hk.fp32, 16, 16)) + v
    _refused(body, "flat", "hk.sum(tile)")


def test_an_mma_of_flat_tiles_is_refused():
    def body(x, o):
        a = _flat(x).to(hk.bf16)
        acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
        acc = hk.mma_ABt(acc, a, a)
        o[hk.tile_coord(0, 0, 0, 0)] = acc
    _refused(body, "flat")


def test_a_vector_broadcast_against_a_flat_tile_is_refused():
    def body(x, o):
        v = hk.zeros(hk.RV(hk.fp32, 16, "col"))
        o[hk.tile_coord(0, 0, 0, 0)] = _flat(x) + v
    _refused(body, "flat", "vector")


def test_a_cross_warp_reduction_of_a_flat_tile_is_refused():
    def body(x, o):
        o[hk.tile_coord(0, 0, 0, 0)] = hk.group.sum(_flat(x))
    _refused(body, "flat")


def test_a_whole_tile_sum_of_an_integer_tile_is_refused():
    def body(x, o):
        n = _flat(x).to(hk.i32)
        o[hk.tile_coord(0, 0, 0, 0)] = _flat(x) * hk.sum(n)
    _refused(body, "float", "hk.fp32")


def test_rt_refuses_an_unknown_layout_naming_flat():
    def body(x, o):
        x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 16, "linear"))
    _refused(body, "'flat'")
