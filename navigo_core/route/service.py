"""Route planning: guardrails → resolve places → one matrix → solve → check → links.

The LLM plays no part here: coordinates come from a place provider, distances
and durations from one matrix request, and the order from the solver.
"""

from __future__ import annotations

import time
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from navigo_core.config import Settings
from navigo_core.errors import InputError, PlaceResolutionError, ProviderError, ResultCheckError
from navigo_core.geo import haversine_m
from navigo_core.i18n import detect_lang
from navigo_core.limits import Limits, check_field
from navigo_core.providers.matrix.base import Matrix, MatrixProvider
from navigo_core.providers.places.base import Place, PlaceProvider
from navigo_core.providers.places.latlon import parse_latlon
from navigo_core.providers.places.resolve import qualified_example, resolve_place
from navigo_core.providers.selection import Providers, make_providers
from navigo_core.route.deeplinks import build_deep_links
from navigo_core.route.models import Alternative, Leg, PlaceChoice, RouteRequest, RouteResult
from navigo_core.route.noroad import flight_estimate, no_road
from navigo_core.route.solver import optimize
from navigo_core.understand.places import dominant_place, place_candidates, rank_places

SAME_PLACE_M = 1.0  # two resolved points closer than this are the same place


@dataclass
class RouteDeps:
    """What route planning needs, injected (tests pass fakes)."""

    places: PlaceProvider
    matrix: MatrixProvider
    offline_matrix: MatrixProvider  # the labelled estimate used when the user accepts a fallback
    max_stops: int = 50
    time_limit_s: float = 1.0
    picked: dict[str, Place] = field(default_factory=dict)  # the user's picks for ambiguous names
    limits: Limits | None = None  # the field limits (None: the limits in force; make_route_deps: the settings')


def make_route_deps(settings: Settings, *, matrix_name: str | None = None,
                    picked: dict[str, Place] | None = None, providers: Providers | None = None) -> RouteDeps:
    """Deps with the providers of ``providers`` (the composition root's bundle; None: ``make_providers(settings)``,
    see :mod:`navigo_core.providers.selection`). ``matrix_name`` overrides the matrix provider by name."""
    bundle = (providers if providers is not None else make_providers(settings)).with_matrix(matrix_name)
    return RouteDeps(
        places=bundle.places,
        matrix=bundle.matrix,
        offline_matrix=bundle.offline_matrix,
        max_stops=settings.route_max_stops,
        time_limit_s=settings.solver_time_limit_s,
        picked=dict(picked or {}),
        limits=Limits.from_settings(settings),
    )


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip().casefold()


def validate_request(req: RouteRequest, max_stops: int, limits: Limits | None = None) -> None:
    """The request guardrails: each failure is an InputError with a specific message."""
    _check_lengths(req, max_stops, limits)
    if req.origin_mode == "fixed" and not req.origin.strip():
        raise InputError("route.origin_missing")
    if req.origin_mode == "current" and req.current_location is None:
        raise InputError("route.current_missing")
    if not req.destination.strip():
        raise InputError("route.destination_missing")
    if not req.stops:
        raise InputError("route.no_stops")
    for i, stop in enumerate(req.stops, start=1):
        if not stop.strip():
            raise InputError("route.blank_stop", index=i)
    if len(req.stops) > max_stops:
        raise InputError("route.too_many_stops", count=len(req.stops), limit=max_stops, excess=len(req.stops) - max_stops)
    dest = _norm(req.destination)
    seen: dict[str, int] = {}
    for i, stop in enumerate(req.stops, start=1):
        key = _norm(stop)
        if key == dest:
            raise InputError("route.destination_in_stops", name=stop.strip(), index=i)
        if req.origin_mode == "fixed" and key == _norm(req.origin):
            raise InputError("route.origin_in_stops", name=stop.strip(), index=i)
        if key in seen:
            raise InputError("route.duplicate_stop", name=stop.strip(), first=seen[key], index=i)
        seen[key] = i
    n = len(req.stops)
    for idx, pos in req.pins.items():
        if not 0 <= idx < n:
            raise InputError("route.pin_bad_stop", index=idx + 1, count=n)
        if not 1 <= pos <= n:
            raise InputError("route.pin_bad_position", name=req.stops[idx], position=pos, count=n)
    if len(set(req.pins.values())) != len(req.pins):
        raise InputError("route.pin_clash")
    grouped: set[int] = set()
    for group in req.groups:
        for idx in group:
            if not 0 <= idx < n:
                raise InputError("route.group_bad_stop", index=idx + 1, count=n)
            if idx in grouped:
                raise InputError("route.group_overlap", name=req.stops[idx])
            grouped.add(idx)


