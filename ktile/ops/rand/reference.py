"""Reference semantics of `rand`: Triton's Philox-4x32-10 generator, in numpy.

What "correct" means here: bit-exact with Triton. For the same seed and the same offsets
(same values, same integer width), `randint` returns the same uint32 words as
`tl.randint(seed, offsets)` and `rand` the same float32 bit patterns as
`tl.rand(seed, offsets)`. `philox4x32` is the Philox-4x32 block function of Salmon et al.,
"Parallel Random Numbers: As Easy as 1, 2, 3" (SC11), and reproduces Random123's published
known-answer vectors. A kernel's `rand` is right when it equals this output exactly.

Checked against Triton 3.6.0 on an NVIDIA H200: `tl.randint` and `tl.rand` for 11 seeds
(runtime and constexpr) over 8195 int32 offsets, and int64 offsets up to +-2**63, all
bit-exact; tests/tier0/test_rand_reference.py keeps a sample of those draws.

Facts this module is written from (our own code; nothing copied):

- `python/triton/language/random.py` of triton-lang/triton, as shipped in triton 3.6.0
  (`philox_impl`, `philox`, `randint4x`, `uint_to_uniform_float`, `rand`):
  * a round maps (c0, c1, c2, c3) under key (k0, k1) to
    (hi(B*c2) ^ c1 ^ k0, lo(B*c2), hi(A*c0) ^ c3 ^ k1, lo(A*c0)) with A = 0xD2511F53 and
    B = 0xCD9E8D57, then adds the Weyl constants 0x9E3779B9 and 0xBB67AE85 to k0 and k1;
    N_ROUNDS_DEFAULT = 10.
  * the seed is cast to uint64 (a signed seed sign-extends: the integer cast in
    `python/triton/language/semantic.py`); k0 = its low 32 bits, k1 = its high 32 bits.
  * the counter is (lo, hi, 0, 0): lo = the offset's low 32 bits; hi = 0 for offsets of
    32 bits or fewer, and `offset >> 32` (arithmetic for signed) for 64-bit offsets. So
    the offset's width matters: int32 -1 is counter (0xFFFFFFFF, 0), int64 -1 is
    (0xFFFFFFFF, 0xFFFFFFFF). Here the numpy dtype of `offsets` plays that part.
    (Earlier Triton 3.x sent 64-bit offsets to Philox-4x64 instead; non-negative offsets
    below 2**32 agree with both.)
  * `randint` is the first of the four output words; `rand` maps it with
    `uint_to_uniform_float`: reinterpret as int32, fold negatives x -> -x - 1 (= ~x), giving
    0 .. 2**31 - 1, convert to float32 and multiply in float32 by 4.6566127342e-10. That
    constant rounds to float32 0x1.fffffep-32 = 2**-31 * (1 - 2**-24), so the largest draw
    is 1 - 2**-24 < 1. (Older Triton used 4.656613e-10, which rounds to 2**-31 exactly and
    could return 1.0; Triton's `test_rand_limits` in `python/test/unit/language/
    test_random.py` pins the current behaviour.)
- Random123's known answers for Philox4x32-10, as quoted by tensorflow/tensorflow
  `tensorflow/compiler/tests/stateful_random_ops_test.py` (`testPhilox4x32`, citing
  Random123's `test_philox.cpp`): the round above with keys bumped between rounds reproduces
  them, so Triton's Philox is the standard one.
"""
from __future__ import annotations

import numpy as np

N_ROUNDS_DEFAULT = 10
PHILOX_ROUND_A = 0xD2511F53  # multiplier of counter word 0
PHILOX_ROUND_B = 0xCD9E8D57  # multiplier of counter word 2
PHILOX_KEY_A = 0x9E3779B9  # Weyl increment of key word 0 (golden ratio)
PHILOX_KEY_B = 0xBB67AE85  # Weyl increment of key word 1 (sqrt(3) - 1)
# The largest float32 below 2**-31 (see the module docstring): 2**31 * UNIFORM_SCALE < 1.
UNIFORM_SCALE = np.float32(4.6566127342e-10)

