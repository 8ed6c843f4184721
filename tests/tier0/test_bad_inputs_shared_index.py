"""Bad-input corpus (issue #9), lists of shared tiles indexed by a device value (issue #10):
what an author gets wrong picking `bufs[i]` — empty or mixed lists, an index outside the list
known while tracing, a tile twice or in two lists, lists of what is not a shared tile, a copy
or read through the index that no wait orders, a list too big for shared memory — each refused
as a KernelError at the author's line, naming what is wrong and the fix.

The lists are indexed with `pick(bufs, i)`, the call the kernel rewrite makes of `bufs[i]`
(ktile/lang/subscripts.py)."""
import pytest

import ktile as hk
from bad_inputs import points_at, refused
from ktile.lang.shared_ops import select_shared as pick

T16 = hk.ST(hk.fp32, 16, 16)
R16 = hk.RT(hk.fp32, 16, 16)


def _trace(fn, target="gfx1100"):
    return lambda: hk.kernel(grid=(1, 1, 1))(fn).trace(target)


def _source(fn, target="gfx1100"):
    return lambda: hk.kernel(grid=(1, 1, 1))(fn).trace(target).source()


# ---- the list ------------------------------------------------------------------------------

def empty_list(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    pick([], a.cols // 16)  # <- here


def other_dtypes(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16), hk.shared(hk.ST(hk.bf16, 16, 16))]
    pick(bufs, a.cols // 16)  # <- here


def other_shapes(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = (hk.shared(T16), hk.shared(hk.ST(hk.fp32, 16, 32)))
    pick(bufs, a.cols // 16)  # <- here


def tile_and_vector(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16), hk.shared(hk.SV(hk.fp32, 16))]
    pick(bufs, a.cols // 16)  # <- here


def vectors_of_other_lengths(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(hk.SV(hk.fp32, 16)), hk.shared(hk.SV(hk.fp32, 32))]
    pick(bufs, a.cols // 16)  # <- here


def register_tiles(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    tiles = [hk.zeros(R16), hk.zeros(R16)]
    pick(tiles, a.cols // 16)  # <- here


def a_global_in_the_list(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    pick([hk.shared(T16), a], a.cols // 16)  # <- here


def not_a_list(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(T16)
    pick(s, a.cols // 16)  # <- here


def a_tile_twice(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(T16)
    pick([s, s], a.cols // 16)  # <- here


def a_tile_in_two_lists(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x, y = hk.shared(T16), hk.shared(T16)
    pick([x, y], a.cols // 16).store(hk.zeros(R16))
    pick([y, x], a.cols // 16).store(hk.zeros(R16))  # <- here


def a_tile_in_a_longer_list(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x, y, z = hk.shared(T16), hk.shared(T16), hk.shared(T16)
    pick([x, y], a.cols // 16).store(hk.zeros(R16))
    pick([x, y, z], a.cols // 16).store(hk.zeros(R16))  # <- here


# ---- the index -----------------------------------------------------------------------------

def index_past_the_end(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16) for _ in range(2)]
    pick(bufs, 2).store(hk.zeros(R16))  # <- here


def negative_index_past_the_start(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16) for _ in range(3)]
    pick(bufs, -4).store(hk.zeros(R16))  # <- here


def float_index(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16) for _ in range(2)]
    pick(bufs, 0.5)  # <- here


def float_scalar_index(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16) for _ in range(2)]
    pick(bufs, hk.to_float(a.cols))  # <- here


def register_tiles_by_python_subscript(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    tiles = [hk.zeros(R16), hk.zeros(R16)]
    o[0, 0] = tiles[a.cols // 16]  # <- here


# ---- ordering through the index (waits) -------------------------------------------------------

def read_through_index_while_filling(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16) for _ in range(2)]
    hk.group.load(bufs[0], a[0, 0])
    t = pick(bufs, a.cols // 32).load(R16)  # <- here
    hk.wait_for(t, bufs[0])


def read_other_tile_while_copy_through_index(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16) for _ in range(2)]
    hk.group.load(pick(bufs, a.cols // 32), a[0, 0])
    t = bufs[1].load(R16)  # <- here
    hk.wait_for(t, bufs[1])


def store_through_index_while_filling(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16) for _ in range(2)]
    hk.group.load(bufs[1], a[0, 0])
    pick(bufs, a.cols // 32).store(hk.zeros(R16))  # <- here
    hk.wait_for(bufs[1])


def second_copy_through_index(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16) for _ in range(2)]
    hk.group.load(bufs[0], a[0, 0])
    hk.group.load(pick(bufs, a.cols // 16 - 1), a[0, 0])  # <- here
    hk.wait_for(bufs[0])


def copy_through_index_over_a_read(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16) for _ in range(2)]
    t = bufs[0].load(R16)
    hk.group.load(pick(bufs, a.cols // 16), a[0, 0])  # <- here
    hk.wait_for(t, bufs[0])


def read_through_index_after_barrier(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16) for _ in range(2)]
    hk.group.load(pick(bufs, a.cols // 16), a[0, 0])
    hk.barrier()
    t = bufs[0].load(R16)  # <- here
    hk.wait_for(t, bufs[0])


def copy_through_index_never_waited(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(T16) for _ in range(2)]
    hk.group.load(pick(bufs, a.cols // 16), a[0, 0])  # <- here


def mma_through_index_while_filling(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(hk.ST(hk.bf16, 16, 16)) for _ in range(2)]
    x = a[0, 0].load(hk.RT(hk.bf16, 16, 16))
    hk.group.load(bufs[1], a[0, 0])
    acc = hk.zeros(R16)
    acc += x @ pick(bufs, a.cols // 16).T  # <- here
    hk.wait_for(bufs[1])
    o[0, 0] = acc


# ---- budgets ---------------------------------------------------------------------------------

def list_too_big_for_shared_memory(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    bufs = [hk.shared(hk.ST(hk.fp32, 128, 128)) for _ in range(2)]  # <- here
    pick(bufs, a.cols // 16).store(hk.zeros(hk.RT(hk.fp32, 128, 128)))


CASES = [
    (empty_list, ("got an empty list", "make the list first")),
    (other_dtypes, ("item 1", "hk.bf16", "one type", "same hk.ST")),
    (other_shapes, ("16x32", "one type")),
    (tile_and_vector, ("shared vector", "one type")),
    (vectors_of_other_lengths, ("32-element", "one type")),
    (register_tiles, ("item 0", "only a list of shared tiles", "Python ints")),
    (a_global_in_the_list, ("item 1", "global 'a'", "only a list of shared tiles")),
    (not_a_list, ("picks one of a list of shared tiles", "got a shared tile",
                  "bufs = [hk.shared")),
    (a_tile_twice, ("appears twice", "list each buffer once")),
    (a_tile_in_two_lists, ("only one such list", "the same tiles in the same order")),
    (a_tile_in_a_longer_list, ("only one such list",)),
    (index_past_the_end, ("index 2 is outside the list of 2", "k % 2")),
    (negative_index_past_the_start, ("index -4 is outside the list of 3", "0 to 2")),
    (float_index, ("must be an integer",)),
    (float_scalar_index, ("must be an integer", "float scalar")),
    (register_tiles_by_python_subscript, ("not a python int", "list of shared tiles")),
    (read_through_index_while_filling, ("still filling", "hk.wait_for(tile)")),
    (read_other_tile_while_copy_through_index, ("still filling", "hk.wait_for(tile)")),
    (store_through_index_while_filling, ("writes the shared tile", "still filling")),
    (second_copy_through_index, ("group load into the shared tile", "still filling",
                                 "another buffer")),
    (copy_through_index_over_a_read, ("still reading", "hk.wait_for(register tile)")),
    (read_through_index_after_barrier, ("barrier does not wait", "hk.wait_for(tile)")),
    (copy_through_index_never_waited, ("still in flight when the kernel ends",)),
    (mma_through_index_while_filling, ("still filling",)),
    (list_too_big_for_shared_memory, ("bytes", "fewer of them")),
]


@pytest.mark.parametrize("fn,words", CASES, ids=[c[0].__name__ for c in CASES])
def test_refused_at_the_authors_line(fn, words):
    err = refused(_trace(fn), *words)
    points_at(err, fn)


# ---- a carried shared tile points at the list ------------------------------------------------

def swapped_buffers(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    cur, nxt = hk.shared(T16), hk.shared(T16)
    for k in range(a.cols // 16):  # <- here
        cur, nxt = nxt, cur


def test_carried_shared_tiles_point_at_a_list_indexed_on_the_device():
    err = refused(_source(swapped_buffers), "carries a shared tile", "bufs[k % 2]")
    points_at(err, swapped_buffers)