def _check_lengths(req: RouteRequest, max_stops: int, limits: Limits | None) -> None:
    """Field lengths and the stop count before any name is normalised or looked up (limits.py)."""
    if len(req.stops) > max_stops:
        raise InputError("route.too_many_stops", count=len(req.stops), limit=max_stops, excess=len(req.stops) - max_stops)
    check_field(req.origin, "origin", limits)
    check_field(req.destination, "destination", limits)
    for i, stop in enumerate(req.stops, start=1):
        check_field(stop, f"#{i}", limits)


MAX_CONTEXT_PASSES = 4  # rounds of "decide what the places decided so far make certain"


def _literal(text: str, role: str) -> Place | None:
    try:
        return parse_latlon(text.strip())
    except InputError as exc:
        exc.params.setdefault("role", role)
        raise


def resolve_with_choices(req: RouteRequest, deps: RouteDeps) -> tuple[list[Place], bool, list[PlaceChoice]]:
    """Origin, stops…, destination as Places, whether it is a round trip, and how each name with namesakes
    was decided.

    A name with one place (or a ``lat,lon``, or the user's pick in ``deps.picked``) is that place. A name with
    several is decided by the other places of the request (:func:`navigo_core.understand.places.rank_places`:
    same country, same continent, distance, the language, population): each round decides what the places
    known so far make certain, until nothing changes. A name the context leaves in doubt raises
    ``PlaceResolutionError`` whose candidates are ranked (best first) and whose ``why`` says why the first is
    first. A round trip is when the destination is the origin (same text or same point); then the
    destination is not a separate node.
    """
    entries: list[tuple[str, str]] = []  # (role, text) in node order
    if req.origin_mode == "fixed":
        entries.append(("origin", req.origin))
    entries += [("stop", stop) for stop in req.stops] + [("destination", req.destination)]
    lang = detect_lang(" ".join(text for _, text in entries))
    fixed: dict[str, Place] = {}
    choices: dict[str, PlaceChoice] = {}
    open_: dict[str, tuple[str, str, list[Place]]] = {}  # key → (role, text, candidates)
    for role, text in entries:
        key = _norm(text)
        if key in fixed or key in open_:
            continue
        picked = deps.picked.get(text.strip())
        if picked is not None:
            fixed[key] = picked
            choices[key] = PlaceChoice(text=text.strip(), place=picked, picked=True)
            continue
        literal = _literal(text, role)
        if literal is not None:
            fixed[key] = literal
            continue
        cands = place_candidates(text.strip(), deps.places, regions=False, raise_errors=True)
        if not cands:
            fixed[key] = resolve_place(text, deps.places, role=role)  # raises "unknown" with near misses
        elif len(cands) == 1:
            fixed[key] = cands[0]
        else:
            open_[key] = (role, text.strip(), cands)
    if req.origin_mode == "current" and req.current_location is not None:
        context_extra = [Place(name=req.origin.strip() or "Current location", lat=req.current_location[0],
                               lon=req.current_location[1], source="map")]
    else:
        context_extra = []
    def context(key: str) -> list[Place]:
        """The places known so far, plus the reading of each other open name that needs no context
        (its population dominates): "Paris" and "London" read each other as France and England."""
        others = [p for k, (_, _, c) in open_.items() if k != key and (p := dominant_place(c)) is not None]
        return [*fixed.values(), *others, *context_extra]

    for _ in range(MAX_CONTEXT_PASSES):
        progress = False
        for key, (role, text, cands) in list(open_.items()):
            ranking = rank_places(cands, context(key), lang, strict=True)
            if ranking.decided:
                fixed[key] = ranking.places[0]
                key_why, params = ranking.why
                choices[key] = PlaceChoice(text=text, place=ranking.places[0], why=key_why,
                                           why_params={k: str(v) for k, v in params.items()}, others=len(cands) - 1)
                del open_[key]
                progress = True
        if not progress or not open_:
            break
    if open_:
        key, (role, text, cands) = next(iter(open_.items()))
        ranking = rank_places(cands, context(key), lang, strict=True)
        err = PlaceResolutionError("place.ambiguous", query=text, candidates=ranking.places, role=role,
                                   example=qualified_example(text, ranking.places))
        err.why = ranking.why  # type: ignore[attr-defined]  # why the first candidate is first
        err.km = ranking.km  # type: ignore[attr-defined]  # each candidate's distance to the other places
        raise err

    def place(text: str) -> Place:
        return fixed[_norm(text)]

    if req.origin_mode == "current":
        assert req.current_location is not None
        lat, lon = req.current_location
        label = req.origin.strip() or "Current location"
        origin = Place(name=label, lat=lat, lon=lon, source="map", ref="current")
    else:
        origin = place(req.origin)
    stops = [place(s) for s in req.stops]
    destination = place(req.destination)
    round_trip = req.origin_mode == "fixed" and _norm(req.origin) == _norm(req.destination)
    round_trip = round_trip or _same(origin, destination)
    points = [origin, *stops] + ([] if round_trip else [destination])
    # Different texts can name the same place ("上海" and "Shanghai"): catch it after resolution.
    for i, a in enumerate(points):
        for j in range(i + 1, len(points)):
            if _same(a, points[j]):
                raise InputError("route.same_place", first=_label(req, i), second=_label(req, j), name=a.name)
    return points, round_trip, list(choices.values())


