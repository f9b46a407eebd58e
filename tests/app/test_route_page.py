"""AppTest for the Route page, with st_folium patched (no browser)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from unittest.mock import MagicMock, patch

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def legs_table(at: AppTest):  # type: ignore[no-untyped-def]
    """The legs dataframe (AppTest finds dataframes by position, not key)."""
    return next(df.value for df in at.dataframe if "From" in df.value.columns)


@pytest.fixture
def folium_mock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MagicMock]:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'app.db'}")
    for var in ("OSRM_URL", "AMAP_KEY", "NOMINATIM_URL", "LLM_API_KEY", "OPENAI_API_KEY", "MAP_TILES"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    with patch("streamlit_folium.st_folium", return_value={"last_clicked": None}) as mock:
        yield mock
    st.cache_resource.clear()


def page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / "route.py"), default_timeout=60)
    return at.run()


def fill(at: AppTest, origin: str, destination: str, stops: list[str]) -> AppTest:
    at.text_input(key="route_origin").input(origin)
    at.text_input(key="route_destination").input(destination)
    at.text_area(key="route_paste").input("\n".join(stops))
    at.button(key="route_paste_add").click().run()
    return at


def test_route_page_plans_and_renders(folium_mock: MagicMock) -> None:
    at = fill(page(), "上海", "杭州", ["嘉兴", "苏州", "无锡"])
    at.button(key="route_optimise").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    labels = [m.label for m in at.metric]
    assert "Total distance" in labels and "Result" in labels
    assert any(m.value == "Proven optimal" for m in at.metric)
    legs = legs_table(at)
    assert list(legs["From"])[0] == "上海" and list(legs["To"])[-1] == "杭州"
    assert len(legs) == 4
    # the map was drawn with one marker per point
    fmap = folium_mock.call_args.args[0]
    assert fmap is not None
    assert any("estimate" in i.value for i in at.info)


def test_route_page_guardrail_message(folium_mock: MagicMock) -> None:
    at = fill(page(), "上海", "杭州", ["苏州", "杭州"])
    at.button(key="route_optimise").click().run()
    assert not at.exception
    assert any("is also the destination" in e.value for e in at.error)


def pick_box(at: AppTest):  # type: ignore[no-untyped-def]
    """The place question (its key changes with each question, so find it by its label)."""
    return next(sb for sb in at.selectbox if sb.label.startswith("Which"))


def test_route_page_ambiguity_lets_the_user_pick(folium_mock: MagicMock) -> None:
    at = fill(page(), "Paris", "Lyon", ["Marseille", "Springfield"])  # "Paris" beside Lyon needs no question
    at.button(key="route_optimise").click().run()
    assert not at.exception
    pick = pick_box(at)
    assert "Springfield" in pick.label
    labels = list(pick.options)  # the formatted candidate labels, nearest to the other places first
    assert all("United States" in lbl and "km from the other places" in lbl for lbl in labels)
    assert any(c.value.startswith("Listed first: the nearest to") for c in at.caption)
    pick.set_value(next(i for i, lbl in enumerate(labels) if "Illinois" in lbl))
    at.button(key="route_pick_use").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    legs = legs_table(at)
    assert list(legs["From"])[0] == "Paris"


def test_route_page_saves_and_reopens_from_history(folium_mock: MagicMock) -> None:
    at = fill(page(), "上海", "杭州", ["嘉兴", "苏州"])
    at.button(key="route_optimise").click().run()
    at.button(key="route_save").click().run()
    assert any("Saved" in s.value for s in at.success)
    # a fresh session opens the saved route from history
    at2 = page()
    at2.button(key="route_history_open").click().run()
    assert not at2.exception
    assert at2.text_input(key="route_origin").value == "上海"
    legs = legs_table(at2)
    assert len(legs) == 3


def test_app_shell_lists_route_page_and_engines(folium_mock: MagicMock) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "offline engine" in captions and "offline gazetteer" in captions
    zh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    zh.session_state["lang"] = "zh"
    zh.run()
    assert "离线地名库" in " ".join(c.value for c in zh.sidebar.caption)
    assert zh.title[0].value == "圆桌对话"  # the default page: Chat


def test_route_page_with_osrm_and_fallback_on_failure(folium_mock: MagicMock, fake_osrm, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OSRM_URL", fake_osrm.url)
    monkeypatch.setenv("PROVIDER_TIMEOUT_S", "2")
    st.cache_resource.clear()
    at = fill(page(), "上海", "杭州", ["嘉兴", "苏州"])
    assert at.selectbox(key="route_provider").value == "osrm"
    at.button(key="route_optimise").click().run()
    assert not at.exception and not at.error
    assert any("OSRM" in c.value and "2 upstream" in c.value for c in at.caption)
    assert not any("estimate" in i.value for i in at.info)  # real figures, not estimates
    assert len(fake_osrm.requests_to("/table")) == 1 and len(fake_osrm.requests_to("/route")) == 1

    fake_osrm.set_fault(status=500)
    at.button(key="route_optimise").click().run()
    assert any("OSRM" in e.value and "500" in e.value for e in at.error)
    at.button(key="route_fallback").click().run()
    assert not at.exception
    assert any("offline estimate was used instead" in w.value for w in at.warning)
    assert any("offline estimate" in c.value and "estimated" in c.value for c in at.caption)


def test_map_click_sets_current_location_and_adds_stops(folium_mock: MagicMock) -> None:
    at = page()
    at.radio(key="route_origin_mode").set_value("current").run()
    assert any("Click the map" in i.value for i in at.info)
    folium_mock.return_value = {"last_clicked": {"lat": 31.2304, "lng": 121.4737}}
    at.run()
    assert any("Current location: 31.23040, 121.47370" in i.value for i in at.info)

    # now clicks add stops
    at.radio(key="route_origin_mode").set_value("fixed").run()
    at.text_input(key="route_origin").input("上海")
    folium_mock.return_value = {"last_clicked": {"lat": 30.7522, "lng": 120.75}}
    at.run()
    at.text_input(key="route_destination").input("杭州")
    at.text_area(key="route_paste").input("苏州")
    at.button(key="route_paste_add").click().run()
    at.button(key="route_optimise").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    legs = legs_table(at)
    names = list(legs["From"]) + list(legs["To"])
    assert "Jiaxing" in names  # the clicked point became a stop, named after the city it lies in
    assert len(legs) == 3


def test_app_starts_with_a_broken_policy_file_and_says_so(folium_mock: MagicMock, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "policy.yaml"
    bad.write_text("grades: [G1]\nhotel:\n  caps:\n    cn_t1: {G1: -5}\n", encoding="utf-8")
    monkeypatch.setenv("TRAVEL_POLICY_FILE", str(bad))
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert any("travel policy file could not be loaded" in e.value for e in at.sidebar.error)
