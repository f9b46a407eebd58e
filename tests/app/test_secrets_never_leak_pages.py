"""Secrets never leak from a page (issue "Users, roles and a real deployment"; the core's part, logs, the store
and error messages, is ``tests/unit/test_secrets_never_leak.py``, whose canaries these are).

Every page of ``app_pages/`` is rendered through AppTest, as a traveller and as an approver, with every
secret-like setting holding a canary (from monkeypatched environment variables; the real environment's are
removed), and every element's protobuf (text, markdown, caption, JSON, dataframe bytes, widget labels and
values, the sidebar) is searched for them; then the Chat page sends a message whose LLM call is refused with a
401 quoting the key it got.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from navigo_core.config import Settings
from tests.fakes.openai import FakeOpenAI
from tests.unit.test_secrets_never_leak import (
    AMAP_KEY,
    DUFFEL_TOKEN,
    LLM_KEY,
    NOMINATIM_PASSWORD,
    OSRM_PASSWORD,
    EchoingDenier,
    _logged,
    clean_env,  # noqa: F401 - autouse: no setting from the real environment
    leaks,
)

pytestmark = pytest.mark.usefixtures("no_internet")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def denier(start_fake: Callable[[EchoingDenier], EchoingDenier]) -> EchoingDenier:
    return start_fake(EchoingDenier())


def _texts(node: Any) -> Iterator[str]:
    """Every string an AppTest element tree holds: each element's protobuf (text, markdown, caption, JSON,
    dataframe bytes, widget labels, options and values), the sidebar included."""
    proto = getattr(node, "proto", None)
    if proto is not None:
        yield str(proto)
        yield proto.SerializeToString().decode("utf-8", errors="replace")
    for attr in ("value", "label", "body"):
        v = getattr(node, attr, None)
        if isinstance(v, str):
            yield v
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from _texts(child)


PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "app_pages").glob("*.py"))


@pytest.fixture
def canary_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI,
               denier: EchoingDenier) -> Iterator[None]:
    import streamlit as st

    fake_openai.api_key = "the-key-the-server-wants"  # the chat's LLM call gets the 401 quoting the canary
    env = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'pages.db'}",
        "LLM_API_KEY": LLM_KEY, "LLM_BASE_URL": fake_openai.url + "/v1",
        "LLM_MAX_RETRIES": "0", "LLM_TIMEOUT_S": "3", "LLM_DEADLINE_S": "10",
        "AMAP_KEY": AMAP_KEY, "AMAP_BASE_URL": denier.url,
        "DUFFEL_ACCESS_TOKEN": DUFFEL_TOKEN, "DUFFEL_BASE_URL": denier.url,
        "OSRM_URL": denier.url.replace("://", f"://navigo:{OSRM_PASSWORD}@"),
        "NOMINATIM_URL": denier.url.replace("://", f"://navigo:{NOMINATIM_PASSWORD}@"),
        "INTENT_LOG_TEXT": "true", "AUTH_MODE": "demo",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    Settings(_env_file=None)  # type: ignore[call-arg]  # as the app does on start: the credentials are registered
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def test_no_page_shows_a_secret(canary_env: None, caplog: pytest.LogCaptureFixture) -> None:
    from streamlit.testing.v1 import AppTest

    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    for user in ("alice", "carol"):  # a traveller, and an approver (the Approvals page's content)
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
        at.query_params["user"] = user
        at.run()
        assert not at.exception, at.exception
        for page in PAGES:
            at.switch_page(page).run()
            assert not at.exception, (page, at.exception)
            rendered = "\n".join(_texts(at._tree))
            assert leaks(rendered) == [], f"{page} ({user}) shows {leaks(rendered)}"
            seen.append(page)
    assert set(seen) == set(PAGES) and len(PAGES) >= 6
    # the Chat page after a message whose LLM call is refused with a 401 quoting the key
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90).run()
    at.switch_page("app_pages/chat.py").run()
    at.chat_input(key="chat_input").set_value(f"plan a trip for me, my key is {LLM_KEY}").run()
    assert not at.exception, at.exception
    rendered = "\n".join(_texts(at._tree))
    assert "***" in rendered or "401" in rendered or "error" in rendered.lower()
    assert leaks(rendered) == [], f"the chat shows {leaks(rendered)}"
    assert leaks(_logged(caplog)) == [], leaks(_logged(caplog))


def test_route_and_plan_runs_against_refusing_providers_show_no_secret(
        canary_env: None, denier: EchoingDenier, caplog: pytest.LogCaptureFixture) -> None:
    """The Route page (AMap place search, OSRM distances) and the Plan page (Duffel flights, AMap places) run
    against a server that answers every request with a 401 quoting the credentials it got."""
    from unittest.mock import patch

    from streamlit.testing.v1 import AppTest

    caplog.set_level(logging.DEBUG)
    with patch("streamlit_folium.st_folium", return_value={"last_clicked": None}):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90).run()
        assert not at.exception, at.exception
        at.switch_page("app_pages/route.py").run()
        at.text_input(key="route_origin").input("上海")
        at.text_input(key="route_destination").input("杭州")
        at.text_area(key="route_paste").input("嘉兴\n苏州")
        at.button(key="route_paste_add").click().run()
        at.button(key="route_optimise").click().run()
        assert not at.exception, at.exception
        route_rendered = "\n".join(_texts(at._tree))
        at.switch_page("app_pages/plan.py").run()
        at.text_area(key="plan_text").input("From Beijing to Hangzhou, May 1 to May 5, 2 adults, budget 9000 CNY")
        at.button(key="plan_run").click().run()
        assert not at.exception, at.exception
        plan_rendered = "\n".join(_texts(at._tree))
    assert denier.requests, "the providers reached the refusing server"
    for where, text in (("route page", route_rendered), ("plan page", plan_rendered), ("logged", _logged(caplog))):
        assert leaks(text) == [], f"{where} shows {leaks(text)}"
