"""Issue 14: user text is never rendered as Markdown (ui/markdown.py), on every page that shows it.

A justification ``![b](http://127.0.0.1:9999/x)`` made the approver's browser fetch that URL; the
same through chat history, the claim summary and Route errors. Each test puts that text where a
user can, renders the page, and checks every element Streamlit renders as Markdown (bodies and
widget labels, which render images too): the text is there, escaped, and no image or link forms.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from unittest.mock import patch

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from navigo_core.business.applications import ApplicationService
from navigo_core.store import Store

pytestmark = pytest.mark.usefixtures("no_internet")

ROOT = Path(__file__).resolve().parents[2]
EVIL = "![b](http://127.0.0.1:9999/x)"
URL = "127.0.0.1:9999/x"
# an image or link still forms when "[" … "](" appear without a backslash before them
FORMS = re.compile(r"(?<!\\)\[[^\]\n]*(?<!\\)\]\s*\(")

BODIES = ("markdown", "caption", "error", "warning", "info", "success", "title", "subheader", "header")
LABELS = ("button", "checkbox", "expander", "text_input", "text_area", "selectbox", "radio", "toggle")


def rendered(at: AppTest) -> list[str]:
    """The Markdown source of every element body and widget label on the page."""
    out: list[str] = []
    for kind in BODIES:
        out += [str(e.value) for e in getattr(at, kind)]
    for kind in LABELS:
        out += [str(getattr(e, "label", "") or "") for e in getattr(at, kind)]
    return out


def assert_escaped(at: AppTest) -> None:
    assert not at.exception, at.exception
    texts = rendered(at)
    assert any(URL in s for s in texts), "the user's text is not on the page at all"
    bad = [s for s in texts if FORMS.search(s)]
    assert bad == [], bad


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'escape.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    for var in ("LLM_API_KEY", "OPENAI_API_KEY", "DUFFEL_ACCESS_TOKEN", "WEATHER_ONLINE", "EMPLOYEE_GRADE",
                "TRAVEL_POLICY_FILE", "OSRM_URL", "AMAP_KEY", "NOMINATIM_URL", "MAP_TILES"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    yield url
    st.cache_resource.clear()


def page(name: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / f"{name}.py"), default_timeout=120)
    if name == "approvals":  # the page needs an approver: carol (sales and engineering) decides alice's
        at.session_state["auth.demo_user"] = "carol"
    return at.run()


# --- chat history, thread titles, errors ---------------------------------------------------------

def test_chat_history_and_thread_title_are_escaped(env: str) -> None:
    at = page("chat")
    at.chat_input(key="chat_input").set_value(f"{EVIL} hello").run()
    assert_escaped(at)
    user = [m.markdown[0].value for m in at.chat_message if m.name == "user" and m.markdown]
    assert user and user[0].startswith("\\!\\[b\\]")
    # the thread, listed in the sidebar by its first message, is escaped there too (a new thread shows it)
    at.button(key="chat_new").click().run()
    assert_escaped(at)


def test_chat_input_stops_at_the_length_limit(env: str) -> None:
    """The chat input takes at most MAX_MESSAGE_CHARS (the browser shows the count); the service refuses
    anything longer that reaches it anyway (tests/unit/test_limits.py)."""
    at = page("chat")
    at.chat_input(key="chat_input").set_value("1" * 32_000).run()
    assert not at.exception, at.exception
    user = [m.markdown[0].value for m in at.chat_message if m.name == "user" and m.markdown]
    assert [len(u) for u in user] == [2000]
    assert [m for m in at.chat_message if m.name == "assistant"]


# --- approvals: the justification, the card, the audit list ----------------------------------------

def test_approval_justification_is_escaped(env: str) -> None:
    svc = ApplicationService(Store.from_url(env))
    app = svc.create(owner="alice", owner_department="sales", purpose=f"meeting {EVIL}", origin="上海", cities=["杭州"],
                     start_date=date(2026, 5, 1), end_date=date(2026, 5, 3), estimated_cost=3000,
                     excesses=[{"rule_id": "HOTEL-1", "rule": "Hotel cap", "amount_over": 500, "justification": EVIL}])
    svc.submit(app.number, actor="alice")
    at = page("approvals")
    assert_escaped(at)
    md = " ".join(m.value for m in at.markdown)
    assert "_\\!\\[b\\](http://127.0.0.1:9999/x)_" in md  # the traveller's words, in italics, as typed
    assert "**" in md  # the app's own Markdown stays


# --- claims: the summary and the import errors --------------------------------------------------------

def paste(at: AppTest, text: str) -> AppTest:
    at.text_area(key="reimb_paste").input(text)
    at.button(key="reimb_paste_add").click().run()
    return at


def test_claim_summary_city_is_escaped(env: str) -> None:
    at = paste(page("reimbursement"), f"date,city,category,amount,currency,note,receipt\n"
                                      f"2026-05-01,{EVIL},hotel,9650,CNY,night,yes\n")
    at.button(key="reimb_check").click().run()
    assert_escaped(at)


def test_claim_import_errors_are_escaped_and_short(env: str) -> None:
    at = paste(page("reimbursement"), f"date,city,category,amount\n2026-05-01,杭州,hotel,{EVIL}{'9' * 100_000}\n")
    assert_escaped(at)
    assert at.error and max(len(e.value) for e in at.error) < 2000


def test_claim_upload_over_the_row_limit_is_refused(env: str) -> None:
    rows = "".join(f"2026-05-01,杭州,meal,{i % 90 + 1},CNY,,yes\n" for i in range(5001))
    at = paste(page("reimbursement"), "date,city,category,amount,currency,note,receipt\n" + rows)
    assert not at.exception, at.exception
    assert any("5001" in e.value and "5000" in e.value for e in at.error), [e.value for e in at.error]


# --- route: errors naming a place, map popups ---------------------------------------------------------

def test_route_error_naming_the_users_place_is_escaped(env: str) -> None:
    with patch("streamlit_folium.st_folium", return_value={"last_clicked": None}):
        at = page("route")
        at.text_input(key="route_origin").input(EVIL)
        at.text_input(key="route_destination").input("杭州")
        at.text_area(key="route_paste").input("苏州")
        at.button(key="route_paste_add").click().run()
        at.button(key="route_optimise").click().run()
    assert_escaped(at)
    assert at.error


def test_map_popups_and_tooltips_show_names_as_text() -> None:
    from navigo_core.maps import build_route_map
    from navigo_core.providers.places.base import Place

    points = [Place(name=f'<img src="http://{URL}">', lat=31.2, lon=121.4), Place(name=EVIL, lat=30.2, lon=120.1)]
    html = build_route_map(points, None, tiles="none", tiles_url="", attribution="", lang="en",
                           asset_prefix="/app/static/vendor/leaflet").get_root().render()
    assert '<img src="http://' not in html and "&lt;img" in html  # the tooltip: entities
    assert "content.textContent" in html  # the popup: a text node, never HTML


# --- plan: questions quoting the user's words, the summary -------------------------------------------

def test_plan_questions_and_request_echo_are_escaped(env: str) -> None:
    at = page("plan")
    at.text_area(key="plan_text").input(f"I want to go to {EVIL} in May")
    at.button(key="plan_run").click().run()
    assert not at.exception, at.exception
    texts = rendered(at)
    assert [s for s in texts if FORMS.search(s)] == []


def test_plan_over_the_length_limit_says_so(env: str) -> None:
    at = page("plan")
    at.text_area(key="plan_text").input("From Shanghai to Hangzhou " + "1" * 5000)
    at.button(key="plan_run").click().run()
    assert not at.exception, at.exception
    assert any("2000" in e.value for e in at.error), [e.value for e in at.error]
    assert "plan.state" not in at.session_state  # nothing planned, nothing saved


# --- router lab -------------------------------------------------------------------------------------

def test_router_lab_over_the_length_limit_says_so(env: str) -> None:
    at = page("router_lab")
    at.text_input(key="lab_message").input("1" * 5000)
    at.button(key="lab_route").click().run()
    assert not at.exception, at.exception
    assert any("5000" in e.value for e in at.error)


def test_approval_comment_over_the_length_limit_is_refused(env: str) -> None:
    svc = ApplicationService(Store.from_url(env))
    app = svc.create(owner="alice", owner_department="sales", purpose="meeting", origin="上海", cities=["杭州"], start_date=date(2026, 5, 1),
                     end_date=date(2026, 5, 3), estimated_cost=3000)
    svc.submit(app.number, actor="alice")
    at = page("approvals")
    at.text_input(key=f"approval_comment_{app.number}").input("x" * 3000)
    at.button(key=f"approval_approve_{app.number}").click().run()
    assert not at.exception, at.exception
    assert any("3000" in e.value for e in at.error), [e.value for e in at.error]
    assert svc.get(app.number).status == "submitted"  # nothing stored half-way
