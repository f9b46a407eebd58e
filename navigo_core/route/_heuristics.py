"""Iterated local search for a sequence with fixed ends (the solver's heuristic half).

The search works on *units* (single stops, or keep-together groups contracted
into one unit) laid out in a tour ``t``: ``t[0]`` is the start unit, ``t[-1]``
the end unit, and every unit appears once (a round trip uses a copy of the start
as its end unit). Pinned units stay where they are: ``gap_of_pos[p]`` names the
*gap* (maximal run of free positions) that position ``p`` belongs to, or
:data:`FIXED`. A move may only rearrange positions inside one gap, or swap two
units of the same size (number of stops) between gaps, so every pinned stop
keeps its position in the expanded order.

Local search (first improvement, driven by a queue of "dirty" units and
nearest-neighbour candidate lists):

* 2-opt (segment reversal), with the exact cost of reversing the segment's
  inner arcs for asymmetric matrices (kept in a prefix sum);
* Or-opt: move a segment of 1–3 units next to a near unit, as is or reversed;
* swap of two equal-size units (only when pinned units split the free
  positions into several gaps).

Perturbation: a local double bridge (swap two adjacent segments of bounded
length, orientation kept, so it is valid for asymmetric matrices too), or a
random swap between gaps. A kicked solution that is not worse replaces the
current one. The search stops at ``deadline`` or after ``patience`` kicks in a
row without improvement. All randomness comes from ``random.Random(seed)``.
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Sequence

import numpy as np

FIXED = -1
"""``gap_of_pos`` value of a position that never changes (ends, pinned units)."""

_NEIGHBOURS = 10
"""Length of each unit's candidate list."""

_MAX_OR_SEGMENT = 3
"""Longest segment an Or-opt move relocates."""

_MAX_KICK_SEGMENT = 30
"""Longest segment a double-bridge kick moves."""


