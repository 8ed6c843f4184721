"""Tier 0: the `rand` and `dropout` references against known answers.

Known answers come from three places:
- Random123's Philox4x32-10 vectors, as quoted by tensorflow/tensorflow
  `tensorflow/compiler/tests/stateful_random_ops_test.py` (`testPhilox4x32`);
- Triton's own tests, triton-lang/triton `python/test/unit/language/test_random.py`
  (its reference splits the seed into low and high 32-bit key words; `test_rand_limits`);
- draws recorded from Triton 3.6.0 on an NVIDIA H200: `tl.randint` / `tl.rand` for int32
  and int64 offsets, and the "Low-Memory Dropout" tutorial kernel.
"""
from __future__ import annotations

import numpy as np
import pytest

from ktile.ops.dropout.reference import dropout
from ktile.ops.rand.reference import (
    UNIFORM_SCALE,
    offset_counters,
    philox4x32,
    rand,
    randint,
    randint4x,
    seed_keys,
    uint_to_uniform_float,
)

# (counter c0..c3, key k0 k1, expected output words)
RANDOM123_PHILOX4X32_10 = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]

# seed -> [(offset, tl.randint word, tl.rand value as float.hex)], Triton 3.6.0, H200,
# offsets held in an int32 tensor; the seed passed as a runtime argument and as a constexpr
# gave the same draws.
TRITON_INT32_DRAWS = {
    0: [
        (0, 0x6627E8D5, "0x1.989fa2p-1"),
        (1, 0xF8E4CCA4, "0x1.c6ccd4p-5"),
        (2, 0x04FAA329, "0x1.3ea8c8p-5"),
        (1505919583, 0xD2E19A81, "0x1.68f32ap-2"),
        (-2147483648, 0xBF9C529B, "0x1.018eb4p-1"),
        (-1, 0xC5B20A9D, "0x1.d26faap-2"),
        (2147483647, 0x5FB3FBFE, "0x1.7ecfeep-1"),
    ],
    42: [
        (0, 0x9CEAF053, "0x1.8c543cp-1"),
        (1, 0xFCDB2127, "0x1.926f6ap-6"),
        (2, 0xD36C0225, "0x1.649fecp-2"),
        (1505919583, 0x906C2655, "0x1.be4f64p-1"),
        (-2147483648, 0x2BF9E5DB, "0x1.5fcf2cp-2"),
        (-1, 0x6E2412DE, "0x1.b8904ap-1"),
        (2147483647, 0xD0F2743B, "0x1.786c5cp-2"),
    ],
    0x0000000FCAFEB0BA: [
        (0, 0xF219FB5B, "0x1.bcc092p-4"),
        (1, 0xEECED75E, "0x1.131288p-3"),
        (2, 0x45337A77, "0x1.14cde8p-1"),
        (1505919583, 0x95832A15, "0x1.a9f356p-1"),
        (-2147483648, 0x48010735, "0x1.20041ap-1"),
        (-1, 0x0E2D4D85, "0x1.c5a9aep-4"),
        (2147483647, 0xC57134BF, "0x1.d47658p-2"),
    ],
    -1: [
        (0, 0x72A47709, "0x1.ca91dap-1"),
        (1, 0x19FED511, "0x1.9fed5p-3"),
        (2, 0x17625282, "0x1.762526p-3"),
        (1505919583, 0xB51AAB9E, "0x1.2b955p-1"),
        (-2147483648, 0xBF47D986, "0x1.02e098p-1"),
        (-1, 0xC25672DE, "0x1.ed4c68p-2"),
        (2147483647, 0xD6A65D28, "0x1.4acd14p-2"),
    ],
    2**63 + 5: [
        (0, 0xF8802C11, "0x1.dff4fap-5"),
        (1, 0x611A76C6, "0x1.8469dap-1"),
        (2, 0x65B5A25B, "0x1.96d688p-1"),
        (1505919583, 0x12096132, "0x1.209612p-3"),
        (-2147483648, 0xB14C238B, "0x1.3acf7p-1"),
        (-1, 0x02FA587F, "0x1.7d2c3ep-6"),
        (2147483647, 0x55FDCCBC, "0x1.57f73p-1"),
    ],
}

