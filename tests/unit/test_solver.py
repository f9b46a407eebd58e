"""Route solver: exactness against brute force, constraints, heuristic, and input fuzzing."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from navigo_core.errors import InputError
from navigo_core.i18n import catalog
from navigo_core.route import SolveResult, optimize
from navigo_core.route import solver as solver_module

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- helpers -------------------------------------------------------------------------
def path_cost(matrix: np.ndarray, order: Sequence[int]) -> float:
    return float(sum(matrix[a][b] for a, b in zip(order, order[1:])))


def follows(order: Sequence[int], x: int, y: int) -> bool:
    """Whether ``y`` comes right after ``x`` somewhere in ``order``."""
    return any(a == x and b == y for a, b in zip(order, order[1:]))


def brute_force(matrix: np.ndarray, start: int, end: int, pinned: dict[int, int] | None = None,
                groups: list[list[int]] | None = None) -> list[tuple[float, list[int]]]:
    """Every feasible order with its cost, cheapest first."""
    n = len(matrix)
    middle = [v for v in range(n) if v not in (start, end)]
    found = []
    for perm in itertools.permutations(middle):
        order = [start, *perm, end]
        if pinned and any(order[p] != v for v, p in pinned.items()):
            continue
        if groups and not all(follows(order, g[i], g[i + 1]) for g in groups for i in range(len(g) - 1)):
            continue
        found.append((path_cost(matrix, order), order))
    found.sort(key=lambda item: item[0])
    return found


def entered_order(n: int, start: int, end: int) -> list[int]:
    return [start, *(v for v in range(n) if v not in (start, end)), end]


def assert_valid(result: SolveResult, matrix: np.ndarray, start: int, end: int) -> None:
    n = len(matrix)
    order = result.order
    assert order[0] == start and order[-1] == end
    visits = order[:-1] if start == end else order
    assert sorted(visits) == list(range(n))
    assert result.cost == pytest.approx(path_cost(matrix, order))
    assert result.elapsed_s >= 0


def random_matrix(rng: np.random.Generator, n: int, symmetric: bool) -> np.ndarray:
    m = rng.integers(1, 100, size=(n, n)).astype(float)
    if symmetric:
        m = m + m.T
    np.fill_diagonal(m, 0)
    return m


def circle_matrix(n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[int]]:
    """Points on a circle under shuffled labels, and the labels in circle order."""
    labels = rng.permutation(n)
    xy = np.zeros((n, 2))
    for k, label in enumerate(labels):
        xy[label] = (math.cos(2 * math.pi * k / n), math.sin(2 * math.pi * k / n))
    return np.linalg.norm(xy[:, None, :] - xy[None, :, :], axis=2), [int(v) for v in labels]


# -- exact solver ---------------------------------------------------------------------
@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("round_trip", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_exact_equals_brute_force_with_alternatives(symmetric: bool, round_trip: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 4 + seed % 5  # 4..8 stops
    matrix = random_matrix(rng, n, symmetric)
    start = int(rng.integers(n))
    end = start if round_trip else (start + 1 + int(rng.integers(n - 1))) % n
    result = optimize(matrix, start, end, k_best=4)
    expected = brute_force(matrix, start, end)
    assert_valid(result, matrix, start, end)
    assert result.optimal and result.method == "held-karp"
    assert result.cost == pytest.approx(expected[0][0])
    assert [a.cost for a in result.alternatives] == pytest.approx([c for c, _ in expected[1:5]])
    orders = [result.order] + [a.order for a in result.alternatives]
    assert len({tuple(o) for o in orders}) == len(orders)
    for alt in result.alternatives:
        assert alt.cost == pytest.approx(path_cost(matrix, alt.order))


@st.composite
def small_problems(draw: st.DrawFn) -> tuple[np.ndarray, int, int]:
    n = draw(st.integers(1, 7))
    values = draw(st.lists(st.integers(0, 30), min_size=n * n, max_size=n * n))
    matrix = np.array(values, dtype=float).reshape(n, n)
    np.fill_diagonal(matrix, 0)
    start = draw(st.integers(0, n - 1))
    end = draw(st.integers(0, n - 1))
    return matrix, start, end


@FUZZ
@given(small_problems(), st.integers(0, 3))
def test_exact_matches_brute_force_property(problem: tuple[np.ndarray, int, int], k: int) -> None:
    matrix, start, end = problem
    result = optimize(matrix, start, end, k_best=k)
    expected = brute_force(matrix, start, end)
    assert_valid(result, matrix, start, end)
    assert result.optimal
    assert result.cost == pytest.approx(expected[0][0])
    assert [a.cost for a in result.alternatives] == pytest.approx([c for c, _ in expected[1:k + 1]])


def test_trivial_cases() -> None:
    one = optimize([[5]], 0, 0)
    assert (one.order, one.cost, one.optimal, one.method) == ([0, 0], 0.0, True, "trivial")
    two = optimize([[0, 3], [4, 0]], 1, 0)
    assert (two.order, two.cost, two.optimal, two.method) == ([1, 0], 4.0, True, "trivial")
    loop = optimize([[0, 3], [4, 0]], 0, 0, k_best=2)
    assert (loop.order, loop.cost, loop.method, loop.alternatives) == ([0, 1, 0], 7.0, "trivial", [])
    three = optimize([[0, 1, 2], [1, 0, 7], [2, 7, 0]], 0, 2)
    assert (three.order, three.cost, three.method) == ([0, 1, 2], 8.0, "trivial")


def test_diagonal_is_ignored() -> None:
    matrix = [[float("nan"), 1, 2], [1, -5, 3], [2, 3, float("inf")]]
    result = optimize(matrix, 0, 0)
    assert result.cost == pytest.approx(6.0)


@pytest.mark.parametrize("round_trip", [True, False])
def test_sixteen_intermediate_stops_are_exact(round_trip: bool) -> None:
    n = 17 if round_trip else 18
    matrix, circle = circle_matrix(n, np.random.default_rng(7))
    start, end = circle[0], circle[0] if round_trip else circle[1]
    result = optimize(matrix, start, end)
    assert_valid(result, matrix, start, end)
    assert result.optimal and result.method == "held-karp"
    perimeter = sum(matrix[a, b] for a, b in zip(circle, circle[1:] + circle[:1]))
    optimum = perimeter if round_trip else perimeter - matrix[circle[0], circle[1]]
    assert result.cost == pytest.approx(optimum)


def test_seventeen_intermediate_stops_use_the_heuristic() -> None:
    matrix, circle = circle_matrix(19, np.random.default_rng(3))
    result = optimize(matrix, circle[0], circle[1], time_limit_s=0.5)
    assert result.method == "heuristic" and not result.optimal
    assert_valid(result, matrix, circle[0], circle[1])
    perimeter = sum(matrix[a, b] for a, b in zip(circle, circle[1:] + circle[:1]))
    assert result.cost == pytest.approx(perimeter - matrix[circle[0], circle[1]])


# -- constraints ----------------------------------------------------------------------
@st.composite
def constrained_problems(draw: st.DrawFn) -> tuple[np.ndarray, int, int, dict[int, int], list[list[int]]]:
    matrix, start, end = draw(small_problems().filter(lambda p: len(p[0]) >= 3))
    n = len(matrix)
    last_position = n if start == end else n - 1
    middle = [v for v in range(n) if v not in (start, end)]
    pinned_nodes = draw(st.lists(st.sampled_from(middle), unique=True, max_size=2))
    pinned = {v: draw(st.integers(1, last_position - 1)) for v in pinned_nodes}
    shuffled = draw(st.permutations(list(range(n))))
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=3)))
    groups = [list(shuffled[a:b]) for a, b in zip([0, *cuts], [*cuts, n]) if b - a >= 2]
    groups = draw(st.lists(st.sampled_from(groups), unique_by=tuple, max_size=2)) if groups else []
    return matrix, start, end, pinned, groups


@FUZZ
@given(constrained_problems())
def test_constraints_are_respected_and_optimal(
        problem: tuple[np.ndarray, int, int, dict[int, int], list[list[int]]]) -> None:
    matrix, start, end, pinned, groups = problem
    expected = brute_force(matrix, start, end, pinned, groups)
    try:
        result = optimize(matrix, start, end, k_best=2, pinned=pinned, keep_together=groups)
    except InputError:
        assert not expected, "solver refused a satisfiable problem"
        return
    assert expected, "solver answered an unsatisfiable problem"
    assert_valid(result, matrix, start, end)
    assert result.optimal
    assert result.cost == pytest.approx(expected[0][0])
    assert [a.cost for a in result.alternatives] == pytest.approx([c for c, _ in expected[1:3]])
    for order in [result.order] + [a.order for a in result.alternatives]:
        assert all(order[p] == v for v, p in pinned.items())
        assert all(follows(order, g[i], g[i + 1]) for g in groups for i in range(len(g) - 1))


@pytest.mark.parametrize(("kwargs", "code"), [
    ({"pinned": {1: 2, 2: 2}}, "solver.pinned_clash"),
    ({"pinned": {1: 1}, "keep_together": [[0, 2, 1]]}, "solver.pinned_conflict"),
    ({"pinned": {1: 1, 2: 3}, "keep_together": [[1, 2]]}, "solver.group_pins"),
    ({"keep_together": [[1, 0]]}, "solver.group_start_not_first"),
    ({"keep_together": [[5, 2]]}, "solver.group_end_not_last"),
    ({"keep_together": [[0, 1, 5]]}, "solver.group_start_end"),
    ({"keep_together": [[1, 2], [2, 3]]}, "solver.group_duplicate"),
    ({"keep_together": [[1, 1]]}, "solver.group_duplicate"),
    ({"pinned": {3: 2, 4: 4}, "keep_together": [[1, 2]]}, "solver.infeasible"),
    ({"pinned": {1: 3}, "keep_together": [[1, 2, 3]]}, "solver.group_range"),
    ({"pinned": {0: 1}}, "solver.pinned_endpoint"),
    ({"pinned": {1: 5}}, "solver.pinned_position"),
    ({"pinned": {9: 1}}, "solver.pinned_node"),
    ({"pinned": [1, 2]}, "solver.pinned_type"),
    ({"keep_together": [1, 2]}, "solver.groups_type"),
    ({"keep_together": [[1, "x"]]}, "solver.group_node"),
])
def test_contradictory_or_invalid_constraints(kwargs: dict, code: str) -> None:
    matrix = random_matrix(np.random.default_rng(0), 6, symmetric=True)
    with pytest.raises(InputError) as info:
        optimize(matrix, 0, 5, **kwargs)
    assert info.value.code == code


def test_round_trip_group_may_wrap_around_the_start() -> None:
    matrix = random_matrix(np.random.default_rng(1), 6, symmetric=False)
    result = optimize(matrix, 0, 0, keep_together=[[4, 0, 2]])
    assert result.order[1] == 2 and result.order[-2] == 4
    assert result.cost == pytest.approx(brute_force(matrix, 0, 0, groups=[[4, 0, 2]])[0][0])


# -- heuristic ------------------------------------------------------------------------
@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("round_trip", [True, False])
def test_heuristic_is_valid_and_never_worse_than_entered(symmetric: bool, round_trip: bool) -> None:
    rng = np.random.default_rng(11)
    matrix = random_matrix(rng, 30, symmetric)
    start, end = (3, 3) if round_trip else (3, 17)
    result = optimize(matrix, start, end, time_limit_s=0.2)
    assert_valid(result, matrix, start, end)
    assert result.method == "heuristic" and not result.optimal and result.alternatives == []
    assert result.cost <= path_cost(matrix, entered_order(30, start, end))


def test_heuristic_falls_back_to_the_entered_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the search disabled, a nearest-neighbour trap loses to the order as entered."""
    monkeypatch.setattr(solver_module, "iterated_local_search", lambda cost, tour, *a, **k: list(tour))
    n = 20
    matrix = np.full((n, n), 10.0)
    for v in range(n - 1):
        matrix[v, v + 1] = 1.0
    matrix[0, 10] = 0.5  # nearest neighbour jumps here first and pays for it later
    result = optimize(matrix, 0, n - 1)
    assert result.order == list(range(n))
    assert result.cost == pytest.approx(n - 1)