class _Search:
    """Mutable state of one local search run (tour, positions, prefix sums)."""

    def __init__(self, cost: np.ndarray, tour: Sequence[int], gap_of_pos: Sequence[int],
                 sizes: Sequence[int], rng: random.Random) -> None:
        self.d: list[list[float]] = cost.tolist()
        self.asym = not np.array_equal(cost, cost.T)
        self.t = list(tour)
        self.size = len(self.t)
        self.pos = [0] * len(self.d)
        for p, u in enumerate(self.t):
            self.pos[u] = p
        self.gap = list(gap_of_pos)
        self.sizes = list(sizes)
        self.rng = rng
        self.eps = 1e-9 * max(1.0, float(cost.max(initial=0.0)))
        self.multi_gap = len({g for g in self.gap if g != FIXED}) > 1
        self.gap_ranges = _gap_ranges(self.gap)
        self.nb, self.nbw = _candidate_lists(cost)
        self.rev = [0.0] * self.size
        self._refresh_rev(0)
        self.value = sum(self.d[a][b] for a, b in zip(self.t, self.t[1:]))
        self.queue: deque[int] = deque()
        self.queued = [False] * len(self.d)
        for u in self.t:
            self._push(u)

    # -- bookkeeping -------------------------------------------------------
    def _push(self, u: int) -> None:
        if not self.queued[u]:
            self.queued[u] = True
            self.queue.append(u)

    def _refresh_rev(self, lo: int) -> None:
        """Recompute ``rev[k]`` for k > lo: the cost change of reversing arcs before k."""
        if not self.asym:
            return
        d, t, rev = self.d, self.t, self.rev
        lo = max(lo, 0)
        acc = rev[lo]
        for p in range(lo, self.size - 1):
            a, b = t[p], t[p + 1]
            acc += d[b][a] - d[a][b]
            rev[p + 1] = acc

    def _rewrite(self, lo: int, new: list[int]) -> None:
        """Put ``new`` at positions ``lo .. lo+len(new)-1`` and update the indexes."""
        t, pos = self.t, self.pos
        t[lo:lo + len(new)] = new
        for p in range(lo, lo + len(new)):
            pos[t[p]] = p
        self._refresh_rev(lo - 1)

    def restore(self, tour: list[int], value: float) -> None:
        """Go back to a saved tour and its cost, with nothing queued."""
        self.queue.clear()
        self.queued = [False] * len(self.queued)
        self.t = tour
        for p, u in enumerate(tour):
            self.pos[u] = p
        self._refresh_rev(0)
        self.value = value

    # -- moves ---------------------------------------------------------------
    def _try_2opt(self, pa: int, pc: int) -> bool:
        """Reversals that create the arc between the units at ``pa`` and ``pc``."""
        d, t, gap = self.d, self.t, self.gap
        x, y = (pa, pc) if pa < pc else (pc, pa)
        for i, j in ((x, y), (x - 1, y - 1)):
            if i < 0 or j >= self.size - 1 or j - i < 2:
                continue
            g = gap[i + 1]
            if g == FIXED or gap[j] != g:
                continue
            a, b, c, e = t[i], t[i + 1], t[j], t[j + 1]
            delta = d[a][c] + d[b][e] - d[a][b] - d[c][e]
            if self.asym:
                delta += self.rev[j] - self.rev[i + 1]
            if delta < -self.eps:
                self._rewrite(i + 1, t[i + 1:j + 1][::-1])
                self.value += delta
                for u in (a, b, c, e):
                    self._push(u)
                return True
        return False

    def _or_move(self, s: int, e: int, k: int, reverse: bool) -> bool:
        """Move positions ``s..e`` between ``k`` and ``k+1`` if that improves the cost."""
        size, gap, t, d = self.size, self.gap, self.t, self.d
        if s < 1 or e > size - 2 or k < 0 or k >= size - 1 or s - 1 <= k <= e:
            return False
        lo, hi = (s, k) if k > e else (k + 1, e)
        g = gap[lo]
        if g == FIXED or gap[hi] != g:
            return False
        p, f, last, nx, u, v = t[s - 1], t[s], t[e], t[e + 1], t[k], t[k + 1]
        delta = d[p][nx] - d[p][f] - d[last][nx] - d[u][v]
        if reverse:
            delta += d[u][last] + d[f][v]
            if self.asym:
                delta += self.rev[e] - self.rev[s]
        else:
            delta += d[u][f] + d[last][v]
        if delta >= -self.eps:
            return False
        seg = t[s:e + 1]
        if reverse:
            seg.reverse()
        if k > e:
            self._rewrite(s, t[e + 1:k + 1] + seg)
        else:
            self._rewrite(k + 1, seg + t[k + 1:s])
        self.value += delta
        for w in (p, f, last, nx, u, v):
            self._push(w)
        return True

    def _try_or_opt(self, pa: int, pc: int) -> bool:
        """Relocate a short segment that starts or ends at ``pa`` next to ``pc``."""
        for length in range(1, _MAX_OR_SEGMENT + 1):
            e = pa + length - 1
            if self._or_move(pa, e, pc, False) or self._or_move(pa, e, pc - 1, True):
                return True
            if length > 1:
                s = pa - length + 1
                if self._or_move(s, pa, pc - 1, False) or self._or_move(s, pa, pc, True):
                    return True
        return False

    def _swap_delta(self, p: int, q: int) -> float:
        """Cost change of exchanging the units at positions ``p < q``."""
        d, t = self.d, self.t
        a, b = t[p], t[q]
        before, after = t[p - 1], t[q + 1]
        if q == p + 1:
            return (d[before][b] + d[b][a] + d[a][after]
                    - d[before][a] - d[a][b] - d[b][after])
        pn, qp = t[p + 1], t[q - 1]
        return (d[before][b] + d[b][pn] + d[qp][a] + d[a][after]
                - d[before][a] - d[a][pn] - d[qp][b] - d[b][after])

    def _swap(self, p: int, q: int, delta: float) -> None:
        t = self.t
        touched = {t[p - 1], t[p], t[p + 1], t[q - 1], t[q], t[q + 1]}
        t[p], t[q] = t[q], t[p]
        self.pos[t[p]], self.pos[t[q]] = p, q
        self._refresh_rev(p - 1)
        self.value += delta
        for u in touched:
            self._push(u)

    def _try_swap(self, pa: int, pc: int) -> bool:
        """Swap the unit at ``pa`` with a same-size unit beside ``pc``."""
        gap, t = self.gap, self.t
        if gap[pa] == FIXED:
            return False
        for q in (pc - 1, pc + 1):
            if (q == pa or not 0 < q < self.size - 1 or gap[q] == FIXED
                    or self.sizes[t[q]] != self.sizes[t[pa]]):
                continue
            p, r = (pa, q) if pa < q else (q, pa)
            delta = self._swap_delta(p, r)
            if delta < -self.eps:
                self._swap(p, r, delta)
                return True
        return False

    def _improve_unit(self, a: int) -> bool:
        """Apply the first improving move around unit ``a``."""
        d, t, pos = self.d, self.t, self.pos
        pa = pos[a]
        bound = d[a][t[pa + 1]] if pa < self.size - 1 else 0.0
        if pa > 0:
            bound = max(bound, d[t[pa - 1]][a])
        for c, w in zip(self.nb[a], self.nbw[a]):
            if w >= bound:
                break
            pc = pos[c]
            if (self._try_2opt(pa, pc) or self._try_or_opt(pa, pc)
                    or (self.multi_gap and self._try_swap(pa, pc))):
                return True
        return False

    def descend(self, deadline: float) -> bool:
        """Run local search until no unit improves; False if the deadline cut it short."""
        queue, queued = self.queue, self.queued
        steps = 0
        while queue:
            steps += 1
            if not steps & 31 and time.perf_counter() > deadline:
                return False
            a = queue.popleft()
            queued[a] = False
            if self._improve_unit(a):
                self._push(a)
        return True

    # -- perturbation --------------------------------------------------------
    def kick(self) -> bool:
        """Perturb the tour; False when no perturbation is possible."""
        rng = self.rng
        if self.multi_gap and rng.random() < 0.5 and self._kick_swap():
            return True
        wide = [(lo, hi) for lo, hi in self.gap_ranges if hi > lo]
        if not wide:
            return self.multi_gap and self._kick_swap()
        lo, hi = rng.choices(wide, weights=[hi - lo for lo, hi in wide])[0]
        p1 = rng.randint(lo, hi - 1)
        p2 = p1 + rng.randint(1, min(_MAX_KICK_SEGMENT, hi - p1))
        p3 = p2 + rng.randint(1, min(_MAX_KICK_SEGMENT, hi + 1 - p2))
        d, t = self.d, self.t
        a, b, c, e, f, g = t[p1 - 1], t[p1], t[p2 - 1], t[p2], t[p3 - 1], t[p3]
        self.value += d[a][e] + d[f][b] + d[c][g] - d[a][b] - d[c][e] - d[f][g]
        self._rewrite(p1, t[p2:p3] + t[p1:p2])
        for u in (a, b, c, e, f, g):
            self._push(u)
        return True

    def _kick_swap(self) -> bool:
        """Swap two random equal-size units in different gaps."""
        free = [p for p, g in enumerate(self.gap) if g != FIXED]
        p = self.rng.choice(free)
        size_p = self.sizes[self.t[p]]
        others = [q for q in free if self.gap[q] != self.gap[p] and self.sizes[self.t[q]] == size_p]
        if not others:
            return False
        q = self.rng.choice(others)
        p, q = min(p, q), max(p, q)
        self._swap(p, q, self._swap_delta(p, q))
        return True


