"""Credentials in URL settings never reach a screen, the store or a log (issue "Hardening").

Before: ``LLM_BASE_URL=http://user:pass@host/v1`` was shown in the sidebar, and the 401 the server sent back
(quoting the HTTP Basic credentials httpx built from the URL) was shown in the chat, stored 14 times and
logged. This plants one credential of each kind (a URL's user info, a ``?key=`` and a ``?token=`` query
value, an API key, the Basic base64 of user:password), drives the Chat page into that 401, and searches
everything rendered, every byte of the database and every log line.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from navigo_core.config import get_settings
from navigo_core.errors import ProviderHTTPError
from navigo_core.redact import MASK, redact, redact_url, register_url_secrets
from navigo_core.store import Store, StoreUnavailable

pytestmark = pytest.mark.usefixtures("no_internet")
ROOT = Path(__file__).resolve().parents[2]

USER, PASSWORD = "navigo-user", "pa55-w0rd-planted"
API_KEY = "sk-planted-api-key-4711"
QUERY_KEY, QUERY_TOKEN = "planted-query-key-42", "planted-query-token-43"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
SECRETS = (PASSWORD, API_KEY, QUERY_KEY, QUERY_TOKEN, BASIC, f"{USER}:{PASSWORD}")


def _texts(node: Any) -> Iterator[str]:
    """Every string an AppTest element tree holds (values, labels, captions, the sidebar, errors)."""
    proto = getattr(node, "proto", None)
    if proto is not None:
        yield str(proto)
    for attr in ("value", "label", "body"):
        v = getattr(node, attr, None)
        if isinstance(v, str):
            yield v
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from _texts(child)


def _stored(db: Path) -> str:
    raw = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))
    return raw.decode("utf-8", errors="replace")


def test_redact_masks_one_of_each_kind() -> None:
    register_url_secrets(f"https://{USER}:{PASSWORD}@llm.example/v1?key={QUERY_KEY}")
    text = (f"GET https://{USER}:{PASSWORD}@llm.example/v1?key={QUERY_KEY}&token={QUERY_TOKEN}&q=1 "
            f"Authorization: Basic {BASIC}; Bearer sk-abc-123; access_token={QUERY_TOKEN} the password was {PASSWORD}")
    out = redact(text)
    assert not any(s in out for s in SECRETS), out
    assert f"https://{MASK}@llm.example/v1?key={MASK}&token={MASK}&q=1" in out
    assert "Basic ***" in out and "Bearer ***" in out
    assert redact("Basic economy and Basic information, ?q=token") == "Basic economy and Basic information, ?q=token"
    assert redact_url("http://127.0.0.1:5000") == "http://127.0.0.1:5000"


def test_error_messages_are_redacted_wherever_they_are_rendered() -> None:
    get_settings(osrm_url=f"http://127.0.0.1:5000/osrm?token={QUERY_TOKEN}")  # the settings register it
    exc = ProviderHTTPError(provider="OSRM", status=401, detail=f"denied for token {QUERY_TOKEN}")
    assert QUERY_TOKEN not in exc.message("en") and QUERY_TOKEN not in str(exc) and QUERY_TOKEN not in exc.message("zh")


def test_a_database_url_password_is_never_shown(postgres_server: Any) -> None:
    url = f"postgresql+psycopg://navigo:{PASSWORD}@127.0.0.1:{postgres_server.port}/no_such_db"
    with pytest.raises(StoreUnavailable) as exc:
        Store.from_url(url)
    assert PASSWORD not in exc.value.message("en") and PASSWORD not in str(exc.value)
    good = Store.from_url(postgres_server.create_database().replace("navigo@", f"navigo:{PASSWORD}@"))
    assert PASSWORD not in good.description


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_openai: Any) -> Iterator[Path]:
    fake_openai.api_key = "the-real-key-the-server-wants"  # so every request gets the 401 quoting what it got
    host = fake_openai.url.removeprefix("http://")
    db = tmp_path / "chat.db"
    env = {
        "DATABASE_URL": f"sqlite:///{db}",
        "LLM_BASE_URL": f"http://{USER}:{PASSWORD}@{host}/v1",
        "LLM_API_KEY": API_KEY, "LLM_MAX_RETRIES": "0", "LLM_TIMEOUT_S": "3",
        "OSRM_URL": f"http://127.0.0.1:9/osrm?token={QUERY_TOKEN}", "MATRIX_PROVIDER": "offline",
        "NOMINATIM_URL": f"http://{USER}:{PASSWORD}@127.0.0.1:9/search?key={QUERY_KEY}",
        "PLACES_PROVIDER": "gazetteer", "INTENT_LOG_TEXT": "true",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    get_settings()  # as the app does on start: the settings register their credentials
    st.cache_resource.clear()
    yield db
    st.cache_resource.clear()


def test_planted_credentials_appear_nowhere(planted: Path, fake_openai: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/chat.py").run()
    at.chat_input(key="chat_input").set_value(f"plan a trip for me, my password is {PASSWORD}").run()
    assert not at.exception, at.exception
    assert fake_openai.requests, "the chat reached the (fake) LLM server"
    assert any(r.headers.get("authorization", "").startswith("Basic ") for r in fake_openai.requests)
    rendered = "\n".join(_texts(at._tree))
    assert "401" in rendered or "error" in rendered.lower()  # the failure is shown …
    assert f"@{fake_openai.url.removeprefix('http://')}" in rendered  # … and the LLM's host, in the sidebar
    stored = _stored(planted)
    logged = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    for where, text in (("rendered", rendered), ("stored", stored), ("logged", logged)):
        leaked = [s for s in SECRETS if s in text]
        assert leaked == [], f"{where} text shows {leaked}"
    assert "Basic ***" in stored  # the 401's message was kept, its credentials masked
