"""Visit-order optimisation: exact for small routes, iterated local search beyond.

:func:`optimize` orders *all* ``n`` stops of a cost matrix between a fixed start
and end (``start == end`` is a round trip). Optional constraints pin a stop to a
position of the order or keep a group of stops together, in the given order.

How it works:

1. Validate every argument; anything wrong raises :class:`InputError` whose
   ``solver.*`` message says what is wrong and how to fix it.
2. Normalise the constraints. A group holding the start (or end) is the same
   as pinning its other stops right after the start (or before the end); the
   remaining groups are contracted into *units* (a unit is a stop or a group
   of stops travelled in the given order), and a pinned stop inside a group pins
   the group's first position.
3. Order the units: nothing to choose (≤ 1 unit) → ``"trivial"``; up to
   :data:`EXACT_MAX_UNITS` units → Held-Karp dynamic programming
   (:mod:`._exact`, proven optimal, with k-best alternatives); beyond → iterated
   local search (:mod:`._heuristics`) within ``time_limit_s``, never returning
   anything worse than the order as entered. With pinned stops the heuristic
   first finds a feasible layout of unit sizes between the pins (deciding
   feasibility exactly) and keeps that layout's sizes per gap while it searches.
4. Expand units back to stops, check the result against every constraint, and
   report it with its cost.
"""

from __future__ import annotations

import math
import numbers
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from navigo_core.errors import InputError, ResultCheckError
from navigo_core.route._exact import held_karp
from navigo_core.route._heuristics import FIXED, iterated_local_search

EXACT_MAX_UNITS = 16
"""Largest number of units (stops to order) solved exactly."""

MAX_K_BEST = 10
"""Most alternatives :func:`optimize` returns (the k-best table grows with k)."""

MAX_COST = 1e15
"""Largest accepted matrix entry: keeps sums of costs exact enough in floats."""

MAX_POINTS = 1000
"""Largest matrix :func:`optimize` accepts (points, start and end included). Within it the time limit holds
and memory stays near 120 MB (the heuristic keeps the matrix as Python lists); a route request holds at
most ``ROUTE_MAX_STOPS`` ≤ 500 stops. A bigger matrix is refused before it is even converted."""

_DEADLINE_RESERVE_S = 0.01
"""Part of the time limit kept for expanding and checking the result."""


@dataclass(frozen=True)
class Alternative:
    """Another complete order and its cost."""

    order: list[int]
    cost: float


@dataclass(frozen=True)
class SolveResult:
    """The solver's answer.

    ``order`` runs from the start to the end inclusive (a round trip lists the
    start at both ends); ``cost`` is the sum of the matrix along it; ``optimal``
    is True only when optimality is proven (under the constraints given);
    ``method`` is ``"trivial"``, ``"held-karp"`` or ``"heuristic"``;
    ``alternatives`` holds the next-best distinct orders, cheapest first (exact
    method only).
    """

    order: list[int]
    cost: float
    optimal: bool
    method: str
    alternatives: list[Alternative] = field(default_factory=list)
    elapsed_s: float = 0.0


@dataclass(frozen=True)
class _Problem:
    """A validated problem with constraints normalised to units.

    ``units[u]`` lists the stops unit ``u`` stands for; ``unit_pins[u]`` is the
    position its first stop must take, or -1. ``node_pins`` holds every pinned
    stop (given or implied by a group) and ``groups`` the groups not touching
    the start or end; both serve the final check.
    """

    matrix: np.ndarray
    start: int
    end: int
    units: list[list[int]]
    unit_pins: list[int]
    node_pins: dict[int, int]
    groups: list[list[int]]

    @property
    def n(self) -> int:
        return len(self.matrix)

    @property
    def last_position(self) -> int:
        """Position of the end in the order (the order has one more entry on a round trip)."""
        return self.n if self.start == self.end else self.n - 1