def resolve_points(req: RouteRequest, deps: RouteDeps) -> tuple[list[Place], bool]:
    """Origin, stops…, destination as Places, and whether it is a round trip (see :func:`resolve_with_choices`)."""
    points, round_trip, _ = resolve_with_choices(req, deps)
    return points, round_trip


def _label(req: RouteRequest, node: int) -> str:
    if node == 0:
        return req.origin or "Current location"
    if node <= len(req.stops):
        return req.stops[node - 1]
    return req.destination


def _same(a: Place, b: Place) -> bool:
    return haversine_m(a.lat, a.lon, b.lat, b.lon) < SAME_PLACE_M


def cost_matrix(m: Matrix, strategy: str, weight: float) -> np.ndarray:
    dur = np.asarray(m.duration_s, dtype=float)
    dist = np.asarray(m.distance_m, dtype=float)
    if strategy == "fastest":
        return dur
    if strategy == "shortest":
        return dist
    # balanced: each metric scaled by its mean off-diagonal value, then mixed
    off = ~np.eye(len(dur), dtype=bool)
    d_scale = float(dur[off].mean()) if off.any() and dur[off].mean() > 0 else 1.0
    m_scale = float(dist[off].mean()) if off.any() and dist[off].mean() > 0 else 1.0
    return weight * dur / d_scale + (1 - weight) * dist / m_scale


def _path_totals(m: Matrix, order: list[int]) -> tuple[float, float]:
    dist = sum(m.distance_m[a][b] for a, b in zip(order, order[1:]))
    dur = sum(m.duration_s[a][b] for a, b in zip(order, order[1:]))
    return float(dist), float(dur)


def check_result(result: RouteResult, n_stops: int) -> None:
    """The result guardrails: every stop once, right ends, totals = sum of legs."""
    pts = result.points
    if len(pts) != n_stops + 2:  # origin, every stop, destination (the origin again on a round trip)
        raise ResultCheckError(detail=f"{len(pts)} points for {n_stops} stops")
    if result.round_trip and not _same(pts[0], pts[-1]):
        raise ResultCheckError(detail="a round trip must end where it starts")
    inner = pts[1:-1]
    if len({(p.lat, p.lon) for p in inner}) != n_stops:
        raise ResultCheckError(detail="a stop is missing or visited twice")
    if len(result.legs) != len(pts) - 1:
        raise ResultCheckError(detail="legs do not join the points")
    dist = sum(leg.distance_m for leg in result.legs)
    dur = sum(leg.duration_s for leg in result.legs)
    if abs(dist - result.total_distance_m) > 0.5 or abs(dur - result.total_duration_s) > 0.5:
        raise ResultCheckError(detail="totals differ from the sum of the legs")


def _node_texts(req: RouteRequest, n: int) -> list[str]:
    """The text each node was typed as (origin, stops…, destination unless a round trip)."""
    return ([req.origin, *req.stops, req.destination])[:n]


def _fly(matrix: Matrix, points: list[Place], texts: list[str],
         fly_legs: list[tuple[str, str]]) -> tuple[Matrix, set[tuple[int, int]]]:
    """``matrix`` with the legs the user chose to fly (pairs of texts, either direction) replaced by a flight
    estimate (:func:`navigo_core.route.noroad.flight_estimate`), and those legs as ``(i, j)`` node pairs."""
    wanted = {frozenset((_norm(a), _norm(b))) for a, b in fly_legs}
    if not wanted:
        return matrix, set()
    keys = [_norm(t) for t in texts]
    dist = [list(row) for row in matrix.distance_m]
    dur = [list(row) for row in matrix.duration_s]
    flown: set[tuple[int, int]] = set()
    for i in range(len(points)):
        for j in range(len(points)):
            if i != j and frozenset((keys[i], keys[j])) in wanted:
                dist[i][j], dur[i][j] = flight_estimate(points[i], points[j])
                flown.add((i, j))
    return matrix.model_copy(update={"distance_m": dist, "duration_s": dur}), flown