def test_heuristic_finds_the_circle_optimum() -> None:
    matrix, circle = circle_matrix(60, np.random.default_rng(5))
    result = optimize(matrix, circle[0], circle[0], time_limit_s=1.0)
    perimeter = sum(matrix[a, b] for a, b in zip(circle, circle[1:] + circle[:1]))
    assert result.cost == pytest.approx(perimeter)


@pytest.mark.parametrize("seed", range(4))
def test_heuristic_solves_small_cases_optimally(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.setattr(solver_module, "EXACT_MAX_UNITS", 1)
    rng = np.random.default_rng(seed)
    matrix = random_matrix(rng, 8, symmetric=bool(seed % 2))
    end = 0 if seed < 2 else 7
    result = optimize(matrix, 0, end, time_limit_s=0.3, seed=seed)
    assert result.method == "heuristic"
    assert result.cost == pytest.approx(brute_force(matrix, 0, end)[0][0])


def test_heuristic_respects_constraints() -> None:
    rng = np.random.default_rng(2)
    n = 26
    matrix = random_matrix(rng, n, symmetric=False)
    pinned = {4: 3, 9: 10, 20: 24}
    groups = [[1, 2, 3], [10, 11], [21, 22, 23, 24]]
    result = optimize(matrix, 0, 25, time_limit_s=0.3, pinned=pinned, keep_together=groups)
    assert_valid(result, matrix, 0, 25)
    assert result.method == "heuristic"
    assert all(result.order[p] == v for v, p in pinned.items())
    assert all(follows(result.order, g[i], g[i + 1]) for g in groups for i in range(len(g) - 1))


@st.composite
def satisfiable_large_problems(draw: st.DrawFn) -> tuple[np.ndarray, int, int, dict[int, int], list[list[int]]]:
    """28–34 stops (over 16 units to order) with pins and groups read off a random order."""
    n = draw(st.integers(28, 34))
    matrix = random_matrix(np.random.default_rng(draw(st.integers(0, 10**6))), n, draw(st.booleans()))
    witness = list(draw(st.permutations(list(range(n)))))
    round_trip = draw(st.booleans())
    order = witness + witness[:1] if round_trip else witness
    groups: list[list[int]] = []
    for _ in range(draw(st.integers(0, 3))):
        at, length = draw(st.integers(0, len(order) - 2)), draw(st.integers(2, 4))
        group = order[at:at + length]
        if len(set(group)) == len(group) >= 2 and not {v for g in groups for v in g} & set(group):
            groups.append(group)
    positions = draw(st.lists(st.integers(1, len(order) - 2), unique=True, max_size=3))
    return matrix, order[0], order[-1], {order[p]: p for p in positions}, groups


@settings(max_examples=25, deadline=None)
@given(satisfiable_large_problems())
def test_heuristic_respects_satisfiable_constraints(
        problem: tuple[np.ndarray, int, int, dict[int, int], list[list[int]]]) -> None:
    matrix, start, end, pinned, groups = problem
    result = optimize(matrix, start, end, time_limit_s=0.03, pinned=pinned, keep_together=groups)
    assert_valid(result, matrix, start, end)
    assert result.method == "heuristic"
    assert all(result.order[p] == v for v, p in pinned.items())
    assert all(follows(result.order, g[i], g[i + 1]) for g in groups for i in range(len(g) - 1))


def test_heuristic_reports_infeasible_constraints() -> None:
    matrix = random_matrix(np.random.default_rng(4), 36, symmetric=True)
    # 19 units, so the heuristic's feasibility search decides: position 3, between
    # the pinned stops 5 (position 2) and 6 (position 4), is the only free position
    # there, and every free unit is a pair.
    groups = [[v, v + 1] for v in range(7, 35, 2)] + [[1, 2]]
    with pytest.raises(InputError) as info:
        optimize(matrix, 0, 35, pinned={5: 2, 6: 4, 3: 1, 4: 5}, keep_together=groups)
    assert info.value.code == "solver.infeasible"


def test_heuristic_is_repeatable_for_a_seed() -> None:
    matrix = random_matrix(np.random.default_rng(8), 20, symmetric=True)
    first = optimize(matrix, 0, 19, time_limit_s=10, seed=3)
    second = optimize(matrix, 0, 19, time_limit_s=10, seed=3)
    assert first.order == second.order  # with a 10 s limit: stopped by stagnation, so the seed decides


# -- validation -----------------------------------------------------------------------
@pytest.mark.parametrize(("matrix", "code"), [
    ([], "solver.matrix_empty"),
    ([[]], "solver.matrix_empty"),
    ([[0, 1], [1]], "solver.matrix_ragged"),
    ([[0, 1, 2], [1, 0, 3]], "solver.matrix_not_square"),
    ([0, 1], "solver.matrix_not_2d"),
    ([[[0]]], "solver.matrix_not_2d"),
    ("matrix", "solver.matrix_type"),
    (None, "solver.matrix_type"),
    ([[0, "1"], [1, 0]], "solver.matrix_not_numeric"),
    ([[0, None], [1, 0]], "solver.matrix_not_numeric"),
    ([[0, float("nan")], [1, 0]], "solver.matrix_nan"),
    ([[0, float("inf")], [1, 0]], "solver.matrix_inf"),
    ([[0, -1], [1, 0]], "solver.matrix_negative"),
    ([[0, 10**400], [1, 0]], "solver.matrix_too_large"),
    ([[0, 1e300], [1, 0]], "solver.matrix_too_large"),
])
def test_bad_matrices(matrix: object, code: str) -> None:
    with pytest.raises(InputError) as info:
        optimize(matrix, 0, 0)
    assert info.value.code == code


@pytest.mark.parametrize(("kwargs", "code"), [
    ({"start": 3}, "solver.start"),
    ({"start": -1}, "solver.start"),
    ({"start": 1.0}, "solver.start"),
    ({"end": "2"}, "solver.end"),
    ({"end": True}, "solver.end"),
    ({"time_limit_s": 0}, "solver.time_limit"),
    ({"time_limit_s": float("nan")}, "solver.time_limit"),
    ({"k_best": -1}, "solver.k_best"),
    ({"k_best": 11}, "solver.k_best"),
    ({"seed": "a"}, "solver.seed"),
])
def test_bad_arguments(kwargs: dict, code: str) -> None:
    args = {"start": 0, "end": 2, **kwargs}
    with pytest.raises(InputError) as info:
        optimize([[0, 1, 2], [1, 0, 3], [2, 3, 0]], **args)
    assert info.value.code == code


def test_numpy_inputs_are_accepted() -> None:
    matrix = np.array([[0, 1, 2, 3], [1, 0, 3, 4], [2, 3, 0, 5], [3, 4, 5, 0]], dtype=np.int32)
    result = optimize(matrix, np.int64(0), np.int64(3), pinned={np.int64(2): np.int64(1)},
                      keep_together=np.array([[2, 1]]))
    assert result.order == [0, 2, 1, 3]


def assert_error_is_explained(error: InputError) -> None:
    assert error.code in catalog()
    for lang in ("en", "zh"):
        text = error.message(lang)
        assert not re.search(r"\{[a-z_]+\}", text) and text != error.code  # every placeholder filled


def test_every_solver_message_exists_in_both_languages() -> None:
    used = set(re.findall(r'"(solver\.[a-z_0-9]+)"', Path(solver_module.__file__).read_text()))
    assert len(used) >= 25
    assert all(catalog()[key].get("en") and catalog()[key].get("zh") for key in used)


cells = st.one_of(st.integers(-5, 50), st.floats(allow_nan=True, allow_infinity=True),
                  st.text(max_size=2), st.none(), st.booleans())
junk = st.one_of(st.none(), st.integers(-3, 5), st.floats(), st.text(max_size=2),
                 st.lists(st.integers(-1, 5), max_size=3))


@FUZZ
@given(st.one_of(
    st.lists(st.lists(cells, max_size=4), max_size=4),
    st.lists(st.lists(st.integers(0, 20), min_size=3, max_size=3), min_size=3, max_size=3),
    st.integers(0, 3).map(lambda n: [[1] * n for _ in range(n)]),
    cells,
), junk, junk, st.one_of(st.none(), st.dictionaries(junk.filter(lambda x: not isinstance(x, list)), junk,
                                                     max_size=2), junk),
    st.one_of(st.none(), st.lists(junk, max_size=2), junk))
def test_fuzzed_inputs_raise_only_input_error(matrix: object, start: object, end: object,
                                              pinned: object, groups: object) -> None:
    try:
        result = optimize(matrix, start, end, time_limit_s=0.05, pinned=pinned, keep_together=groups)
    except InputError as error:
        assert_error_is_explained(error)
        return
    values = np.asarray(matrix, dtype=float)
    np.fill_diagonal(values, 0.0)
    assert_valid(result, values, int(start), int(end))  # type: ignore[call-overload]
