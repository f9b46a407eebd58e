"""Shared pytest fixtures.

Keep fixtures here generic; add yours in their own section. Fake HTTP servers
live in ``tests/fakes/`` (base: ``tests/fakes/server.py``); start one with the
``start_fake`` factory so it is always stopped, e.g.::

    @pytest.fixture
    def fake_weather(start_fake):
        return start_fake(FakeOpenMeteo())
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from navigo_core.config import Settings
from tests.fakes.amap import FakeAmap
from tests.fakes.nominatim import FakeNominatim
from tests.fakes.openai import FAKE_API_KEY, FakeOpenAI
from tests.fakes.osrm import FakeOsrm
from tests.fakes.server import FakeServer

if TYPE_CHECKING:  # imported lazily: the openai SDK is slow to import
    from navigo_core.llm import LLMClient

S = TypeVar("S", bound=FakeServer)


# --- test order ---------------------------------------------------------------

#: The browser modules are split into this many groups, each driven one module after another by one worker.
E2E_GROUPS = 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Scheduling for pytest-xdist (``make test``: ``-n 2 --dist loadgroup``). The browser modules (``e2e``) are dealt
    into :data:`E2E_GROUPS` groups, so that at most that many app servers and browsers run at once; every other module
    is a group of its own (its module fixtures are built once). The browser groups go first, then the modules marked
    ``heavy`` (the type check, the store's concurrency runs, the regex and prefilter sweeps, the injection model's
    rebuild), so the long ones start early instead of being the last to finish. Within a group the order stays as
    collected."""
    modules = sorted({item.nodeid.split("::")[0] for item in items if item.get_closest_marker("e2e")})
    e2e_group = {module: f"e2e-{i % E2E_GROUPS}" for i, module in enumerate(modules)}
    for item in items:
        module = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(e2e_group.get(module, module)))
    items.sort(key=lambda item: 0 if item.get_closest_marker("e2e") else 1 if item.get_closest_marker("heavy") else 2)


# --- fake servers -----------------------------------------------------------

@pytest.fixture
def start_fake() -> Iterator[Callable[[S], S]]:
    """Factory: ``start_fake(server)`` starts a FakeServer and stops it after the test."""
    started: list[FakeServer] = []

    def start(server: S) -> S:
        started.append(server.start())
        return server

    yield start
    for server in reversed(started):
        server.stop()


@pytest.fixture
def fake_osrm(start_fake: Callable[[FakeOsrm], FakeOsrm]) -> FakeOsrm:
    """A running fake OSRM (``fake_osrm.url``); see tests/fakes/osrm.py for its knobs."""
    return start_fake(FakeOsrm())


@pytest.fixture
def fake_amap(start_fake: Callable[[FakeAmap], FakeAmap]) -> FakeAmap:
    """A running fake AMap web service; its key is ``fake_amap.key``."""
    return start_fake(FakeAmap())


@pytest.fixture
def fake_nominatim(start_fake: Callable[[FakeNominatim], FakeNominatim]) -> FakeNominatim:
    """A running fake Nominatim; fill ``fake_nominatim.results[query]``."""
    return start_fake(FakeNominatim())


# --- network guard ----------------------------------------------------------

@pytest.fixture(autouse=True)
def forget_registered_secrets() -> Iterator[None]:
    """Every test starts and ends with the secrets registered for masking (:mod:`navigo_core.redact`) as they
    were before it: a test's fake credentials (a URL user name such as ``navigo``) must not mask words in
    the tests that run after it in the same process."""
    from navigo_core import redact

    with redact._lock:
        saved, pattern = set(redact._secrets), redact._pattern
    yield
    with redact._lock:
        redact._secrets.clear()
        redact._secrets.update(saved)
        redact._pattern = pattern


