"""Issue 15 on the Route page (AppTest, st_folium patched): two picks in a row, picks by context, legs with no
road, links that fit the place, the chat's hand-off, and map clicks. Each test failed on the old page."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from unittest.mock import MagicMock, patch
from urllib.parse import parse_qs, urlsplit

import folium
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = os.environ.get("NAVIGO_ROUTE_PAGE", str(ROOT / "app_pages" / "route.py"))  # another file: compare pages

pytestmark = pytest.mark.usefixtures("no_internet")


@pytest.fixture
def folium_mock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MagicMock]:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'app.db'}")
    for var in ("OSRM_URL", "AMAP_KEY", "NOMINATIM_URL", "LLM_API_KEY", "OPENAI_API_KEY", "MAP_TILES"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    with patch("streamlit_folium.st_folium", return_value={"last_clicked": None}) as mock:
        yield mock
    st.cache_resource.clear()


def page(**state: object) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def fill(at: AppTest, origin: str, destination: str, stops: list[str]) -> AppTest:
    at.text_input(key="route_origin").input(origin)
    at.text_input(key="route_destination").input(destination)
    at.text_area(key="route_paste").input("\n".join(stops))
    at.button(key="route_paste_add").click().run()
    return at


def optimise(at: AppTest) -> AppTest:
    at.button(key="route_optimise").click().run()
    assert not at.exception, at.exception
    return at


def legs_table(at: AppTest):  # type: ignore[no-untyped-def]
    return next(df.value for df in at.dataframe if "From" in df.value.columns)


def pick_box(at: AppTest):  # type: ignore[no-untyped-def]
    return next(sb for sb in at.selectbox if sb.label.startswith("Which"))


def markers(fmap: folium.Map) -> list[tuple[str, str]]:
    """(badge, tooltip) of every marker drawn."""
    out = []

    def walk(el: object) -> None:
        for child in getattr(el, "_children", {}).values():
            if isinstance(child, folium.Marker):
                (icon,) = [c for c in child._children.values() if isinstance(c, folium.DivIcon)]
                (tip,) = [c for c in child._children.values() if isinstance(c, folium.Tooltip)]
                out.append((icon.options["html"].split(">", 1)[1].split("<", 1)[0], tip.text))
            walk(child)

    walk(fmap)
    return out


# --- 1. the crash: "Use this place" on the second question ----------------------------------

def test_second_pick_does_not_crash_when_the_browser_sends_the_first_answer(
        folium_mock: MagicMock, monkeypatch: pytest.MonkeyPatch) -> None:
    """A browser keeps a widget's last value: on the second question it sent the first answer's label
    ("Springfield, Illinois, United States") for the same key, and ``candidates["…"]`` raised TypeError."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState
    from streamlit.testing.v1.element_tree import Selectbox

    at = optimise(fill(page(), "Paris", "London", ["Springfield", "Perth"]))
    first = pick_box(at)
    assert "Springfield" in first.label
    illinois = next(i for i, label in enumerate(first.options) if "Illinois" in label)
    previous = first.options[illinois]
    first.set_value(illinois)
    at.button(key="route_pick_use").click().run()
    assert not at.exception, at.exception
    questions, keys = 1, {first.key}
    real_state = Selectbox._widget_state
    while any(sb.label.startswith("Which") for sb in at.selectbox):
        box = pick_box(at)
        keys.add(box.key)
        stale = WidgetState(id=box.id, string_value=previous)  # what the browser sends for a reused widget
        monkeypatch.setattr(Selectbox, "_widget_state",
                            property(lambda self, _id=box.id: stale if self.id == _id else real_state.fget(self)))
        previous = box.options[0]
        at.button(key="route_pick_use").click().run()
        monkeypatch.setattr(Selectbox, "_widget_state", real_state)
        assert not at.exception, at.exception
        questions += 1
        assert questions <= 4
    assert questions >= 2 and len(keys) == questions  # every question is a new widget
    assert not at.error, [e.value for e in at.error]
    assert len(legs_table(at)) == 3


def test_the_issue_input_needs_no_pick_and_plans(folium_mock: MagicMock) -> None:
    at = optimise(fill(page(), "Shanghai", "Hangzhou", ["Suzhou", "Wuxi"]))
    assert not [sb for sb in at.selectbox if sb.label.startswith("Which")]
    assert list(legs_table(at)["From"])[0] == "Shanghai"


# --- 2. picks by context, with the reason shown -----------------------------------------------

def test_venice_among_italian_stops_is_not_dayton(folium_mock: MagicMock) -> None:
    at = optimise(fill(page(), "Rome", "Milan", ["Florence", "Venice", "Bologna"]))
    assert not at.error, [e.value for e in at.error]
    assert not any(m.delta for m in at.metric)  # no leg without a road: it is Venice, Italy
    reasons = " ".join(md.value for md in at.markdown)
    assert "“Venice” → Venice, Veneto, Italy: in the same country as" in reasons
    assert "Dayton" not in reasons


def test_twelve_european_cities_ask_nothing(folium_mock: MagicMock) -> None:
    stops = ["London", "Berlin", "Rome", "Vienna", "Prague", "Amsterdam", "Brussels", "Madrid", "Barcelona", "Munich"]
    at = optimise(fill(page(), "Paris", "Lisbon", stops))
    assert not at.error, [e.value for e in at.error]
    assert len(legs_table(at)) == 11


# --- 3. legs with no road -------------------------------------------------------------------

