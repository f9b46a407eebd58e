"""Secrets never leak (issue "Users, roles and a real deployment").

Every secret-like setting of ``navigo_core/config.py`` gets a recognisable canary value (``LLM_API_KEY``,
``OPENAI_API_KEY``, ``AMAP_KEY``, ``DUFFEL_ACCESS_TOKEN``, and a password in the user info of ``OSRM_URL`` and
``NOMINATIM_URL``, plain and as the HTTP Basic value sent; ``DATABASE_URL``'s and ``LLM_BASE_URL``'s user info
are ``tests/app/test_redaction.py``'s). Then the canaries are searched for in:

(a) every page of ``app_pages/`` rendered through Streamlit's AppTest: ``tests/app/test_secrets_never_leak_pages.py``
    (it imports the canaries and the fakes from here);
(b) the log output at DEBUG while a chat message is routed and a plan is made offline, and while LLM calls
    (plain, streamed, the planner's) fail against a local fake server whose 401 quotes the key;
(c) the store: every row of every table (and every byte of the SQLite file) after chat turns (one pasting
    the key), an application and a plan;
(d) error messages (``NavigoError.message(lang)`` and ``str()``) raised by Duffel, AMap, Nominatim and OSRM
    providers configured with the canaries and pointed at a local server that answers 401 quoting every
    credential it received.

The settings are built from monkeypatched environment variables and ``Settings(...)`` arguments only: every
environment variable of a setting is removed first, no ``.env`` file is read.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Callable
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import MetaData, select

from navigo_core.config import Settings
from navigo_core.errors import NavigoError
from tests.fakes.openai import FakeOpenAI
from tests.fakes.server import FakeServer, Request, Response

pytestmark = pytest.mark.usefixtures("no_internet")
ROOT = Path(__file__).resolve().parents[2]

LLM_KEY = "sk-navigo-LEAK-CANARY-123456"
OPENAI_KEY = "sk-navigo-LEAK-CANARY-openai-654321"
AMAP_KEY = "amap-LEAK-CANARY-778899"
DUFFEL_TOKEN = "duffel_test_LEAK-CANARY-445566"
OSRM_PASSWORD = "osrm-LEAK-CANARY-pw-556677"  # in OSRM_URL's user info (http://navigo:…@host)
NOMINATIM_PASSWORD = "nominatim-LEAK-CANARY-pw-334455"  # in NOMINATIM_URL's user info


def basic(password: str) -> str:
    """The HTTP Basic value httpx sends for ``navigo:<password>`` in a URL's user info."""
    return base64.b64encode(f"navigo:{password}".encode()).decode()


CANARIES = (LLM_KEY, OPENAI_KEY, AMAP_KEY, DUFFEL_TOKEN, OSRM_PASSWORD, NOMINATIM_PASSWORD,
            basic(OSRM_PASSWORD), basic(NOMINATIM_PASSWORD))
MARK = "LEAK-CANARY"  # in every canary: a fragment of one shows too
TODAY = date(2026, 3, 10)


def leaks(text: str) -> list[str]:
    """The canaries (or fragments naming one) in ``text``."""
    found = [c for c in CANARIES if c in text]
    if MARK in text and not found:
        i = text.index(MARK)
        found.append(text[max(0, i - 40): i + 40])
    return found


# --- a hostile server: every answer is a 401 quoting every credential the request carried ------------------

class EchoingDenier(FakeServer):
    """Answers every GET and POST with 401 and a body (in the shapes of Duffel's ``errors[]``, AMap's ``info``,
    OpenAI's ``error.message`` and a plain ``message``) quoting the request's path, query and headers."""

    def __init__(self) -> None:
        super().__init__()
        self.route("GET", r".*", self._deny)
        self.route("POST", r".*", self._deny)

    def _deny(self, req: Request, m: re.Match[str]) -> Response:
        quoted = f"denied {req.method} {req.path}?{req.query} headers={req.headers}"
        return Response(401, {"errors": [{"type": "authentication_error", "title": "Unauthorized", "message": quoted}],
                              "error": {"message": quoted, "code": "invalid_api_key"}, "message": quoted,
                              "status": "0", "info": quoted, "infocode": "10001", "code": "InvalidKey"})