# As above, offsets held in an int64 tensor: the high word reaches the counter.
TRITON_INT64_DRAWS = {
    42: [
        (0, 0x9CEAF053, "0x1.8c543cp-1"),
        (2**32, 0x42E0B8B3, "0x1.0b82ep-1"),
        (2**32 + 5, 0x131A8A04, "0x1.31a89ep-3"),
        (2**40 + 7, 0x2925EF18, "0x1.492f76p-2"),
        (-1, 0x8F40BD76, "0x1.c2fd08p-1"),
        (-5, 0x19A637FF, "0x1.9a637ep-3"),
        (-(2**40), 0x72F1DF33, "0x1.cbc77ap-1"),
        (2**63 - 1, 0x2C5F681D, "0x1.62fb3ep-2"),
        (-(2**63), 0x1E36901D, "0x1.e369p-3"),
    ],
    -1: [
        (0, 0x72A47709, "0x1.ca91dap-1"),
        (2**32, 0x85AF3999, "0x1.e94318p-1"),
        (2**32 + 5, 0x1236F804, "0x1.236f7ep-3"),
        (2**40 + 7, 0x9121ADFD, "0x1.bb7946p-1"),
        (-1, 0x4D18D7D2, "0x1.34635ep-1"),
        (-5, 0x2E481C86, "0x1.7240e2p-2"),
        (-(2**40), 0x697A4900, "0x1.a5e922p-1"),
        (2**63 - 1, 0x7B2535F5, "0x1.ec94d6p-1"),
        (-(2**63), 0xD40087A6, "0x1.5ffbcp-2"),
    ],
}

# The tutorial's `_seeded_dropout` on x = (arange(24) - 11.5) / 3, seed 123, Triton 3.6.0,
# H200. Its fp32 `/` is div.full.f32, so kept values may sit up to 2 ulp from ours.
TRITON_DROPOUT_SEED_123 = {
    0.5: [
        "0x0p+0", "-0x1.cp+2", "0x0p+0", "0x0p+0", "0x0p+0", "-0x1.155556p+2",
        "0x0p+0", "0x0p+0", "-0x1.2aaaaap+1", "-0x1.aaaaaap+0", "0x0p+0", "-0x1.555556p-2",
        "0x0p+0", "0x1p+0", "0x1.aaaaaap+0", "0x1.2aaaaap+1", "0x0p+0", "0x1.d55556p+1",
        "0x0p+0", "0x1.4p+2", "0x1.6aaaaap+2", "0x0p+0", "0x0p+0", "0x1.eaaaaap+2",
    ],
    0.3: [
        "0x0p+0", "-0x1.4p+2", "-0x1.21861ap+2", "0x0p+0", "-0x1.c92494p+1",
        "-0x1.8c30c4p+1", "0x0p+0", "-0x1.124924p+1", "-0x1.aaaaaap+0", "-0x1.30c30cp+0",
        "0x0p+0", "-0x1.e79e7cp-3", "0x1.e79e7cp-3", "0x1.6db6dcp-1", "0x1.30c30cp+0",
        "0x1.aaaaaap+0", "0x1.124924p+1", "0x1.4f3cf4p+1", "0x1.8c30c4p+1", "0x1.c92494p+1",
        "0x1.030c3p+2", "0x1.21861ap+2", "0x1.4p+2", "0x1.5e79e8p+2",
    ],
}

MILLION = 1_000_000


def float32_bits(values):
    return np.asarray(values, dtype=np.float32).view(np.uint32)


def from_hex(hex_values):
    return np.array([float.fromhex(h) for h in hex_values], dtype=np.float32)


def ulp_distance(a, b):
    """Distance in float32 steps between same-signed finite values."""
    return np.abs(float32_bits(a).astype(np.int64) - float32_bits(b).astype(np.int64))


# --- philox4x32 ------------------------------------------------------------------------


@pytest.mark.parametrize("counter, key, expected", RANDOM123_PHILOX4X32_10)
def test_philox_reproduces_random123_known_answers(counter, key, expected):
    words = philox4x32(*counter, *key)
    assert [int(w) for w in words] == list(expected)
    assert all(w.dtype == np.uint32 for w in words)


def test_philox_is_vectorised_over_arrays():
    counters = np.array([c for c, _, _ in RANDOM123_PHILOX4X32_10], dtype=np.uint32).T
    keys = np.array([k for _, k, _ in RANDOM123_PHILOX4X32_10], dtype=np.uint32).T
    expected = np.array([e for _, _, e in RANDOM123_PHILOX4X32_10], dtype=np.uint32).T
    words = philox4x32(*counters, *keys)
    np.testing.assert_array_equal(np.stack(words), expected)


def test_philox_with_no_rounds_is_the_identity():
    assert [int(w) for w in philox4x32(1, 2, 3, 4, 5, 6, rounds=0)] == [1, 2, 3, 4]