def test_a_leg_across_the_sea_is_flagged_and_can_be_flown(folium_mock: MagicMock) -> None:
    at = optimise(fill(page(), "Paris", "Lyon", ["Springfield"]))
    box = pick_box(at)
    box.set_value(next(i for i, label in enumerate(box.options) if "Illinois" in label))
    at.button(key="route_pick_use").click().run()
    quality = next(m for m in at.metric if m.label == "Result")
    assert quality.value == "Proven optimal" and quality.delta == "2 leg(s) with no road"  # never alone
    assert sum("different landmasses" in w.value for w in at.warning) == 2
    legs = legs_table(at)
    assert list(legs["Mode"]) == ["⚠ No road", "⚠ No road"]

    at.button(key="route_fly_0").click().run()
    assert not at.exception
    modes = list(legs_table(at)["Mode"])
    assert modes == ["Flight estimate", "⚠ No road"]  # a flown leg is labelled a flight, never a drive
    at.button(key="route_fly_1").click().run()
    legs = legs_table(at)
    assert list(legs["Mode"]) == ["Flight estimate", "Flight estimate"]
    quality = next(m for m in at.metric if m.label == "Result")
    assert quality.value == "Proven optimal" and not quality.delta
    assert not any("different landmasses" in w.value for w in at.warning)
    assert any("Flight estimate" in i.value for i in at.info)


# --- 4. links that fit the place --------------------------------------------------------------

def leg_links(at: AppTest):  # type: ignore[no-untyped-def]
    return next(df.value for df in at.dataframe if "leg" in df.value.columns)  # labels live in column_config


def test_links_outside_china_have_no_amap_and_google_uses_names(folium_mock: MagicMock) -> None:
    at = optimise(fill(page(), "Paris", "Lyon", ["Dijon", "Geneva"]))
    buttons = {b.key: b.proto.url for b in at.get("link_button")}
    assert set(buttons) == {"route_link_google"}  # one whole-route link; OSM takes one leg, AMap only China
    q = parse_qs(urlsplit(buttons["route_link_google"]).query)
    assert q["origin"] == ["Paris, Île-de-France, France"] and "Geneva, Switzerland" in q["waypoints"][0]
    assert any(c.value.startswith("AMap covers China only") for c in at.caption)
    legs = leg_links(at)  # the per-leg links, folded under the expander
    assert len(legs) == 3 and list(legs.columns) == ["leg", "google", "osm"]
    assert all(u.startswith("https://www.google.com/maps/dir/?api=1&origin=") for u in legs["google"])


def test_links_inside_china_offer_amap_once_for_the_whole_route(folium_mock: MagicMock) -> None:
    at = optimise(fill(page(), "上海", "杭州", ["苏州", "嘉兴"]))
    keys = [b.key for b in at.get("link_button")]
    assert keys[:2] == ["route_link_google", "route_link_amap_app"]  # the whole route, once per service
    assert "route_link_amap_web" not in keys  # AMap web takes one via: its parts are under the expander
    assert {"route_link_amap_web_part_1", "route_link_amap_web_part_2"} <= set(keys)
    assert list(leg_links(at).columns) == ["leg", "google", "amap_web", "osm"]


# --- 5. the chat's hand-off fills the page and runs it ------------------------------------------

def test_hand_off_runs_and_ticks_round_trip(folium_mock: MagicMock) -> None:
    at = page(**{"route.prefill": {"origin": "上海", "destination": "上海", "stops": ["苏州", "无锡"]}})
    assert not at.exception
    assert at.checkbox(key="route_round_trip").value is True
    legs = legs_table(at)  # it ran: no need to press "Optimise route"
    assert list(legs["From"])[0] == "上海" and list(legs["To"])[-1] == "上海" and len(legs) == 3


def test_chat_hand_off_from_and_back_and_wangfan(folium_mock: MagicMock) -> None:
    from navigo_core.understand import parse_route

    for text in ("plan a route from Shanghai to Suzhou, Wuxi and back", "上海往返，途经苏州、无锡",
                 "从上海出发经过苏州、无锡回到上海"):
        prefill = parse_route(text).request()
        assert prefill["origin"] == prefill["destination"] and len(prefill["stops"]) == 2, (text, prefill)
    at = page(**{"route.prefill": parse_route("上海往返，途经苏州、无锡").request()})
    assert at.checkbox(key="route_round_trip").value is True
    assert len(legs_table(at)) == 3


# --- 6. a map click: a named marker, and the old result out of date -----------------------------

def test_map_click_adds_a_named_marker_and_marks_the_result_out_of_date(folium_mock: MagicMock) -> None:
    at = optimise(fill(page(), "上海", "杭州", ["苏州"]))
    assert not any("Out of date" in w.value for w in at.warning)
    folium_mock.return_value = {"last_clicked": {"lat": 30.7522, "lng": 120.75}}
    at.run()
    folium_mock.return_value = {"last_clicked": {"lat": 30.7522, "lng": 120.75}}
    at.run()
    assert any("Out of date" in w.value for w in at.warning)
    drawn = markers(folium_mock.call_args.args[0])
    assert ("+", "New stop (not in the route yet): Jiaxing") in drawn  # named from the gazetteer
    optimise(at)
    assert not any("Out of date" in w.value for w in at.warning)
    assert "Jiaxing" in list(legs_table(at)["To"]) + list(legs_table(at)["From"])


def test_a_click_far_from_any_city_is_labelled_a_point(folium_mock: MagicMock) -> None:
    at = page()
    folium_mock.return_value = {"last_clicked": {"lat": 10.0, "lng": -30.0}}
    at.run()
    at.run()
    drawn = markers(folium_mock.call_args.args[0])
    assert ("+", "New stop (not in the route yet): point 10.00000, -30.00000") in drawn