def plan_route(req: RouteRequest, deps: RouteDeps, *, allow_fallback: bool = False) -> RouteResult:
    """Plan one route. Raises InputError (bad input, unknown or ambiguous place) or,
    unless ``allow_fallback``, ProviderError when the matrix provider fails."""
    validate_request(req, deps.max_stops, deps.limits)
    points, round_trip, choices = resolve_with_choices(req, deps)
    n = len(points)

    provider = deps.matrix
    fallback_from = fallback_reason = ""
    try:
        matrix = provider.matrix(points)
    except ProviderError as exc:
        if not allow_fallback or provider is deps.offline_matrix:
            raise
        fallback_from, fallback_reason = provider.name, exc.message("en")
        provider = deps.offline_matrix
        matrix = provider.matrix(points)

    texts = _node_texts(req, n)
    matrix, flown = _fly(matrix, points, texts, req.fly_legs)

    start, end = 0, (0 if round_trip else n - 1)
    pins = {1 + idx: pos for idx, pos in req.pins.items()}
    groups = [[1 + idx for idx in g] for g in req.groups if len(g) > 1]
    costs = cost_matrix(matrix, req.strategy, req.balance_weight)
    t0 = time.perf_counter()
    solved = optimize(
        costs, start, end, deps.time_limit_s,
        k_best=req.alternatives, pinned=pins or None, keep_together=groups or None,
    )
    solve_ms = (time.perf_counter() - t0) * 1000

    lang = detect_lang(" ".join([req.origin, req.destination, *req.stops]))
    names = [p.display_name(lang) for p in points]
    order = solved.order
    ordered = [points[i] for i in order]
    legs: list[Leg] = []
    cum_d = cum_t = 0.0
    for a, b in zip(order, order[1:]):
        d, t = float(matrix.distance_m[a][b]), float(matrix.duration_s[a][b])
        cum_d += d
        cum_t += t
        flight = (a, b) in flown
        legs.append(Leg(**{"from": names[a]}, to=names[b], distance_m=d, duration_s=t,
                        cum_distance_m=cum_d, cum_duration_s=cum_t, mode="flight" if flight else "drive",
                        no_road="" if flight else no_road(points[a], points[b])))

    entered = list(range(n)) + ([0] if round_trip else [])
    entered_d, entered_t = _path_totals(matrix, entered)
    entered_cost = float(sum(costs[a][b] for a, b in zip(entered, entered[1:])))
    best_cost = float(sum(costs[a][b] for a, b in zip(order, order[1:])))
    saved_pct = 100.0 * (entered_cost - best_cost) / entered_cost if entered_cost > 0 else 0.0

    notes: list[str] = []
    if len(req.stops) < 2:
        notes.append("route.note.nothing_to_optimise")
    if matrix.estimated:
        notes.append("route.note.estimated")

    if flown:
        notes.append("route.note.flights")
    drivable = [leg.mode == "drive" and not leg.no_road for leg in legs]

    geometry = None
    requests = matrix.requests
    if not matrix.estimated and all(drivable):  # a road line across the sea would be the provider's fiction
        try:
            geometry = provider.geometry(ordered)
            requests += 1
        except ProviderError:
            notes.append("route.note.no_geometry")

    alternatives = []
    for alt in solved.alternatives:
        d, t = _path_totals(matrix, alt.order)
        alternatives.append(Alternative(order=[names[i] for i in alt.order], distance_m=d, duration_s=t))

    result = RouteResult(
        request=req,
        points=ordered,
        order=[names[i] for i in order],
        typed=[texts[i] for i in order],
        legs=legs,
        total_distance_m=cum_d,
        total_duration_s=cum_t,
        entered_distance_m=entered_d,
        entered_duration_s=entered_t,
        saved_distance_m=entered_d - cum_d,
        saved_duration_s=entered_t - cum_t,
        saved_pct=saved_pct,
        optimal=solved.optimal,
        method=solved.method,
        round_trip=round_trip,
        lang=lang,
        strategy=req.strategy,
        provider=matrix.provider,
        estimated=matrix.estimated,
        fallback_from=fallback_from,
        fallback_reason=fallback_reason,
        upstream_requests=requests,
        geometry=geometry,
        deep_links=build_deep_links(ordered, drivable=drivable, lang=lang),
        alternatives=alternatives,
        notes=notes,
        solve_ms=solve_ms,
        choices=choices,
    )
    check_result(result, len(req.stops))
    return result