def optimize(matrix: Any, start: Any, end: Any, time_limit_s: Any = 1.0, *, k_best: Any = 0,
             pinned: Any = None, keep_together: Any = None, seed: Any = 0) -> SolveResult:
    """The cheapest order visiting every stop of ``matrix`` once, from ``start`` to ``end``.

    ``matrix[a][b]`` is the cost of going from stop ``a`` to stop ``b`` (square,
    possibly asymmetric, diagonal ignored). ``start == end`` asks for a round
    trip. ``time_limit_s`` bounds the heuristic used beyond
    :data:`EXACT_MAX_UNITS` stops to order; ``k_best`` asks for that many
    next-best orders (exact method only); ``pinned`` maps a stop to its position
    in the order (1 = first stop after the start); ``keep_together`` lists
    groups of stops that must follow each other in the given order; ``seed``
    makes the heuristic repeatable (exactly so when it stops by stagnation
    rather than by the clock). The exact method ignores ``time_limit_s``: it
    takes well under 0.1 s at 16 units, about 1 s with ``k_best=10``.

    Raises :class:`InputError` for any invalid argument or unsatisfiable
    constraints.
    """
    started = time.perf_counter()
    limit = _time_limit(time_limit_s)
    k = _whole(k_best, "solver.k_best", low=0, high=MAX_K_BEST, limit=MAX_K_BEST)
    rng_seed = _whole(seed, "solver.seed")
    problem = _build_problem(_as_matrix(matrix), start, end, pinned, keep_together)

    alternatives: list[Alternative] = []
    if len(problem.units) <= 1:
        order, optimal, method = _expand(problem, range(len(problem.units))), True, "trivial"
        if not _satisfies(problem, order):
            raise InputError("solver.infeasible")
    elif len(problem.units) <= EXACT_MAX_UNITS:
        order, *others = _solve_exact(problem, k + 1)
        optimal, method = True, "held-karp"
        alternatives = [Alternative(o, _cost(problem.matrix, o)) for o in others]
    else:
        order = _solve_heuristic(problem, started + limit - _DEADLINE_RESERVE_S, rng_seed)
        optimal, method = False, "heuristic"

    _check(problem, order)
    return SolveResult(order=order, cost=_cost(problem.matrix, order), optimal=optimal, method=method,
                       alternatives=alternatives, elapsed_s=time.perf_counter() - started)


# -- validation ------------------------------------------------------------------
def _as_matrix(matrix: Any) -> np.ndarray:
    """The matrix as a float array with a zero diagonal, or InputError."""
    if matrix is None or isinstance(matrix, (str, bytes, Mapping)):
        raise InputError("solver.matrix_type", kind=type(matrix).__name__)
    try:
        size = len(matrix)
    except TypeError:
        size = 0
    if size > MAX_POINTS:  # before np.asarray: converting 5,000 nested lists alone takes seconds and gigabytes
        raise InputError("solver.matrix_too_big", n=size, max=MAX_POINTS)
    try:
        raw = np.asarray(matrix)
    except (ValueError, TypeError):
        raise InputError("solver.matrix_ragged") from None
    if raw.size == 0:
        raise InputError("solver.matrix_empty")
    if raw.ndim != 2:
        raise InputError("solver.matrix_not_2d", ndim=raw.ndim)
    rows, cols = raw.shape
    if rows != cols:
        raise InputError("solver.matrix_not_square", rows=rows, cols=cols)
    if rows > MAX_POINTS:
        raise InputError("solver.matrix_too_big", n=rows, max=MAX_POINTS)
    if raw.dtype.kind in "iuf":
        values = raw.astype(float)
    elif raw.dtype.kind == "O":
        values = np.empty(raw.shape)
        for (row, col), x in np.ndenumerate(raw):
            if not isinstance(x, numbers.Real) or isinstance(x, (bool, np.bool_)):
                raise InputError("solver.matrix_not_numeric", value=_show(x))
            try:
                values[row, col] = float(x)
            except OverflowError:
                raise InputError("solver.matrix_too_large", row=row, col=col, value=_show(x),
                                 limit=MAX_COST) from None
    else:
        raise InputError("solver.matrix_not_numeric", value=_show(raw.flat[0]))
    np.fill_diagonal(values, 0.0)
    for check, code in ((np.isnan, "solver.matrix_nan"), (np.isinf, "solver.matrix_inf"),
                        (lambda v: v < 0, "solver.matrix_negative"),
                        (lambda v: v > MAX_COST, "solver.matrix_too_large")):
        hits = np.argwhere(check(values))
        if len(hits):
            row, col = (int(x) for x in hits[0])
            raise InputError(code, row=row, col=col, value=values[row, col], limit=MAX_COST)
    return values