@pytest.fixture
def denier(start_fake: Callable[[EchoingDenier], EchoingDenier]) -> EchoingDenier:
    return start_fake(EchoingDenier())


# --- settings from the (monkeypatched) environment only ---------------------------------------------------

@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No setting comes from the real environment: every settings variable (and OPENAI_API_KEY) is removed."""
    for name in list(Settings.model_fields) + ["openai_api_key"]:
        monkeypatch.delenv(name.upper(), raising=False)
        monkeypatch.delenv(name, raising=False)


def canary_settings(fake_llm: FakeOpenAI, **overrides: Any) -> Settings:
    """Settings holding every canary, the LLM at ``fake_llm`` (with user info in its URL), providers offline."""
    values: dict[str, Any] = {
        "llm_api_key": LLM_KEY, "llm_base_url": fake_llm.url + "/v1",
        "llm_model": "fake-model", "llm_timeout_s": 3.0, "llm_max_retries": 0, "llm_deadline_s": 10.0,
        "amap_key": AMAP_KEY, "duffel_access_token": DUFFEL_TOKEN,
        "osrm_url": f"http://navigo:{OSRM_PASSWORD}@127.0.0.1:9",
        "nominatim_url": f"http://navigo:{NOMINATIM_PASSWORD}@127.0.0.1:9",
        "places_provider": "gazetteer", "matrix_provider": "offline", "flights_provider": "offline",
        "weather_provider": "offline", "poi_provider": "offline", "intent_log_text": True,
        "database_url": "sqlite:///:memory:",
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def test_every_secret_like_setting_has_a_canary() -> None:
    """A new key, token, secret or password setting must be added to the canaries above."""
    secretish = {n for n in Settings.model_fields if re.search(r"(^|_)(key|token|secret|password)($|_)", n)}
    assert secretish == {"amap_key", "duffel_access_token", "llm_api_key"}, secretish


def test_the_openai_api_key_fallback_is_masked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from navigo_core.redact import redact

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    s = Settings(_env_file=None)  # type: ignore[call-arg]
    assert s.llm_api_key == OPENAI_KEY
    assert leaks(redact(f"{s!r} {s.model_dump()} Authorization: Bearer {OPENAI_KEY}")) == []


# --- (b) + (c): logs and the store -------------------------------------------------------------------------

def _dump_store(store: Any) -> str:
    """Every row of every table, as text."""
    engine = store.engine
    meta = MetaData()
    meta.reflect(engine)
    out: list[str] = []
    with engine.connect() as conn:
        for table in meta.sorted_tables:
            out += [f"{table.name}: {tuple(row)}" for row in conn.execute(select(table))]
    return "\n".join(out)


def _logged(caplog: pytest.LogCaptureFixture) -> str:
    return caplog.text + "\n".join(f"{r.getMessage()} {r.exc_text or ''} {r.args}" for r in caplog.records)


def test_offline_chat_plan_and_application_log_and_store_no_secret(
        tmp_path: Path, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    from navigo_core.business.applications import ApplicationService
    from navigo_core.chat import ChatService
    from navigo_core.planner import exports
    from navigo_core.planner.supervisor import make_planner_deps, plan
    from navigo_core.providers.places import GazetteerPlaceProvider
    from navigo_core.scenes import make_gate_context
    from navigo_core.store import Store

    caplog.set_level(logging.DEBUG)
    db = tmp_path / "offline.db"
    settings = canary_settings(fake_openai, database_url=f"sqlite:///{db}")
    offline = settings.model_copy(update={"llm_api_key": ""})  # the same settings, no LLM: routing offline
    store = Store.from_url(settings.database_url)
    gate = make_gate_context(offline, llm=None)
    assert gate.llm is None
    chat = ChatService(store, settings, llm=None, gate_context=gate, places=GazetteerPlaceProvider(), today=TODAY)
    tid = chat.new_thread("alice")
    replies = [chat.send(tid, text) for text in (
        "hello",
        f"my API key is {LLM_KEY} and the AMap key {AMAP_KEY}, plan a trip for me",
        "From Shanghai to Hangzhou",
        f"申请下周三到周五去杭州出差，拜访客户，token {DUFFEL_TOKEN}",
    )]
    rendered = "\n".join(f"{r.text} {r.decision} {r.summary} {r.handoff} {r.error}" for r in replies)
    number = store.threads.get_state(tid)["subject"]["application"]
    application = ApplicationService(store).get(number, "alice")
    assert application.number == number
    deps = make_planner_deps(settings, clock=lambda: datetime(2027, 4, 1, 9, tzinfo=timezone.utc), llm=None,
                             store=store)
    state = plan("From Shanghai to Hangzhou, May 1 to May 5, 2 adults, budget 6000 CNY", deps)
    assert state.status == "done", state.status
    store.plans.save(None, f"trip, key {LLM_KEY}", exports.to_json(state), owner="alice")
    stored = _dump_store(store)
    raw = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*")).decode("utf-8", errors="replace")
    assert "applications" in stored and "plans" in stored and "messages" in stored
    assert number in stored  # the rows were dumped
    for where, text in (("replies", rendered), ("logged", _logged(caplog)), ("stored rows", stored),
                        ("database file", raw), ("plan", exports.to_json(state) + exports.to_markdown(state))):
        assert leaks(text) == [], f"{where} shows {leaks(text)}"
    assert "***" in stored  # the pasted key was kept, masked


def test_failing_llm_calls_log_store_and_raise_no_secret(
        tmp_path: Path, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    from navigo_core.chat import ChatService
    from navigo_core.llm import LLMClient
    from navigo_core.planner.supervisor import make_planner_deps, plan
    from navigo_core.providers.places import GazetteerPlaceProvider
    from navigo_core.scenes import make_gate_context
    from navigo_core.store import Store

    caplog.set_level(logging.DEBUG)
    fake_openai.api_key = "the-key-the-server-wants"  # every request: 401 "Incorrect API key provided: <what it got>"
    db = tmp_path / "llm.db"
    settings = canary_settings(fake_openai, database_url=f"sqlite:///{db}")
    store = Store.from_url(settings.database_url)
    errors: list[NavigoError] = []
    with LLMClient(settings) as llm:
        with pytest.raises(NavigoError) as exc:
            llm.complete([{"role": "user", "content": "hi"}])
        errors.append(exc.value)
        assert fake_openai.requests and fake_openai.requests[-1].headers.get("authorization") == f"Bearer {LLM_KEY}"
        gate = make_gate_context(settings, llm=llm)
        chat = ChatService(store, settings, llm=llm, gate_context=gate, places=GazetteerPlaceProvider(), today=TODAY)
        tid = chat.new_thread("alice")
        reply = chat.send(tid, "plan a trip for me")
        streamed = "".join(reply.stream) if reply.stream is not None else ""
        assert reply.status == "error" and reply.error, (reply.status, reply.text)
        deps = make_planner_deps(settings.model_copy(update={"flights_provider": "offline"}),
                                 clock=lambda: datetime(2027, 4, 1, 9, tzinfo=timezone.utc), llm=llm)
        state = plan("From Shanghai to Hangzhou, May 1 to May 5, 2 adults, budget 6000 CNY", deps)
    assert state.status == "done"
    assert any(e.mode == "llm_fallback" for e in state.decision_log)
    messages = [f"{e.message(lang)} | {e} | {e.args} | {getattr(e, 'params', '')}" for e in errors
                for lang in ("en", "zh")]
    assert any("401" in m or "API key" in m or "key" in m.lower() for m in messages), messages
    from navigo_core.planner import exports

    for where, text in (("errors", "\n".join(messages)), ("chat reply", f"{streamed} {reply.text} {reply.error}"),
                        ("logged", _logged(caplog)), ("stored rows", _dump_store(store)),
                        ("plan", exports.to_json(state))):
        assert leaks(text) == [], f"{where} shows {leaks(text)}"


# --- (d) providers configured with the canaries, refused by a server quoting them ---------------------------

def test_provider_errors_show_no_secret(denier: EchoingDenier, fake_openai: FakeOpenAI,
                                        caplog: pytest.LogCaptureFixture) -> None:
    from navigo_core.providers.selection import make_providers

    caplog.set_level(logging.DEBUG)
    settings = canary_settings(
        fake_openai, amap_base_url=denier.url, duffel_base_url=denier.url,
        osrm_url=denier.url.replace("://", f"://navigo:{OSRM_PASSWORD}@"),
        nominatim_url=denier.url.replace("://", f"://navigo:{NOMINATIM_PASSWORD}@"),
        flights_provider="duffel")
    calls: dict[str, Callable[[], Any]] = {}
    duffel = make_providers(settings).flights
    calls["duffel"] = lambda: duffel.search("PVG", "PEK", date(2027, 5, 1), adults=1)
    amap_places = make_providers(settings.model_copy(update={"places_provider": "amap"})).places
    calls["amap places"] = lambda: amap_places.search("杭州")
    nominatim = make_providers(settings.model_copy(update={"places_provider": "nominatim"})).places
    calls["nominatim"] = lambda: nominatim.search("Hangzhou")
    from navigo_core.providers.places import GazetteerPlaceProvider

    points = GazetteerPlaceProvider().search("Hangzhou", limit=1) + GazetteerPlaceProvider().search("Shanghai", limit=1)
    assert len(points) == 2
    for name in ("amap", "osrm"):
        matrix = make_providers(settings.model_copy(update={"matrix_provider": name})).matrix
        calls[f"{name} matrix"] = lambda m=matrix: m.matrix(points)
    seen: list[str] = []
    for name, call in calls.items():
        with pytest.raises(NavigoError) as exc:
            call()
        err = exc.value
        for text in (err.message("en"), err.message("zh"), str(err), repr(err)):
            assert leaks(text) == [], f"{name}: {type(err).__name__} shows {leaks(text)}: {text}"
        seen.append(name)
    assert len(seen) == 5
    got = "\n".join(f"{r.path} {r.query} {r.headers}" for r in denier.requests)
    for sent in (DUFFEL_TOKEN, AMAP_KEY, basic(OSRM_PASSWORD), basic(NOMINATIM_PASSWORD)):
        assert sent in got, sent  # every credential was sent, so every 401 quoted one
    assert leaks(_logged(caplog)) == [], leaks(_logged(caplog))


def test_the_pages_error_text_masks_before_escaping() -> None:
    """``ui.markdown.error_text`` (every page's error box) builds the message from the error's parameters to escape
    them; it masks them first (before the fix it showed a provider's reply quoting the key, and escaping
    ``duffel_test_…`` into ``duffel\\_test\\_…`` would have hidden it from any mask applied afterwards)."""
    from navigo_core.errors import ProviderHTTPError
    from ui.markdown import error_text

    Settings(_env_file=None, duffel_access_token=DUFFEL_TOKEN, amap_key=AMAP_KEY)  # type: ignore[call-arg]
    exc = ProviderHTTPError(provider="Duffel", status=401, detail=f"bad token {DUFFEL_TOKEN}; key={AMAP_KEY}")
    for lang in ("en", "zh"):
        text = error_text(exc, lang)
        assert "401" in text and "\\*\\*\\*" in text  # the mask, escaped: Markdown shows ***
        assert leaks(text) == [] and leaks(text.replace("\\", "")) == [], text