_WORD_MASK = 0xFFFFFFFF
# Words travel as uint64 arrays; numpy scalars of that type keep numpy 1.x from promoting
# uint64 with a Python int to float64.
_U64_WORD_MASK = np.uint64(_WORD_MASK)
_U64_WORD_BITS = np.uint64(32)
_SEED_LOW, _SEED_END = -(1 << 63), 1 << 64  # int64 or uint64: what a kernel seed can hold
_WORD_LOW, _WORD_END = -(1 << 31), 1 << 32  # int32 or uint32: both bitcast to one word


def philox4x32(c0, c1, c2, c3, k0, k1, rounds=N_ROUNDS_DEFAULT):
    """Philox-4x32 of counter (c0, c1, c2, c3) under key (k0, k1): four uint32 arrays.

    Every argument is an int or an integer array of 32-bit unsigned words; they broadcast
    together. `rounds` is 10 for Philox-4x32-10, the variant Triton and Random123 use.
    """
    if not isinstance(rounds, int) or rounds < 0:
        raise ValueError(f"rounds must be a non-negative int, got {rounds!r}")
    named = {"c0": c0, "c1": c1, "c2": c2, "c3": c3, "k0": k0, "k1": k1}
    words = np.broadcast_arrays(*(_unsigned_words(v, n) for n, v in named.items()))
    c0, c1, c2, c3, k0, k1 = words
    for _ in range(rounds):
        c0, c1, c2, c3 = _philox_round(c0, c1, c2, c3, k0, k1)
        k0 = (k0 + np.uint64(PHILOX_KEY_A)) & _U64_WORD_MASK
        k1 = (k1 + np.uint64(PHILOX_KEY_B)) & _U64_WORD_MASK
    return tuple(np.asarray(word, dtype=np.uint32) for word in (c0, c1, c2, c3))


def _philox_round(c0, c1, c2, c3, k0, k1):
    # Words are held in uint64: a 32x32-bit product fits exactly, so its high half is a
    # shift and its low half a mask, with no wraparound to reason about.
    product_a = np.uint64(PHILOX_ROUND_A) * c0
    product_b = np.uint64(PHILOX_ROUND_B) * c2
    return (
        (product_b >> _U64_WORD_BITS) ^ c1 ^ k0,
        product_b & _U64_WORD_MASK,
        (product_a >> _U64_WORD_BITS) ^ c3 ^ k1,
        product_a & _U64_WORD_MASK,
    )