@pytest.fixture(autouse=True)
def no_internet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test on any connection to a non-loopback address (tests must never touch the internet).

    Applies to every test (autouse); a module may still name it (``usefixtures("no_internet")``).
    """
    real_connect = socket.socket.connect

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and address:
            host = str(address[0])
            try:
                loopback = ipaddress.ip_address(host.split("%")[0]).is_loopback
            except ValueError:
                loopback = host == "localhost"
            if not loopback:
                raise AssertionError(f"test tried to connect to {host}: tests must not use the network")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)


# --- LLM (fake OpenAI-compatible server) -------------------------------------

@pytest.fixture
def fake_openai(start_fake: Callable[[FakeOpenAI], FakeOpenAI]) -> FakeOpenAI:
    """A running fake OpenAI-compatible API (base URL ``fake_openai.url + "/v1"``); see tests/fakes/openai.py."""
    return start_fake(FakeOpenAI())


@pytest.fixture
def fake_llm_settings(fake_openai: FakeOpenAI) -> Callable[..., Settings]:
    """Factory: Settings pointing the LLM layer at ``fake_openai`` (key FAKE_API_KEY, 2 s timeout, no retries).

    Keyword arguments override fields, e.g. ``fake_llm_settings(llm_timeout_s=0.3)``.
    """
    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "llm_base_url": fake_openai.url + "/v1", "llm_api_key": FAKE_API_KEY, "llm_model": "fake-model",
            "llm_timeout_s": 2.0, "llm_max_retries": 0, "llm_structured_output": "auto",
            "llm_embedding_model": "fake-embed",
        }
        return Settings(**{**values, **overrides})

    return make


@pytest.fixture
def fake_llm(fake_llm_settings: Callable[..., Settings]) -> Iterator[LLMClient]:
    """An LLMClient talking to ``fake_openai`` with the defaults of ``fake_llm_settings``."""
    from navigo_core.llm import LLMClient

    with LLMClient(fake_llm_settings()) as client:
        yield client


# --- flights and weather (fake Duffel, fake Open-Meteo) ----------------------

@pytest.fixture
def fake_duffel(start_fake: Callable[[FakeServer], FakeServer]) -> FakeServer:
    """A running fake Duffel API (token ``fake_duffel.token``); see tests/fakes/duffel.py."""
    from tests.fakes.duffel import FakeDuffel

    return start_fake(FakeDuffel())


@pytest.fixture
def fake_open_meteo(start_fake: Callable[[FakeServer], FakeServer]) -> FakeServer:
    """A running fake Open-Meteo (``fake_open_meteo.url``); script ``fake_open_meteo.days``."""
    from tests.fakes.open_meteo import FakeOpenMeteo

    return start_fake(FakeOpenMeteo())


@pytest.fixture
def fake_overpass(start_fake: Callable[[FakeServer], FakeServer]) -> FakeServer:
    """A running fake Overpass API (OVERPASS_URL = ``fake_overpass.api_url``); set ``fake_overpass.elements``."""
    from tests.fakes.overpass import FakeOverpass

    return start_fake(FakeOverpass())


# --- PostgreSQL (a throw-away server, tests/postgres.py) ---------------------

@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """One PostgreSQL server for the session (initdb + pg_ctl in a temp folder, a free port). A server that
    cannot start fails the tests that need it: they are never skipped."""
    from tests.postgres import PostgresServer, PostgresUnavailable

    try:
        server = PostgresServer().start()
    except PostgresUnavailable as exc:
        pytest.fail(f"the PostgreSQL test server did not start: {exc}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server: Any) -> str:
    """The SQLAlchemy URL of a new, empty database on the session's PostgreSQL server."""
    return str(postgres_server.create_database())


@pytest.fixture(scope="session")
def postgres_store_template(postgres_server: Any) -> str:
    """The name of a database on the session's server holding the store's schema, migrated once: ``store_url``
    copies it instead of migrating an empty database for every test (the migrations themselves are tested on
    empty databases, tests/unit/test_store_migrations.py)."""
    from sqlalchemy.engine import make_url

    from navigo_core.store import Store

    url = str(postgres_server.create_database())
    store = Store.from_url(url)
    store.engine.dispose()  # a template must have no connection when it is copied
    return str(make_url(url).database)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    """The URL of a fresh store database, once on SQLite (a new file in ``tmp_path``) and once on the session's
    PostgreSQL server (a new database, a copy of ``postgres_store_template``): a test taking it runs on both
    backends and never sees another test's rows. Dispose the engine of a Store built on it when done (the
    server's connection limit)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    server = request.getfixturevalue("postgres_server")
    return str(server.create_database(template=request.getfixturevalue("postgres_store_template")))


# --- the risk guard's learned detector, pinned (LLM-scan tests) ---------------------------

@pytest.fixture
def pin_injection_detector(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """``pin(ratio)``: the learned injection detector scores every text at ``ratio`` × its threshold, so a
    test of the LLM scan's advisory rule does not depend on the shipped model (below 1: never flags alone)."""
    from navigo_core.security import classifier

    def pin(ratio: float) -> None:
        monkeypatch.setattr(classifier, "injection_threshold", lambda text: 0.6)
        monkeypatch.setattr(classifier, "injection_score", lambda text: 0.6 * ratio)

    return pin