def _show(value: Any) -> str:
    """A short printable form of a user's value for a message."""
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _whole(value: Any, code: str, *, low: int | None = None, high: int | None = None,
           **params: Any) -> int:
    """``value`` as an int within ``[low, high]``, else InputError ``code``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise InputError(code, value=_show(value), **params)
    number = int(value)
    if (low is not None and number < low) or (high is not None and number > high):
        raise InputError(code, value=number, **params)
    return number


def _time_limit(value: Any) -> float:
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real)
            or not math.isfinite(float(value)) or float(value) <= 0):
        raise InputError("solver.time_limit", value=_show(value))
    return float(value)


def _build_problem(matrix: np.ndarray, start: Any, end: Any, pinned: Any,
                   keep_together: Any) -> _Problem:
    n = len(matrix)
    s = _whole(start, "solver.start", low=0, high=n - 1, last=n - 1)
    e = _whole(end, "solver.end", low=0, high=n - 1, last=n - 1)
    last_pos = n if s == e else n - 1
    pins = _pins(pinned, n, s, e, last_pos)
    groups = _groups(keep_together, n)
    inner_groups = []
    for group in groups:
        if s in group or e in group:
            _pin_group_at_ends(group, n, s, e, last_pos, pins)
        elif len(group) > 1:
            inner_groups.append(group)
    _check_distinct_positions(pins)

    grouped = {v for g in inner_groups for v in g}
    units = inner_groups + [[v] for v in range(n) if v not in (s, e) and v not in grouped]
    unit_pins = [_unit_pin(unit, pins, last_pos) for unit in units]
    return _Problem(matrix=matrix, start=s, end=e, units=units, unit_pins=unit_pins,
                    node_pins=pins, groups=inner_groups)


def _pins(pinned: Any, n: int, s: int, e: int, last_pos: int) -> dict[int, int]:
    if pinned is None:
        return {}
    if not isinstance(pinned, Mapping):
        raise InputError("solver.pinned_type", value=type(pinned).__name__)
    pins: dict[int, int] = {}
    for node_raw, pos_raw in pinned.items():
        node = _whole(node_raw, "solver.pinned_node", low=0, high=n - 1, last=n - 1)
        if node in (s, e):
            raise InputError("solver.pinned_endpoint", node=node)
        pins[node] = _whole(pos_raw, "solver.pinned_position", low=1, high=last_pos - 1,
                            node=node, last=last_pos - 1)
    return pins


def _groups(keep_together: Any, n: int) -> list[list[int]]:
    if keep_together is None:
        return []
    if (isinstance(keep_together, (str, bytes, Mapping))
            or not isinstance(keep_together, (Sequence, np.ndarray))):
        raise InputError("solver.groups_type", value=type(keep_together).__name__)
    seen: set[int] = set()
    groups = []
    for raw in keep_together:
        if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, (Sequence, np.ndarray)):
            raise InputError("solver.groups_type", value=type(raw).__name__)
        group = [_whole(v, "solver.group_node", low=0, high=n - 1, last=n - 1) for v in raw]
        for v in group:
            if v in seen:
                raise InputError("solver.group_duplicate", node=v)
            seen.add(v)
        groups.append(group)
    return groups


def _add_pin(pins: dict[int, int], node: int, position: int) -> None:
    if pins.setdefault(node, position) != position:
        raise InputError("solver.pinned_conflict", node=node, first=pins[node], second=position)


def _pin_group_at_ends(group: list[int], n: int, s: int, e: int, last_pos: int,
                       pins: dict[int, int]) -> None:
    """Turn a group holding the start or end into pins right after / before it."""
    if s != e:  # an open path: the start opens the group, the end closes it
        if s in group and group[0] != s:
            raise InputError("solver.group_start_not_first", group=str(group), node=s)
        if e in group and group[-1] != e:
            raise InputError("solver.group_end_not_last", group=str(group), node=e)
        if s in group and e in group and len(group) != n:
            raise InputError("solver.group_start_end", group=str(group), count=len(group), total=n)
    if s == e:  # a round trip's group may wrap around the start
        at = group.index(s)
        after, before = group[at + 1:], group[:at]
    else:
        inner = [v for v in group if v not in (s, e)]
        after, before = (inner, []) if s in group else ([], inner)
    for position, v in [*enumerate(after, start=1),
                        *((last_pos - i, v) for i, v in enumerate(reversed(before), start=1))]:
        if not 1 <= position <= last_pos - 1:
            raise InputError("solver.group_range", group=str(group), max=last_pos - 1)
        _add_pin(pins, v, position)


def _check_distinct_positions(pins: dict[int, int]) -> None:
    taken: dict[int, int] = {}
    for node, position in sorted(pins.items()):
        other = taken.setdefault(position, node)
        if other != node:
            raise InputError("solver.pinned_clash", first=other, second=node, position=position)


def _unit_pin(unit: list[int], pins: dict[int, int], last_pos: int) -> int:
    """The position a unit's first stop must take (-1 when free)."""
    firsts = {pins[v] - i for i, v in enumerate(unit) if v in pins}
    if not firsts:
        return -1
    if len(firsts) > 1:
        raise InputError("solver.group_pins", group=str(unit))
    first = firsts.pop()
    if first < 1 or first + len(unit) - 1 > last_pos - 1:
        raise InputError("solver.group_range", group=str(unit), max=last_pos - 1)
    return first