def seed_keys(seed):
    """The Philox key (k0, k1) that `tl.rand` derives from `seed`: its low and high words.

    `seed` is a Python or numpy integer that a kernel argument can hold (int64 or uint64).
    A negative seed is taken in two's complement, as Triton's cast to uint64 sign-extends it.
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer, got {type(seed).__name__} {seed!r}")
    seed = int(seed)
    if not _SEED_LOW <= seed < _SEED_END:
        raise ValueError(
            f"seed {seed} does not fit in 64 bits; a kernel seed is an int64 or uint64, "
            f"so pass a value in [-2**63, 2**64)"
        )
    seed_u64 = seed % (1 << 64)
    return seed_u64 & _WORD_MASK, seed_u64 >> 32


def offset_counters(offsets):
    """Counter words (c0, c1) for each offset, as uint32 arrays shaped like `offsets`.

    The dtype of `offsets` stands for the offsets' type in the kernel, as in Triton: up to
    32 bits, c0 is the offset's 32-bit pattern and c1 is 0; 64-bit offsets give their low
    word in c0 and their high word (sign-extended for signed dtypes) in c1. numpy's
    default int64 therefore agrees with int32 offsets wherever the values are non-negative.
    """
    offsets = _integer_array(offsets, "offsets")
    # Widening to int64 sign-extends signed offsets and zero-extends unsigned ones, as
    # Triton's cast to uint32 does; uint64 wraps, keeping its bits.
    bits = offsets.astype(np.int64).view(np.uint64)
    low = (bits & _U64_WORD_MASK).astype(np.uint32)
    if offsets.dtype.itemsize <= 4:
        return low, np.zeros_like(low)
    # Triton's `offset >> 32` is arithmetic for signed offsets, but the 32 bits it keeps
    # are the top half of the pattern either way.
    return low, (bits >> _U64_WORD_BITS).astype(np.uint32)


def randint4x(seed, offsets, rounds=N_ROUNDS_DEFAULT):
    """The four uint32 words of `tl.randint4x(seed, offsets)`, each shaped like `offsets`."""
    k0, k1 = seed_keys(seed)
    c0, c1 = offset_counters(offsets)
    zero = np.zeros_like(c0)
    return philox4x32(c0, c1, zero, zero, k0, k1, rounds)


def randint(seed, offsets, rounds=N_ROUNDS_DEFAULT):
    """`tl.randint(seed, offsets)`: the first Philox word, a uint32 array shaped like offsets."""
    return randint4x(seed, offsets, rounds)[0]


def uint_to_uniform_float(words):
    """Triton's map from 32-bit random words to float32 in [0, 1), bit for bit.

    `words` are int32 or uint32 values (any integer dtype). A word and its bitwise
    complement map to the same float, so 0 and 0xFFFFFFFF give 0.0, and 0x7FFFFFFF and
    0x80000000 give the largest value, 1 - 2**-24. (Triton's map of 64-bit words, with
    scale 1.0842020432385337e-19, is not modelled: `rand` never feeds it.)
    """
    signed = _word_bits(words).view(np.int32)
    # -x - 1 == ~x in two's complement; ~ cannot overflow at INT32_MIN where -x would.
    folded = np.where(signed < 0, ~signed, signed)
    return folded.astype(np.float32) * UNIFORM_SCALE


def rand(seed, offsets, rounds=N_ROUNDS_DEFAULT):
    """`tl.rand(seed, offsets)`: float32 draws in [0, 1), shaped like `offsets`, bit-exact."""
    return uint_to_uniform_float(randint(seed, offsets, rounds))


def rand4(seed, offsets, rounds=N_ROUNDS_DEFAULT):
    """`hk.rand4(seed, offsets)`: one Philox call per four consecutive offsets, bit-exact.

    Offset o (an int32 value) draws word `o & 3` of `tl.rand4x(seed, o >> 2)`: the four
    uniform floats of Philox-4x32-10 at counter (o >> 2, 0, 0, 0), `>>` arithmetic as in
    int32. So offsets 4g .. 4g + 3 share one Philox call and take its four words in order,
    and a kernel whose lanes hold such runs computes a quarter of `rand`'s Philox calls.
    The draws differ from `rand`'s (offset 4g + 1 takes the second word of counter g, not the
    first of counter 4g + 1); each is uniform on [0, 1) as `rand`'s are.
    """
    offsets = _integer_array(offsets, "offsets")
    if offsets.size and (offsets.min() < _WORD_LOW or offsets.max() >= 1 << 31):
        raise ValueError(
            f"rand4 offsets are int32 values (-2**31 .. 2**31 - 1), got values in "
            f"[{offsets.min()}, {offsets.max()}]"
        )
    o32 = offsets.astype(np.int32)
    words = randint4x(seed, o32 >> 2, rounds)
    word = np.choose(o32 & 3, words)
    return uint_to_uniform_float(word)


def _integer_array(values, name):
    array = np.asarray(values)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers, got an array of dtype {array.dtype}")
    return array


def _unsigned_words(values, name):
    """Philox words as uint64 arrays (room for the products), checked to be 32-bit unsigned."""
    array = _integer_array(values, name)
    if array.size and (array.min() < 0 or array.max() > _WORD_MASK):
        raise ValueError(
            f"{name} must hold 32-bit unsigned words (0 .. 0xFFFFFFFF), "
            f"got values in [{array.min()}, {array.max()}]"
        )
    return array.astype(np.uint64)


def _word_bits(values):
    """int32 or uint32 values as their uint32 bit patterns."""
    array = _integer_array(values, "words")
    if array.size and (array.min() < _WORD_LOW or array.max() >= _WORD_END):
        raise ValueError(
            f"words must fit in 32 bits (int32 or uint32 values, -2**31 .. 2**32 - 1), "
            f"got values in [{array.min()}, {array.max()}]"
        )
    return (array.astype(np.int64) & _WORD_MASK).astype(np.uint32)
