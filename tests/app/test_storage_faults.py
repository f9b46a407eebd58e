"""Storage faults become messages (issue "Hardening").

Before: a damaged database file or a read-only one gave raw tracebacks with paths and SQL on every page
(Streamlit's error details were on). Now the sidebar says what is wrong in one sentence and what to do,
every page that needs no writes still renders, and a write says why it cannot be saved.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from navigo_core.store import Store

pytestmark = pytest.mark.usefixtures("no_internet")
ROOT = Path(__file__).resolve().parents[2]
PAGES = ["app_pages/chat.py", "app_pages/plan.py", "app_pages/route.py", "app_pages/approvals.py",
         "app_pages/reimbursement.py", "app_pages/router_lab.py"]


def test_streamlit_shows_no_error_details() -> None:
    """An uncaught error shows Streamlit's short notice only: no traceback, no path, no message. (The legacy
    ``false`` means "stacktrace" in Streamlit 1.67: file paths and source lines stayed on screen.)"""
    from streamlit import config as st_config
    from streamlit.elements import exception as st_exception
    from streamlit.proto.Exception_pb2 import Exception as ExceptionProto

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    value = config["client"]["showErrorDetails"]
    assert value == "none"
    before = st_config.get_option("client.showErrorDetails")
    st_config.set_option("client.showErrorDetails", value)
    try:
        try:
            raise ImportError(f"cannot import name 'x' from {ROOT / 'navigo_core' / 'x.py'}")
        except ImportError as exc:
            proto = ExceptionProto()
            st_exception.marshall(proto, exc, apply_show_error_details=True)
    finally:
        st_config.set_option("client.showErrorDetails", before)
    assert list(proto.stack_trace) == [] and not proto.type
    assert str(ROOT) not in proto.message and "ImportError" not in proto.message


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for var in ("LLM_API_KEY", "OPENAI_API_KEY", "TRAVEL_POLICY_FILE", "EMPLOYEE_GRADE", "WEATHER_ONLINE"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    yield tmp_path
    st.cache_resource.clear()


def _everything(at: AppTest) -> str:
    parts = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success", "title", "exception"):
        parts += [str(getattr(e, "value", "") or getattr(e, "message", "")) for e in getattr(at, kind)]
    return "\n".join(parts)


def as_carol() -> AppTest:
    """The app as carol (demo mode), a traveller and an approver: every page opens for her."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["auth.demo_user"] = "carol"
    return at.run()


def _visit_every_page(at: AppTest, tmp_path: Path, sentence: str) -> None:
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert at.title, page  # the page itself rendered, not just the sidebar
        errors = [e.value for e in at.sidebar.error]
        assert any(sentence in e for e in errors), (page, errors)
        text = _everything(at)
        assert str(tmp_path) not in text and "Traceback" not in text and "sqlite3." not in text, page
        assert "SELECT " not in text and "INSERT " not in text, page


def test_a_damaged_database_file_gives_a_sentence_and_every_page_renders(env: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    bad = env / "navigo.db"
    bad.write_bytes(b"\x00garbage, not a database\x00" * 500)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{bad}")
    at = as_carol()
    assert not at.exception, at.exception
    _visit_every_page(at, env, "The database file navigo.db is damaged")
    # a write says why it cannot be saved, in one sentence
    at.switch_page("app_pages/chat.py").run()
    at.chat_input(key="chat_input").set_value("hello").run()
    assert not at.exception, at.exception
    assert any("is damaged and cannot be read" in e.value for e in at.main.error), [e.value for e in at.main.error]


def test_a_read_only_database_still_shows_its_data(env: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    db = env / "navigo.db"
    Store.from_url(f"sqlite:///{db}").routes.save("Shanghai → Hangzhou", {"origin": "Shanghai"}, {"order": []}, owner="carol")
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///file:{db}?mode=ro&uri=true")
    at = as_carol()
    assert not at.exception, at.exception
    _visit_every_page(at, env, "The database navigo.db is read-only")
    at.switch_page("app_pages/route.py").run()
    assert any("Shanghai → Hangzhou" in str(o) for s in at.selectbox for o in s.options), "the saved route is listed"
    at.switch_page("app_pages/chat.py").run()
    at.chat_input(key="chat_input").set_value("hello").run()
    assert not at.exception, at.exception
    assert any("read-only, so nothing can be saved" in e.value for e in at.main.error)
