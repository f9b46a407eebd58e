"""Route service: every request guardrail, the result guardrails, fallback and savings."""

from __future__ import annotations

import pytest

from navigo_core.config import get_settings
from navigo_core.errors import InputError, PlaceResolutionError, ProviderTimeout, ResultCheckError
from navigo_core.providers.matrix import make_matrix_provider
from navigo_core.providers.matrix.base import Matrix
from navigo_core.providers.places.base import Place
from navigo_core.route.models import RouteRequest
from navigo_core.route.service import RouteDeps, check_result, make_route_deps, plan_route

SETTINGS = get_settings()


class FailingMatrix:
    """A matrix provider whose upstream always times out."""

    name = "osrm"
    estimated = False

    def matrix(self, points: list[Place]) -> Matrix:
        raise ProviderTimeout(provider="OSRM", seconds=2)

    def geometry(self, points: list[Place]) -> None:
        return None


def deps(**kw: object) -> RouteDeps:
    d = make_route_deps(SETTINGS, matrix_name="offline")
    for k, v in kw.items():
        setattr(d, k, v)
    return d


def req(**kw: object) -> RouteRequest:
    base: dict[str, object] = {"origin": "上海", "destination": "杭州", "stops": ["苏州", "嘉兴", "无锡"]}
    base.update(kw)
    return RouteRequest(**base)


def message(exc: pytest.ExceptionInfo[InputError], lang: str = "en") -> str:
    return exc.value.message(lang)


# ---- request guardrails: each sends the bad input and checks the specific message ----

def test_blank_stop_names_its_row() -> None:
    with pytest.raises(InputError) as e:
        plan_route(req(stops=["苏州", "   "]), deps())
    assert e.value.code == "route.blank_stop"
    assert "Stop 2 is blank" in message(e)
    assert "第 2 个途经点为空" in message(e, "zh")


def test_no_stops() -> None:
    with pytest.raises(InputError) as e:
        plan_route(req(stops=[]), deps())
    assert e.value.code == "route.no_stops"
    assert "Add at least one stop" in message(e)


def test_destination_repeated_among_stops() -> None:
    with pytest.raises(InputError) as e:
        plan_route(req(stops=["苏州", " 杭州 "]), deps())
    assert e.value.code == "route.destination_in_stops"
    assert "“杭州” (stop 2) is also the destination" in message(e)


def test_fixed_origin_mode_without_origin() -> None:
    with pytest.raises(InputError) as e:
        plan_route(req(origin="  "), deps())
    assert e.value.code == "route.origin_missing"
    assert "The origin is empty" in message(e)


def test_blank_destination() -> None:
    with pytest.raises(InputError) as e:
        plan_route(req(destination=""), deps())
    assert "The destination is empty" in message(e)


def test_current_mode_without_location() -> None:
    with pytest.raises(InputError) as e:
        plan_route(req(origin_mode="current", origin=""), deps())
    assert e.value.code == "route.current_missing"
    assert "Click the map" in message(e)


def test_duplicate_stops() -> None:
    with pytest.raises(InputError) as e:
        plan_route(req(stops=["苏州", "嘉兴", "苏州"]), deps())
    assert e.value.code == "route.duplicate_stop"
    assert "“苏州” appears twice among the stops (rows 1 and 3)" in message(e)


def test_same_place_under_two_names() -> None:
    with pytest.raises(InputError) as e:
        plan_route(req(stops=["苏州", "Shanghai"]), deps())
    assert e.value.code == "route.same_place"
    assert "are the same place" in message(e)


def test_more_stops_than_the_maximum() -> None:
    with pytest.raises(InputError) as e:
        plan_route(req(stops=["苏州", "嘉兴", "无锡"]), deps(max_stops=2))
    assert e.value.code == "route.too_many_stops"
    assert "3 stops is more than the limit of 2. Remove 1 of them" in message(e)


def test_pin_position_out_of_range() -> None:
    with pytest.raises(InputError) as e:
        plan_route(req(pins={0: 5}), deps())
    assert "positions run from 1 to 3" in message(e)