@pytest.mark.parametrize("bad_word", [2**32, -1])
def test_philox_refuses_words_outside_32_bits(bad_word):
    with pytest.raises(ValueError, match="32-bit unsigned words"):
        philox4x32(bad_word, 0, 0, 0, 0, 0)


# --- randint / rand against Triton --------------------------------------------------------


@pytest.mark.parametrize("seed", sorted(TRITON_INT32_DRAWS))
def test_draws_match_triton_for_int32_offsets(seed):
    offsets, words, floats = zip(*TRITON_INT32_DRAWS[seed])
    offsets = np.array(offsets, dtype=np.int32)
    np.testing.assert_array_equal(randint(seed, offsets), np.array(words, dtype=np.uint32))
    np.testing.assert_array_equal(float32_bits(rand(seed, offsets)), float32_bits(from_hex(floats)))


@pytest.mark.parametrize("seed", sorted(TRITON_INT64_DRAWS))
def test_draws_match_triton_for_int64_offsets(seed):
    offsets, words, floats = zip(*TRITON_INT64_DRAWS[seed])
    offsets = np.array(offsets, dtype=np.int64)
    np.testing.assert_array_equal(randint(seed, offsets), np.array(words, dtype=np.uint32))
    np.testing.assert_array_equal(float32_bits(rand(seed, offsets)), float32_bits(from_hex(floats)))


def test_seed_zero_offset_zero_is_the_all_zero_random123_block():
    # Counter (0, 0, 0, 0) under key (0, 0): Random123's first vector, seen through Triton.
    assert int(randint(0, np.int32(0))) == RANDOM123_PHILOX4X32_10[0][2][0]


def test_randint_is_the_first_philox_word_of_counter_offset_0_0_0():
    seed = 0x0000000FCAFEB0BA
    offsets = np.arange(1000, dtype=np.int32)
    zero = np.zeros_like(offsets)
    expected = philox4x32(offsets, zero, zero, zero, 0xCAFEB0BA, 0xF)
    for got, want in zip(randint4x(seed, offsets), expected):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(randint(seed, offsets), expected[0])


@pytest.mark.parametrize(
    "offset, counter",
    [
        (np.int32(-1), (0xFFFFFFFF, 0)),
        (np.int8(-1), (0xFFFFFFFF, 0)),  # narrow signed offsets sign-extend to 32 bits
        (np.uint32(0xFFFFFFFF), (0xFFFFFFFF, 0)),
        (np.int64(-1), (0xFFFFFFFF, 0xFFFFFFFF)),  # >> 32 is arithmetic on signed
        (np.uint64(2**64 - 1), (0xFFFFFFFF, 0xFFFFFFFF)),
        (np.int64(2**40 + 7), (7, 0x100)),
    ],
)
def test_offset_width_decides_the_high_counter_word(offset, counter):
    assert tuple(int(w) for w in offset_counters(offset)) == counter


def test_int32_and_uint32_offsets_with_one_bit_pattern_draw_alike():
    signed = np.array([-1, -2**31, 5], dtype=np.int32)
    np.testing.assert_array_equal(rand(7, signed), rand(7, signed.view(np.uint32)))


def test_non_negative_int64_offsets_draw_as_int32_offsets():
    offsets = np.arange(0, 2**31, 2**20 + 3)
    np.testing.assert_array_equal(rand(7, offsets), rand(7, offsets.astype(np.int32)))


def test_offsets_must_be_integers():
    with pytest.raises(TypeError, match="offsets must be integers"):
        rand(0, np.arange(4, dtype=np.float32))


def test_rand_keeps_the_shape_of_offsets():
    offsets = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert rand(1, offsets).shape == (3, 4)
    np.testing.assert_array_equal(rand(1, offsets).ravel(), rand(1, offsets.ravel()))


# --- the seed ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seed, keys",
    [
        (0x0000000FCAFEB0BA, (0xCAFEB0BA, 0xF)),  # a seed from Triton's test_randint
        (0xFFFFFFFF, (0xFFFFFFFF, 0)),
        (2**32, (0, 1)),
        (2**63 + 5, (5, 0x80000000)),
        (-1, (0xFFFFFFFF, 0xFFFFFFFF)),  # sign-extended, as Triton casts int32 to uint64
        (-(2**31), (0x80000000, 0xFFFFFFFF)),
        (np.int64(-2), (0xFFFFFFFE, 0xFFFFFFFF)),
        (np.uint64(2**64 - 1), (0xFFFFFFFF, 0xFFFFFFFF)),
    ],
)
def test_seed_splits_into_low_and_high_key_words(seed, keys):
    assert seed_keys(seed) == keys


