"""Bad-input corpus (issue #9), shared memory across warps (issue #10): sub-tile stores and
cross-warp tile reductions a kernel author gets wrong, each refused as a KernelError at the
author's line, naming what is wrong and the fix."""
import pytest

import ktile as hk
from bad_inputs import points_at, refused


def _trace(fn, warps=4, target="gfx1100"):
    return lambda: hk.kernel(grid=(1, 1, 1), warps=warps)(fn).trace(target)


def store_not_dividing(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 48, 32))
    s.store(a[0, 0, 0, 0].load(hk.RT(hk.fp32, 32, 32)), row=1)  # <- here


def store_row_outside(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 32, 32))
    s.store(a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32)), row=2)  # <- here


def store_col_outside(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 32, 64))
    s.store(a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32)), col=-1)  # <- here


def store_other_dtype(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.bf16, 32, 32))
    s.store(a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32)), row=1)  # <- here


def store_vector_into_tile(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 32, 32))
    s.store(a[0, 0, 0, 0].load(hk.RV(hk.fp32, 32)), col=0)  # <- here


def store_vector_with_row(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.SV(hk.fp32, 64))
    s.store(a[0, 0, 0, 0].load(hk.RV(hk.fp32, 32)), row=1)  # <- here


def store_vector_not_dividing(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.SV(hk.fp32, 48))
    s.store(a[0, 0, 0, 0].load(hk.RV(hk.fp32, 32)), col=1)  # <- here


def store_a_number(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 32, 32))
    s.store(1.0, row=1)  # <- here


def store_float_coordinate(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 32, 32))
    s.store(a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32)), row=0.5)  # <- here


def store_into_filling(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 32, 32))
    hk.group.load(s, a[0, 0, 0, 0])
    s.store(a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32)), row=1)  # <- here
    hk.wait_for(s)


def reduce_mask_tile(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32))
    m = hk.group.sum(x > 0.0)  # <- here


def reduce_global(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    m = hk.group.max(a)  # <- here


def reduce_shared_tile(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 32, 32))
    m = hk.group.min(s)  # <- here


def reduce_under_warp_branch(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32))
    if hk.arch.warp_id == 0:
        o[0, 0, 0, 0] = hk.group.sum(x)  # <- here


def reduce_scratch_too_big(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 64, 128))
    o[0, 0, 0, 0] = hk.group.sum(x)  # <- here


def mixed_shared_tiles_by_device_value(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(hk.ST(hk.fp32, 16, 32)), hk.shared(hk.ST(hk.bf16, 16, 32))]
    for stage in range(hk.cdiv(a.cols, 32)):
        s = bufs[stage % 2]  # <- here


CASES = [
    (store_not_dividing, ("rows and columns must divide", "use rows that divide 48"), 4),
    (store_row_outside, ("row 2 is outside the 32x32 shared tile", "count sub-tiles"), 4),
    (store_col_outside, ("col -1 is outside", "count sub-tiles"), 4),
    (store_other_dtype, ("into a hk.bf16 shared tile", "convert first"), 4),
    (store_vector_into_tile, ("register vectors into shared vectors",), 4),
    (store_vector_with_row, ("shared vector has one row", "takes only `col`"), 4),
    (store_vector_not_dividing, ("length must divide the shared vector's",), 4),
    (store_a_number, ("store() writes a register tile or vector",), 4),
    (store_float_coordinate, ("shared store row",), 4),
    (store_into_filling, ("still filling", "hk.wait_for(tile)"), 4),
    (reduce_mask_tile, ("combines numbers across warps", "hk.where"), 4),
    (reduce_global, ("group.max combines a register tile, vector or scalar", "global 'a'",
                     "load it into registers first"), 4),
    (reduce_shared_tile, ("group.min combines a register tile", "shared tile",
                          "s.load(hk.RT(...))"), 4),
    (reduce_under_warp_branch, ("every warp",), 4),
    (reduce_scratch_too_big, ("group reduce's scratch", "bytes"), 8),
    (mixed_shared_tiles_by_device_value, ("item 1 of the list", "hk.bf16", "of one type",
                                          "same hk.ST(...)"), 4),
]


@pytest.mark.parametrize("fn,words,warps", CASES, ids=[c[0].__name__ for c in CASES])
def test_refused_at_the_authors_line(fn, words, warps):
    err = refused(_trace(fn, warps), *words)
    points_at(err, fn)
