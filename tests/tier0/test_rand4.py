"""hk.rand4 (one Philox call per four offsets): the reference against draws recorded from
Triton 3.6.0's `tl.rand4x` (TRITON_INTERPRET=1, where tl.rand4x runs Triton's own
python/triton/language/random.py), the relation to randint4x, kernels on the interpreter in
the flat and row layouts, the lowering's call, and the refusal of non-int32 offsets."""
import numpy as np
import pytest

import ktile as hk
from ktile.errors import KernelError
from ktile.ops.rand.reference import rand, rand4, randint4x, uint_to_uniform_float
from rand4_kernels import draw4_flat, draw4_row, offsets_case

# seed -> (int32 offset, word offset & 3 of tl.rand4x(seed, offset >> 2) as float.hex)
TRITON_RAND4X = {
    0: [(0, "0x1.989fa2p-1"), (1, "0x1.e963a6p-3"), (2, "0x1.0ea14cp-1"), (3, "0x1.93fc8ep-1"),
        (4, "0x1.c6ccd4p-5"), (7, "0x1.2fdfeap-4"), (1505919583, "0x1.8bd0b6p-1"),
        (-2147483648, "0x1.8c10e6p-2"), (-1, "0x1.50f7bcp-2"), (2147483647, "0x1.0ba608p-1"),
        (-5, "0x1.30bf06p-6"), (13, "0x1.a911d0p-1")],
    1234: [(0, "0x1.048598p-2"), (1, "0x1.2c1878p-2"), (2, "0x1.100640p-1"),
           (3, "0x1.a1adc6p-2"), (4, "0x1.844486p-1"), (7, "0x1.47edd2p-3"),
           (1505919583, "0x1.9fed2ap-1"), (-2147483648, "0x1.016eeap-2"),
           (-1, "0x1.1f9730p-1"), (2147483647, "0x1.f6a02cp-2"), (-5, "0x1.3f3e08p-1"),
           (13, "0x1.1db9eap-2")],
    -7: [(0, "0x1.b5e58ap-3"), (1, "0x1.be349cp-3"), (2, "0x1.d0da16p-10"),
         (3, "0x1.519d5cp-2"), (4, "0x1.dfdc38p-1"), (7, "0x1.e8cdbap-8"),
         (1505919583, "0x1.310ea0p-1"), (-2147483648, "0x1.bcf660p-1"), (-1, "0x1.966350p-3"),
         (2147483647, "0x1.36ab60p-2"), (-5, "0x1.24d13ep-6"), (13, "0x1.bbd31cp-1")],
}


@pytest.mark.parametrize("seed", sorted(TRITON_RAND4X))
def test_rand4_matches_triton_rand4x(seed):
    offsets, want = zip(*TRITON_RAND4X[seed])
    got = rand4(seed, np.array(offsets, dtype=np.int32))
    assert [float(v).hex() for v in got] == [float.fromhex(w).hex() for w in want]


def test_four_offsets_take_the_four_words_of_one_call():
    groups = np.arange(-3, 5, dtype=np.int32)
    words = np.stack(randint4x(99, groups), axis=1)         # [group, word]
    got = rand4(99, np.arange(4 * -3, 4 * 5, dtype=np.int32)).reshape(-1, 4)
    np.testing.assert_array_equal(got, uint_to_uniform_float(words))
    # the first word of each call is rand's draw at the group's counter
    np.testing.assert_array_equal(got[:, 0], rand(99, groups))


def test_rand4_refuses_offsets_outside_int32():
    with pytest.raises(ValueError, match="int32"):
        rand4(1, np.array([2 ** 31], dtype=np.int64))


@pytest.mark.parametrize("kernel", [draw4_flat, draw4_row], ids=["flat", "row"])
def test_kernel_draws_match_the_reference_on_the_interpreter(kernel):
    torch = pytest.importorskip("torch")
    offs = offsets_case()
    o = torch.full(offs.shape, float("nan"))
    kernel.interpret(torch.from_numpy(offs), o, 77)
    np.testing.assert_array_equal(o.numpy(), rand4(77, offs))


def test_lowering_calls_rand4_and_rand_stays_rand():
    src = draw4_flat.source(target="sm_90a")
    assert "kt::rand4(" in src and "kt::rand(" not in src
    assert 'counter = "quad"' in draw4_flat.trace().dump()


def test_float_offsets_are_refused_naming_rand4():
    @hk.kernel(grid=(1,), warps=1)
    def bad(o: hk.Tensor[hk.fp32]):
        t = hk.RT(hk.fp32, 16, 32, "flat")
        o[hk.tile_coord(0, 0, 0, 0)] = hk.rand4(1, hk.zeros(t))
    with pytest.raises(KernelError, match="rand4 offsets must be an i32 tile"):
        bad.trace()
