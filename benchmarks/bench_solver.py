"""Benchmark of the route solver; prints Markdown tables.

Run from the repo root: ``.venv/bin/python benchmarks/bench_solver.py``.

1. Exact timing: seeded random open paths with 10–16 stops between an origin
   and a destination (Euclidean costs), median wall time of a few runs.
2. TSPLIB (from ``../shared/data/tsplib/`` beside the repo, skipped when
   absent): our solver against OR-Tools' guided local search, both with a 1 s
   limit, on round trips from node 0 and on open paths between the ends of an
   edge of a verified optimal tour (optimal path = optimal tour − that edge).

Single-threaded throughout; not a test.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from ortools.constraint_solver import pywrapcp, routing_enums_pb2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from navigo_core.route import optimize  # noqa: E402

TSPLIB_DIR = ROOT.parent / "shared" / "data" / "tsplib"
INSTANCES = ["burma14", "ulysses16", "eil51", "berlin52", "st70", "kroA100"]
TIME_LIMIT_S = 1.0
EXACT_STOPS = [10, 12, 14, 15, 16]
EXACT_TARGETS_S = {12: 0.3, 15: 3.0}
EXACT_RUNS = 5


# -- TSPLIB ---------------------------------------------------------------------------
def read_tsplib(path: Path) -> np.ndarray:
    """The integer distance matrix of a TSPLIB file with EUC_2D or GEO coordinates."""
    header: dict[str, str] = {}
    coords: list[tuple[float, float]] = []
    in_coords = False
    for line in path.read_text().splitlines():
        text = line.strip()
        if text == "EOF":
            break
        if not text:
            continue
        if in_coords:
            _, x, y = text.split()[:3]
            coords.append((float(x), float(y)))
        elif text.startswith("NODE_COORD_SECTION"):
            in_coords = True
        else:
            key, _, value = text.partition(":")
            header[key.strip()] = value.strip()
    kind = header["EDGE_WEIGHT_TYPE"]
    if len(coords) != int(header["DIMENSION"]):
        raise ValueError(f"{path.name}: {len(coords)} coordinates for DIMENSION {header['DIMENSION']}")
    if kind == "EUC_2D":
        return _euc_2d(coords)
    if kind == "GEO":
        return _geo(coords)
    raise ValueError(f"{path.name}: unsupported EDGE_WEIGHT_TYPE {kind}")


def _euc_2d(coords: list[tuple[float, float]]) -> np.ndarray:
    xy = np.array(coords)
    dist = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(axis=2))
    return np.floor(dist + 0.5).astype(np.int64)  # TSPLIB nint


def _geo(coords: list[tuple[float, float]]) -> np.ndarray:
    """TSPLIB GEO distances: degrees.minutes coordinates, RRR = 6378.388, PI = 3.141592."""
    pi, rrr = 3.141592, 6378.388

    def radians(value: float) -> float:
        degrees = int(value)
        return pi * (degrees + 5.0 * (value - degrees) / 3.0) / 180.0

    lat = [radians(x) for x, _ in coords]
    lon = [radians(y) for _, y in coords]
    n = len(coords)
    dist = np.zeros((n, n), dtype=np.int64)
    for i in range(n):
        for j in range(n):
            if i != j:
                q1 = math.cos(lon[i] - lon[j])
                q2 = math.cos(lat[i] - lat[j])
                q3 = math.cos(lat[i] + lat[j])
                dist[i, j] = int(rrr * math.acos(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)) + 1.0)
    return dist


# -- solvers ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    order: list[int]
    cost: float
    optimal: bool
    wall_s: float


def run_ours(matrix: np.ndarray, start: int, end: int, time_limit_s: float = TIME_LIMIT_S,
             seed: int = 0) -> Run:
    began = time.perf_counter()
    result = optimize(matrix, start, end, time_limit_s, seed=seed)
    return Run(result.order, result.cost, result.optimal, time.perf_counter() - began)


def run_ortools(matrix: np.ndarray, start: int, end: int) -> Run:
    """OR-Tools defaults for a TSP: PATH_CHEAPEST_ARC, then guided local search."""
    began = time.perf_counter()
    manager = pywrapcp.RoutingIndexManager(len(matrix), 1, [start], [end])
    routing = pywrapcp.RoutingModel(manager)
    transit = routing.RegisterTransitMatrix(matrix.astype(np.int64).tolist())
    routing.SetArcCostEvaluatorOfAllVehicles(transit)
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    params.time_limit.FromMilliseconds(int(TIME_LIMIT_S * 1000))
    solution = routing.SolveWithParameters(params)
    index, order = routing.Start(0), []
    while not routing.IsEnd(index):
        order.append(manager.IndexToNode(index))
        index = solution.Value(routing.NextVar(index))
    order.append(manager.IndexToNode(index))
    cost = float(sum(matrix[a, b] for a, b in zip(order, order[1:])))
    return Run(order, cost, False, time.perf_counter() - began)


def gap_pct(cost: float, optimum: float) -> float:
    return 100.0 * (cost - optimum) / optimum


# -- tables -------------------------------------------------------------------------------
def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def exact_timing() -> None:
    print("## Exact solver (Held-Karp): random open paths\n")
    rows = []
    for stops in EXACT_STOPS:
        rng = np.random.default_rng(stops)
        xy = rng.random((stops + 2, 2)) * 1000
        matrix = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(axis=2))
        runs = [run_ours(matrix, 0, stops + 1) for _ in range(EXACT_RUNS)]
        times = [r.wall_s for r in runs]
        target = EXACT_TARGETS_S.get(stops)
        median = statistics.median(times)
        verdict = "–" if target is None else f"≤ {target} s: {'met' if median <= target else 'MISSED'}"
        rows.append([str(stops), str(stops + 2), f"{median:.3f}", f"{max(times):.3f}",
                     str(all(r.optimal for r in runs)), verdict])
    print(table(["stops", "nodes", f"median s ({EXACT_RUNS} runs)", "max s", "optimal", "target"], rows))
    print()


def verified_optimal_tour(matrix: np.ndarray, optimum: float, candidates: list[Run]) -> list[int] | None:
    """A round trip known to reach ``optimum``: from the runs so far, else longer runs of ours."""
    for run in candidates:
        if run.cost == optimum:
            return run.order
    for seed in range(3):
        run = run_ours(matrix, 0, 0, time_limit_s=10.0, seed=seed)
        if run.cost == optimum:
            return run.order
    return None


def tsplib_comparison() -> None:
    print(f"## TSPLIB: ours vs OR-Tools guided local search ({TIME_LIMIT_S:g} s each)\n")
    if not TSPLIB_DIR.is_dir():
        print(f"TSPLIB data not found at {TSPLIB_DIR}; skipping this table.")
        return
    optima = json.loads((TSPLIB_DIR / "optima.json").read_text())
    rows: list[list[str]] = []
    ours_gaps: list[float] = []
    ort_gaps: list[float] = []
    small_ok = True
    for name in INSTANCES:
        matrix = read_tsplib(TSPLIB_DIR / f"{name}.tsp")
        n = len(matrix)
        optimum = float(optima[name])
        ours, ort = run_ours(matrix, 0, 0), run_ortools(matrix, 0, 0)
        cases = [("round trip from 0", optimum, ours, ort)]
        tour = verified_optimal_tour(matrix, optimum, [ours, ort])
        if tour is None:
            rows.append([name, str(n), "open path", "no verified optimal tour", *["–"] * 7])
        else:
            a, b = max(zip(tour, tour[1:]), key=lambda edge: matrix[edge])
            path_optimum = optimum - float(matrix[a, b])
            cases.append((f"path {a}→{b}", path_optimum, run_ours(matrix, a, b), run_ortools(matrix, a, b)))
        for label, best, mine, theirs in cases:
            mine_gap, their_gap = gap_pct(mine.cost, best), gap_pct(theirs.cost, best)
            ours_gaps.append(mine_gap)
            ort_gaps.append(their_gap)
            if n <= 16:
                small_ok &= mine.optimal and mine_gap == 0
            rows.append([name, str(n), label, f"{best:g}", f"{mine.cost:g}", f"{mine_gap:.2f}",
                         str(mine.optimal), f"{mine.wall_s:.2f}", f"{theirs.cost:g}", f"{their_gap:.2f}",
                         f"{theirs.wall_s:.2f}"])
    print(table(["instance", "n", "case", "optimum", "ours", "ours gap %", "optimal", "ours wall s",
                 "OR-Tools", "OR-Tools gap %", "OR-Tools wall s"], rows))
    ours_mean, ort_mean = statistics.mean(ours_gaps), statistics.mean(ort_gaps)
    ratio = "n/a (OR-Tools gap 0)" if ort_mean == 0 else f"{ours_mean / ort_mean:.2f}"
    meets = ours_mean <= 0.5 * ort_mean
    print()
    print(table(["", "ours", "OR-Tools"], [
        ["mean gap %", f"{ours_mean:.3f}", f"{ort_mean:.3f}"],
        ["ratio ours / OR-Tools", ratio, ""],
        ["target: ours ≤ ½ OR-Tools", "met" if meets else "MISSED", ""],
        ["target: 0 % and optimal for n ≤ 16", "met" if small_ok else "MISSED", ""],
    ]))
    print()


def main() -> None:
    exact_timing()
    tsplib_comparison()


if __name__ == "__main__":
    main()
