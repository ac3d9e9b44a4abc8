"""How closely one recording follows another: the cost of the cheapest DTW path between their
MFCCs (voiceover/align.py's check that a clip is a reading of its line's words).

The same number as aeneas's pure-Python DTWExact's accumulated cost matrix ends with: the cells of
one anti-diagonal depend only on the two diagonals before it, so each diagonal is one numpy step
(n + m of them) instead of n * m Python steps. Each cell is the same sum of the same two floats, so
the cost is equal bit for bit (tests/test_reliability_round4.py compares it with DTWExact's). numpy only:
the alignment child imports it.
"""
from __future__ import annotations

import numpy as np


def cost_matrix(m1: np.ndarray, m2: np.ndarray) -> np.ndarray:
    """1 - the cosine similarity of each pair of frames (MFCC columns), the first coefficient
    (energy) left out: DTWExact's cost matrix, computed as it computes it."""
    a, b = m1[1:, :], m2[1:, :]
    norm_a, norm_b = np.sqrt(np.sum(a ** 2, 0)), np.sqrt(np.sum(b ** 2, 0))
    return 1 - (a.transpose().dot(b) / np.outer(norm_a, norm_b))


def accumulated(cost: np.ndarray) -> np.ndarray:
    """acc[i, j] = cost[i, j] + min(acc[i-1, j], acc[i, j-1], acc[i-1, j-1]), the first row and
    column running sums: computed one anti-diagonal (i + j = k) at a time."""
    n, m = cost.shape
    acc = np.empty_like(cost)
    acc[0, :] = np.add.accumulate(cost[0, :])       # left to right, as DTWExact adds them
    acc[:, 0] = np.add.accumulate(cost[:, 0])
    for k in range(2, n + m - 1):
        i = np.arange(max(1, k - m + 1), min(n - 1, k - 1) + 1)
        j = k - i
        best = np.minimum(np.minimum(acc[i - 1, j], acc[i, j - 1]), acc[i - 1, j - 1])
        acc[i, j] = cost[i, j] + best
    return acc


def end_cost(m1: np.ndarray, m2: np.ndarray) -> float:
    """The accumulated cost at the end of the cheapest path from the first frames to the last."""
    return float(accumulated(cost_matrix(m1, m2))[-1, -1])
