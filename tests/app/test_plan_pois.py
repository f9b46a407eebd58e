"""AppTest for the Plan page with online points of interest (POI_ONLINE) against the fake Overpass."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from unittest.mock import patch

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.fakes.overpass import FakeOverpass

pytestmark = pytest.mark.usefixtures("no_internet")

ROOT = Path(__file__).resolve().parents[2]
KYOTO = "From Shanghai to Kyoto, May 1 to May 5, 2 adults, budget 20000 CNY"


@pytest.fixture
def poi_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_overpass: FakeOverpass) -> Iterator[FakeOverpass]:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'plan.db'}")
    monkeypatch.setenv("OVERPASS_URL", fake_overpass.api_url)
    monkeypatch.setenv("PROVIDER_TIMEOUT_S", "2")
    for var in ("LLM_API_KEY", "OPENAI_API_KEY", "DUFFEL_ACCESS_TOKEN", "WEATHER_ONLINE", "POI_ONLINE",
                "POI_PROVIDER", "NOMINATIM_URL", "AMAP_KEY", "OSRM_URL"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    yield fake_overpass
    st.cache_resource.clear()


def run_kyoto() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / "plan.py"), default_timeout=120).run()
    at.text_area(key="plan_text").input(KYOTO)
    with patch("streamlit_folium.st_folium", return_value={}):
        at.button(key="plan_run").click().run()
    assert not at.exception, at.exception
    return at


def test_online_places_show_with_their_source_and_a_day_map(poi_env: FakeOverpass, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POI_ONLINE", "true")
    at = run_kyoto()
    md = " ".join(m.value for m in at.markdown)
    assert "Fake City Museum" in md and "from OpenStreetMap" in md
    assert any("come from OpenStreetMap" in c.value for c in at.caption)
    assert [c for c in at.caption if c.value.startswith("Day route from the city centre")]  # real places: a map
    assert len(poi_env.requests_to("/api/interpreter")) == 1


def test_offline_by_default_the_page_sends_no_place_request(poi_env: FakeOverpass) -> None:
    at = run_kyoto()
    assert any("No place data for Kyoto" in c.value for c in at.caption)
    assert "OpenStreetMap" not in " ".join(m.value for m in at.markdown)
    assert poi_env.requests == []