# -- solving -----------------------------------------------------------------------
def _unit_costs(problem: _Problem) -> np.ndarray:
    """Cost between units; index ``m`` is the start and ``m+1`` the end."""
    firsts = [u[0] for u in problem.units] + [problem.start, problem.end]
    lasts = [u[-1] for u in problem.units] + [problem.start, problem.end]
    return problem.matrix[np.ix_(lasts, firsts)]


def _expand(problem: _Problem, unit_order: Sequence[int]) -> list[int]:
    return [problem.start, *(v for u in unit_order for v in problem.units[u]), problem.end]


def _solve_exact(problem: _Problem, k: int) -> list[list[int]]:
    ranked = held_karp(_unit_costs(problem), np.array([len(u) for u in problem.units]),
                       np.array(problem.unit_pins), k)
    if not ranked:
        raise InputError("solver.infeasible")
    return [_expand(problem, seq) for _, seq in ranked]


def _solve_heuristic(problem: _Problem, deadline: float, seed: int) -> list[int]:
    """Iterated local search from a nearest-neighbour order that respects the pins."""
    m = len(problem.units)
    costs = _unit_costs(problem)
    slots = _slot_plan(problem)
    sizes = np.array([len(u) for u in problem.units] + [1, 1])
    free = np.array([pin < 0 for pin in problem.unit_pins] + [False, False])
    tour, gap_of_pos, gap = [m], [FIXED], 0
    for kind, value in slots:
        if kind == "pinned":
            tour.append(value)
            gap_of_pos.append(FIXED)
            if gap_of_pos[-2] != FIXED:
                gap += 1
            continue
        nearest = int(np.argmin(np.where(free & (sizes == value), costs[tour[-1]], np.inf)))
        free[nearest] = False
        tour.append(nearest)
        gap_of_pos.append(gap)
    tour.append(m + 1)
    gap_of_pos.append(FIXED)
    patience = 2000 + 20 * m  # kicks in a row without improvement before stopping early
    found = _expand(problem, iterated_local_search(costs, tour, gap_of_pos, sizes.tolist(), deadline=deadline,
                                                   seed=seed, patience=patience)[1:-1])
    entered = [problem.start, *(v for v in range(problem.n) if v not in (problem.start, problem.end)),
               problem.end]
    if _satisfies(problem, entered) and _cost(problem.matrix, entered) < _cost(problem.matrix, found):
        return entered
    return found