def test_ambiguous_place_lists_candidates() -> None:
    """Only a name the other places leave in doubt is asked ("Paris" beside Lyon is Paris, France)."""
    with pytest.raises(PlaceResolutionError) as e:
        plan_route(req(origin="Paris", destination="Lyon", stops=["Marseille", "Springfield"]), deps())
    assert e.value.query == "Springfield"
    assert {c.country for c in e.value.candidates} == {"US"} and len(e.value.candidates) > 3
    assert e.value.why[0] == "place.why.nearest"  # type: ignore[attr-defined]  # the first is the nearest to France


def test_picked_candidate_resolves_ambiguity() -> None:
    d = deps()
    r = req(origin="Paris", destination="Lyon", stops=["Marseille", "Springfield"])
    with pytest.raises(PlaceResolutionError) as e:
        plan_route(r, d)
    illinois = next(c for c in e.value.candidates if c.admin == "Illinois")
    d.picked = {"Springfield": illinois}
    result = plan_route(r, d)
    assert result.points[0].country == "FR" and illinois in result.points
    assert any(c.text == "Springfield" and c.picked for c in result.choices)


# ---- results ----

def test_best_order_is_valid_and_never_worse_than_entered() -> None:
    result = plan_route(req(stops=["嘉兴", "无锡", "苏州", "常州"]), deps())
    assert result.order[0] == "上海" and result.order[-1] == "杭州"  # names in the input's language
    assert len(result.legs) == 5
    assert result.optimal
    assert result.estimated and result.provider == "offline"
    assert result.total_duration_s <= result.entered_duration_s + 1e-6
    assert result.saved_pct >= 0
    assert "route.note.estimated" in result.notes
    assert result.deep_links.amap_web and result.deep_links.google and result.deep_links.osm


def test_round_trip_when_destination_is_origin() -> None:
    result = plan_route(req(destination="上海"), deps())
    assert result.round_trip
    assert result.order[0] == result.order[-1] == "上海"
    assert len(result.legs) == 4


def test_one_stop_has_nothing_to_optimise() -> None:
    result = plan_route(req(stops=["苏州"]), deps())
    assert "route.note.nothing_to_optimise" in result.notes
    assert result.order == ["上海", "苏州", "杭州"]


def test_provider_failure_raises_then_falls_back_when_allowed() -> None:
    d = deps(matrix=FailingMatrix())
    with pytest.raises(ProviderTimeout) as e:
        plan_route(req(), d)
    assert "did not answer within 2 s" in e.value.message("en")
    result = plan_route(req(), d, allow_fallback=True)
    assert result.fallback_from == "osrm"
    assert result.estimated and result.provider == "offline"


def test_result_guardrails_catch_tampering() -> None:
    good = plan_route(req(), deps())
    missing = good.model_copy(update={"points": good.points[:-2] + good.points[-1:]})
    with pytest.raises(ResultCheckError):
        check_result(missing, 3)
    totals = good.model_copy(update={"total_distance_m": good.total_distance_m + 10})
    with pytest.raises(ResultCheckError) as e:
        check_result(totals, 3)
    assert "sum of the legs" in e.value.message("en")
    twice = good.model_copy(update={"points": [good.points[0], good.points[1], good.points[1], good.points[3], good.points[4]]})
    with pytest.raises(ResultCheckError):
        check_result(twice, 3)
    check_result(good, 3)  # the untouched result passes


def test_pins_and_groups_are_respected() -> None:
    stops = ["嘉兴", "无锡", "苏州", "常州"]
    result = plan_route(req(stops=stops, pins={0: 1}, groups=[[3, 1]]), deps())
    assert result.order[1] == "嘉兴"
    i = result.order.index("常州")
    assert result.order[i + 1] == "无锡"


def test_english_input_gets_english_names() -> None:
    result = plan_route(req(origin="Shanghai", destination="Hangzhou", stops=["Jiaxing", "Wuxi, Jiangsu"]), deps())
    assert result.lang == "en"
    assert result.order[0] == "Shanghai" and set(result.order[1:-1]) == {"Jiaxing", "Wuxi"}