def test_seeds_with_one_64_bit_pattern_draw_alike():
    offsets = np.arange(1000)
    np.testing.assert_array_equal(rand(-1, offsets), rand(2**64 - 1, offsets))
    np.testing.assert_array_equal(rand(-5, offsets), rand(2**64 - 5, offsets))


@pytest.mark.parametrize("seed", [2**64, -(2**63) - 1])
def test_seed_must_fit_in_64_bits(seed):
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        rand(seed, np.arange(4))


@pytest.mark.parametrize("seed", [1.0, True, "1", np.float32(2)])
def test_seed_must_be_an_integer(seed):
    with pytest.raises(TypeError, match="seed must be an integer"):
        rand(seed, np.arange(4))


# --- the uniform float map --------------------------------------------------------------


def test_uniform_scale_is_the_largest_float32_below_two_to_the_minus_31():
    assert float(UNIFORM_SCALE) == 2.0**-31 * (1 - 2.0**-24)
    assert UNIFORM_SCALE.dtype == np.float32


def test_extreme_words_map_just_below_one_as_in_triton_test_rand_limits():
    top = uint_to_uniform_float(np.array([-(2**31), 2**31 - 1], dtype=np.int32))
    assert top[0] == top[1] == np.float32(1 - 2.0**-24)
    assert top.dtype == np.float32
    np.testing.assert_array_equal(uint_to_uniform_float(np.array([0, 0xFFFFFFFF])), [0.0, 0.0])


def test_a_word_and_its_complement_map_alike():
    words = np.random.default_rng(1).integers(0, 2**32, 10_000, dtype=np.uint32)
    np.testing.assert_array_equal(uint_to_uniform_float(words), uint_to_uniform_float(~words))


def test_uniform_map_is_one_float32_conversion_and_one_float32_multiply():
    words = np.random.default_rng(2).integers(0, 2**31, 100_000)
    # float32 x float32 is exact in float64 (48 significant bits), so rounding that product
    # once to float32 is what an IEEE float32 multiply returns.
    exact = words.astype(np.float32).astype(np.float64) * np.float64(UNIFORM_SCALE)
    np.testing.assert_array_equal(
        float32_bits(uint_to_uniform_float(words)), float32_bits(exact.astype(np.float32))
    )


def test_uniform_map_refuses_words_wider_than_32_bits():
    with pytest.raises(ValueError, match="fit in 32 bits"):
        uint_to_uniform_float(np.array([2**32]))


# --- statistics -------------------------------------------------------------------------


def test_rand_is_float32_in_the_half_open_unit_interval():
    draws = rand(1234, np.arange(MILLION, dtype=np.int32))
    assert draws.dtype == np.float32
    assert draws.min() >= 0.0 and draws.max() < 1.0


def test_rand_mean_variance_and_distribution_are_uniform():
    draws = rand(0, np.arange(MILLION, dtype=np.int32)).astype(np.float64)
    # Standard errors over 1e6 draws: mean 2.9e-4, variance 7.5e-5.
    assert abs(draws.mean() - 0.5) < 2e-3
    assert abs(draws.var() - 1 / 12) < 5e-4
    # Kolmogorov-Smirnov distance to U(0, 1); the 1% critical value at n = 1e6 is 1.6e-3.
    ordered = np.sort(draws)
    ranks = np.arange(1, ordered.size + 1) / ordered.size
    assert np.max(np.maximum(ranks - ordered, ordered - (ranks - 1 / ordered.size))) < 2e-3


def test_different_seeds_give_different_streams():
    offsets = np.arange(100_000, dtype=np.int32)
    # 2**32 differs from 0 in the high key word only.
    streams = {seed: randint(seed, offsets) for seed in (0, 1, 42, 2**32, -1)}
    seeds = sorted(streams)
    for i, a in enumerate(seeds):
        for b in seeds[i + 1 :]:
            assert np.mean(streams[a] == streams[b]) < 1e-3, (a, b)


def test_offsets_within_a_stream_give_distinct_words():
    words = randint(99, np.arange(100_000, dtype=np.int32))
    # About one collision is expected among 1e5 words of 32 bits.
    assert np.unique(words).size > 100_000 - 10


def test_rand_is_deterministic():
    offsets = np.arange(10_000, dtype=np.int32)
    np.testing.assert_array_equal(rand(5, offsets), rand(5, offsets))


# --- dropout ----------------------------------------------------------------------------


