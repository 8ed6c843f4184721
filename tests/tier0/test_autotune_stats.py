"""The tuner's Mann-Whitney U test (ktile/autotune/stats.py), checked against its definition:
U counts the pairs a sample wins, the exact null distribution is a distribution (sums to 1,
symmetric about n1 n2 / 2), complete separation has p = 1 / C(n1 + n2, n1), the normal
approximation agrees with the exact p on moderate samples, and `faster` needs both the test
and the minimum effect."""
import itertools
import math

import numpy as np
import pytest

from ktile.autotune import stats


def pairs_won(x, y) -> float:
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in itertools.product(x, y))


def test_ranks_share_ties():
    r = stats.ranks(np.array([3.0, 1.0, 3.0, 2.0]))
    assert list(r) == [3.5, 1.0, 3.5, 2.0]


@pytest.mark.parametrize("seed", range(5))
def test_u_counts_pairs_won(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 6, 7).astype(float), rng.integers(0, 6, 9).astype(float)
    assert stats.u_statistic(x, y) == pairs_won(x, y)


@pytest.mark.parametrize("n1,n2", [(1, 1), (3, 4), (5, 5), (6, 3)])
def test_exact_distribution_is_one_and_symmetric(n1, n2):
    top = n1 * n2
    assert stats.exact_cdf(top, n1, n2) == pytest.approx(1.0)
    for u in range(top):
        below = stats.exact_cdf(u, n1, n2)
        at_or_above = 1.0 - stats.exact_cdf(top - u - 1, n1, n2)
        assert below == pytest.approx(at_or_above)


def test_exact_distribution_matches_enumeration():
    n1, n2, values = 3, 4, list(range(7))
    counts = {}
    for xs in itertools.combinations(values, n1):
        ys = [v for v in values if v not in xs]
        u = pairs_won(xs, ys)
        counts[u] = counts.get(u, 0) + 1
    total = math.comb(7, 3)
    for u in range(n1 * n2 + 1):
        want = sum(c for k, c in counts.items() if k <= u) / total
        assert stats.exact_cdf(u, n1, n2) == pytest.approx(want)


def test_complete_separation():
    x, y = [1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0]
    assert stats.p_less(x, y) == pytest.approx(1 / math.comb(9, 4))
    assert stats.p_less(y, x) == pytest.approx(1.0)


def test_normal_approximation_agrees_with_exact():
    rng = np.random.default_rng(7)
    x, y = rng.normal(0.0, 1.0, 20), rng.normal(0.6, 1.0, 20)    # 400 pairs: exact
    exact = stats.p_less(x, y)
    stats_limit, stats.EXACT_LIMIT = stats.EXACT_LIMIT, 0
    try:
        approx = stats.p_less(x, y)
    finally:
        stats.EXACT_LIMIT = stats_limit
    assert abs(exact - approx) < 0.01


def test_all_equal_is_no_evidence():
    assert stats.p_less([1.0] * 30, [1.0] * 30) == 1.0


def test_faster_needs_the_test_and_the_effect():
    rng = np.random.default_rng(3)
    default = 10.0 + rng.normal(0, 0.01, 40)
    assert stats.faster(default * 0.90, default).faster            # 10% faster, clear
    tiny = stats.faster(default * 0.99, default)                    # significant, but 1%
    assert tiny.p_value < 0.01 and not tiny.faster
    noisy = stats.faster(default * 0.90 + rng.normal(0, 5, 40), default)
    assert noisy.p_value > 0.01 and not noisy.faster


def test_empty_sample_is_refused():
    with pytest.raises(ValueError):
        stats.p_less([], [1.0])
