"""Held-Karp dynamic programming with k-best orders and pinned positions.

Units ``0 .. m-1`` are the ones to order; unit ``m`` is the start and unit
``m+1`` the end. ``dp[mask, j, r]`` is the ``r``-th cheapest cost of leaving the
start, visiting exactly the units in ``mask`` and stopping at ``j``. Keeping the
``k`` cheapest values per state (over distinct predecessor/rank pairs) gives the
``k`` cheapest distinct complete orders. The table is filled one subset size at
a time and one last unit at a time, each step a numpy operation over all
subsets of that size, so the Python loop runs only ``m²`` times.

A unit may be pinned: it must begin at a given position of the expanded order
(a unit stands for ``sizes[u]`` consecutive stops; the start is position 0).
The next free position after the subset ``mask`` is ``1 + sum(sizes[mask])``,
so a pinned unit may only follow subsets whose size sum puts it in its place.
"""

from __future__ import annotations

import numpy as np


def held_karp(cost: np.ndarray, sizes: np.ndarray, pins: np.ndarray,
              k: int) -> list[tuple[float, list[int]]]:
    """The ``k`` cheapest orders of units ``0 .. m-1`` between start ``m`` and end ``m+1``.

    ``cost`` is ``(m+2) × (m+2)``; ``sizes[u]`` is the number of stops unit ``u``
    stands for; ``pins[u]`` is its required first position, or ``-1``. Returns
    ``(cost, order)`` pairs, cheapest first, fewer than ``k`` (possibly none)
    when fewer feasible orders exist. Memory grows as ``2**m * m * k`` floats.
    """
    m = len(cost) - 2
    start, end = m, m + 1
    full = (1 << m) - 1
    masks = np.arange(1 << m)
    bits = (masks[:, None] >> np.arange(m)) & 1
    next_pos = 1 + bits @ sizes.astype(np.int64)
    popcount = bits.sum(axis=1)
    inner = cost[:m, :m]

    dp = np.full((1 << m, m, k), np.inf)
    for j in range(m):
        if pins[j] in (-1, 1):
            dp[1 << j, j, 0] = cost[start, j]
    for layer in range(2, m + 1):
        layer_masks = masks[popcount == layer]
        for j in range(m):
            sel = layer_masks[(layer_masks >> j) & 1 == 1]
            prev = sel ^ (1 << j)
            if pins[j] >= 0:
                keep = next_pos[prev] == pins[j]
                sel, prev = sel[keep], prev[keep]
                if not len(sel):
                    continue
            cand = (dp[prev] + inner[:, j][None, :, None]).reshape(len(sel), m * k)
            if k == 1:
                dp[sel, j, 0] = cand.min(axis=1)
            else:
                best = np.partition(cand, k - 1, axis=1)[:, :k]
                dp[sel, j, :] = np.sort(best, axis=1)

    final = (dp[full] + cost[:m, end][:, None]).reshape(m * k)
    ranked = np.argsort(final, kind="stable")[:k]
    return [(float(final[idx]), _backtrack(dp, inner, full, int(idx), k))
            for idx in ranked if np.isfinite(final[idx])]


def _backtrack(dp: np.ndarray, inner: np.ndarray, mask: int, flat: int, k: int) -> list[int]:
    """Rebuild the order behind ``dp[mask, flat // k, flat % k]``.

    The candidates of a state are recomputed exactly as in the forward pass and
    ranked with the same stable sort, so rank ``r`` maps back to the predecessor
    that produced the ``r``-th value.
    """
    m = dp.shape[1]
    j, rank = divmod(flat, k)
    order = [j]
    while mask != 1 << j:
        prev = mask ^ (1 << j)
        cand = (dp[prev] + inner[:, j][:, None]).reshape(m * k)
        j, rank = divmod(int(np.argsort(cand, kind="stable")[rank]), k)
        mask = prev
        order.append(j)
    order.reverse()
    return order