def _gap_ranges(gap_of_pos: Sequence[int]) -> list[tuple[int, int]]:
    """Inclusive position ranges of the gaps."""
    ranges: list[tuple[int, int]] = []
    for p, g in enumerate(gap_of_pos):
        if g == FIXED:
            continue
        if ranges and gap_of_pos[p - 1] == g:
            ranges[-1] = (ranges[-1][0], p)
        else:
            ranges.append((p, p))
    return ranges


def _candidate_lists(cost: np.ndarray) -> tuple[list[list[int]], list[list[float]]]:
    """Each unit's nearest units (by the cheaper direction), nearest first, and those costs."""
    near = np.minimum(cost, cost.T).astype(float)
    np.fill_diagonal(near, np.inf)
    k = min(_NEIGHBOURS, len(cost) - 1)
    idx = np.argsort(near, axis=1, kind="stable")[:, :k]
    return idx.tolist(), np.take_along_axis(near, idx, axis=1).tolist()


def iterated_local_search(cost: np.ndarray, tour: Sequence[int], gap_of_pos: Sequence[int],
                          sizes: Sequence[int], *, deadline: float, seed: int,
                          patience: int) -> list[int]:
    """Improve ``tour`` (unit ids, fixed ends) until ``deadline`` or stagnation.

    ``cost[u][v]`` is the cost of going from unit ``u`` to unit ``v``; ``sizes``
    gives each unit's number of stops; ``gap_of_pos`` is described in the module
    docstring. Returns the best tour found (never worse than ``tour``).
    """
    search = _Search(cost, tour, gap_of_pos, sizes, random.Random(seed))
    search.descend(deadline)
    idle = 0
    while idle < patience and time.perf_counter() < deadline:
        saved, saved_value = search.t[:], search.value
        if not search.kick():
            break
        search.descend(deadline)
        if search.value < saved_value - search.eps:
            idle = 0
            continue
        idle += 1
        if search.value > saved_value + search.eps:
            search.restore(saved, saved_value)
    return search.t