@pytest.mark.parametrize("p", sorted(TRITON_DROPOUT_SEED_123))
def test_dropout_matches_the_triton_tutorial_kernel(p):
    x = ((np.arange(24) - 11.5) / 3).astype(np.float32)
    triton_output = from_hex(TRITON_DROPOUT_SEED_123[p])
    output, keep = dropout(x, p, seed=123)
    np.testing.assert_array_equal(keep, triton_output != 0)
    assert ulp_distance(output[keep], triton_output[keep]).max() <= 2
    assert np.all(output[~keep] == 0)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_keeps_about_one_minus_p(p):
    x = np.ones(MILLION, dtype=np.float32)
    _, keep = dropout(x, p, seed=7)
    # Standard error of the kept fraction over 1e6 elements is at most 5e-4.
    assert abs(keep.mean() - (1 - p)) < 3e-3


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.75])
def test_dropout_scales_kept_values_exactly_and_zeroes_the_rest(p):
    x = np.random.default_rng(3).standard_normal(100_000).astype(np.float32)
    output, keep = dropout(x, p, seed=11)
    assert output.dtype == np.float32 and keep.dtype == np.bool_
    expected = x[keep] / (np.float32(1) - np.float32(p))  # float32 / float32, as Triton's
    np.testing.assert_array_equal(float32_bits(output[keep]), float32_bits(expected))
    np.testing.assert_allclose(output[keep], x[keep].astype(np.float64) / (1 - p), rtol=1e-6)
    assert np.all(float32_bits(output[~keep]) == 0)  # +0.0, not -0.0


def test_dropout_mask_is_rand_above_p_over_flattened_indices():
    x = np.random.default_rng(4).standard_normal((64, 96)).astype(np.float32)
    _, keep = dropout(x, 0.3, seed=2024)
    expected = rand(2024, np.arange(x.size)) > np.float32(0.3)
    np.testing.assert_array_equal(keep.ravel(), expected)


def test_dropout_of_a_matrix_is_dropout_of_its_flattened_form():
    x = np.random.default_rng(5).standard_normal((32, 48)).astype(np.float32)
    output, keep = dropout(x, 0.4, seed=9)
    flat_output, flat_keep = dropout(x.ravel(), 0.4, seed=9)
    assert output.shape == keep.shape == x.shape
    np.testing.assert_array_equal(output.ravel(), flat_output)
    np.testing.assert_array_equal(keep.ravel(), flat_keep)


def test_dropout_drops_an_element_whose_draw_equals_p():
    # The tutorial keeps where rand > p: a tie is dropped.
    draw = float(rand(3, np.arange(1))[0])
    _, keep = dropout(np.ones(1, dtype=np.float32), draw, seed=3)
    assert not keep[0]


def test_dropout_takes_explicit_offsets():
    x = np.ones(1000, dtype=np.float32)
    offsets = np.arange(5000, 6000, dtype=np.int32)
    _, keep = dropout(x, 0.5, seed=3, offsets=offsets)
    np.testing.assert_array_equal(keep, rand(3, offsets) > np.float32(0.5))


def test_dropout_is_reproducible_per_seed():
    x = np.ones(10_000, dtype=np.float32)
    first, _ = dropout(x, 0.5, seed=123)
    again, _ = dropout(x, 0.5, seed=123)
    other, _ = dropout(x, 0.5, seed=512)
    np.testing.assert_array_equal(first, again)
    assert np.mean(first != other) > 0.4


def test_dropout_at_the_extremes_of_p():
    x = np.random.default_rng(6).standard_normal(10_000).astype(np.float32)
    assert np.all(rand(8, np.arange(x.size)) > 0)  # no exact-zero draw in this stream
    kept_all, keep = dropout(x, 0.0, seed=8)
    assert keep.all()
    np.testing.assert_array_equal(kept_all, x)
    with np.errstate(all="raise"):  # p == 1 never divides by zero
        dropped_all, keep = dropout(x, 1.0, seed=8)
    assert not keep.any() and not dropped_all.any()


def test_dropout_casts_its_input_to_float32():
    output, _ = dropout(np.arange(10, dtype=np.float64), 0.5, seed=1)
    assert output.dtype == np.float32


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan")])
def test_dropout_refuses_probabilities_outside_zero_one(p):
    with pytest.raises(ValueError, match="must be in \\[0, 1\\]"):
        dropout(np.ones(4, dtype=np.float32), p, seed=0)


def test_dropout_refuses_offsets_of_another_shape():
    with pytest.raises(ValueError, match="offsets must have x's shape"):
        dropout(np.ones((2, 3), dtype=np.float32), 0.5, seed=0, offsets=np.arange(6))