def _slot_plan(problem: _Problem) -> list[tuple[str, int]]:
    """A feasible layout: ``("pinned", unit)`` and ``("free", size)`` slots in order.

    Free units of equal size are interchangeable, so a depth-first search over
    how many of each size are used so far (which also determines the current
    position) decides feasibility exactly; dead states are memoised.
    """
    last = problem.last_position - 1
    pinned_at = {pin: u for u, pin in enumerate(problem.unit_pins) if pin >= 0}
    pinned_len = {pin: len(problem.units[u]) for pin, u in pinned_at.items()}
    counts = Counter(len(u) for u, pin in zip(problem.units, problem.unit_pins) if pin < 0)
    sizes = sorted(counts)

    def settle(p: int) -> int:
        while p in pinned_len:
            p += pinned_len[p]
        return p

    def options(rem: tuple[int, ...], p: int) -> list[int]:
        return [i for i, size in enumerate(sizes) if rem[i] and p + size - 1 <= last
                and not any(q in pinned_len for q in range(p + 1, p + size))]

    rem0 = tuple(counts[size] for size in sizes)
    p0 = settle(1)
    stack = [(rem0, p0, options(rem0, p0))]
    chosen: list[int] = []
    dead: set[tuple[int, ...]] = set()
    while stack:
        rem, p, opts = stack[-1]
        if not any(rem) and p == last + 1:
            break
        while opts:
            i = opts.pop()
            nxt = rem[:i] + (rem[i] - 1,) + rem[i + 1:]
            if nxt not in dead:
                p_next = settle(p + sizes[i])
                stack.append((nxt, p_next, options(nxt, p_next)))
                chosen.append(sizes[i])
                break
        else:
            dead.add(rem)
            stack.pop()
            if chosen:
                chosen.pop()
    else:
        raise InputError("solver.infeasible")

    slots: list[tuple[str, int]] = []
    p, free_sizes = 1, iter(chosen)
    while p <= last:
        if p in pinned_at:
            slots.append(("pinned", pinned_at[p]))
            p += pinned_len[p]
        else:
            size = next(free_sizes)
            slots.append(("free", size))
            p += size
    return slots


# -- checking ----------------------------------------------------------------------
def _cost(matrix: np.ndarray, order: Sequence[int]) -> float:
    return float(sum(matrix[a, b] for a, b in zip(order, order[1:])))


def _satisfies(problem: _Problem, order: list[int]) -> bool:
    """Whether ``order`` keeps every pin and every group."""
    if any(order[p] != v for v, p in problem.node_pins.items()):
        return False
    where = {v: i for i, v in enumerate(order[:-1])}
    return all(where[g[i + 1]] == where[g[i]] + 1 for g in problem.groups for i in range(len(g) - 1))


def _check(problem: _Problem, order: list[int]) -> None:
    """Raise ResultCheckError unless ``order`` is a valid answer (a bug otherwise)."""
    n, s, e = problem.n, problem.start, problem.end
    visits = order[:-1] if s == e else order
    if (order[0] != s or order[-1] != e or len(order) != problem.last_position + 1
            or sorted(visits) != list(range(n)) or not _satisfies(problem, order)):
        raise ResultCheckError(detail=f"invalid order {order}")
