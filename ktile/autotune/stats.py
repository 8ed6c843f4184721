"""The tuner's statistical test: one-sided Mann-Whitney U, in numpy.

A candidate replaces the default only when its per-round times are stochastically smaller:
`faster(candidate, default)` asks whether P(candidate < default) > 1/2 at level `alpha`
(the exact null distribution of U for small samples without ties; otherwise the normal
approximation with the tie correction and a continuity correction), and whether the medians
differ by at least `min_effect` of the default's. Rank tests make no assumption about the
shape of the time distribution, which on a GPU is skewed (clock boosts, a preempted round).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

EXACT_LIMIT = 400        # n1 * n2 up to which small tie-free samples use the exact distribution


def ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing the mean of the ranks they span."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    result = np.empty(len(values), dtype=np.float64)
    start = 0
    while start < len(values):
        end = start
        while end + 1 < len(values) and ordered[end + 1] == ordered[start]:
            end += 1
        result[order[start:end + 1]] = (start + end) / 2 + 1
        start = end + 1
    return result


def u_statistic(x, y) -> float:
    """U of sample x: the number of pairs (x_i, y_j) with x_i > y_j, ties counting 1/2."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    r = ranks(np.concatenate([x, y]))
    return float(r[:len(x)].sum() - len(x) * (len(x) + 1) / 2)


def exact_cdf(u: float, n1: int, n2: int) -> float:
    """P(U <= u) under the null for tie-free samples: counts of rank arrangements, by the
    recurrence N(u; n1, n2) = N(u - n2; n1 - 1, n2) + N(u; n1, n2 - 1)."""
    top = n1 * n2
    counts = np.zeros((n1 + 1, n2 + 1, top + 1), dtype=np.float64)
    counts[0, :, 0] = 1.0
    counts[:, 0, 0] = 1.0
    for i in range(1, n1 + 1):
        for j in range(1, n2 + 1):
            counts[i, j, :] = counts[i, j - 1, :]
            counts[i, j, j:] += counts[i - 1, j, :top + 1 - j]
    total = math.comb(n1 + n2, n1)
    return float(counts[n1, n2, :int(math.floor(u)) + 1].sum() / total)


def p_less(x, y) -> float:
    """One-sided p-value of H1: x tends to be smaller than y."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        raise ValueError("both samples need at least one value")
    u = u_statistic(x, y)
    both = np.concatenate([x, y])
    tied = len(np.unique(both)) < len(both)
    if not tied and n1 * n2 <= EXACT_LIMIT:
        return exact_cdf(u, n1, n2)
    n = n1 + n2
    _, counts = np.unique(both, return_counts=True)
    ties = float(np.sum(counts ** 3 - counts))
    var = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0                       # every value equal: no evidence either way
    z = (u - n1 * n2 / 2.0 + 0.5) / math.sqrt(var)
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


@dataclass(frozen=True)
class Verdict:
    faster: bool
    p_value: float
    effect: float            # 1 - median(candidate) / median(default)


def faster(candidate, default, *, alpha: float = 0.01, min_effect: float = 0.02) -> Verdict:
    """Whether `candidate`'s times beat `default`'s: one-sided Mann-Whitney U at `alpha` AND
    a median at least `min_effect` (a fraction) below the default's."""
    p = p_less(candidate, default)
    effect = 1.0 - float(np.median(candidate)) / float(np.median(default))
    return Verdict(p < alpha and effect >= min_effect, p, effect)
