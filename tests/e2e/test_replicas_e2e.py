"""A real deployment: two replicas of the app (two `streamlit run app.py` processes on their own ports) share one
PostgreSQL database, one identity provider and one secrets file (its ``redirect_uri`` has Streamlit's ``{port}``
placeholder, so each replica's callback is its own; the cookie secret and the client are the same).

alice signs in on replica A and starts a conversation; signed in on replica B (another browser context), she
finds it in her list, opens it with its messages and writes a follow-up, which replica A shows after a reload.
Nothing of a conversation lives in a replica's memory: every page draws from the shared store.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import OfflinePage, wait_for_app
from tests.e2e.oidc import Server, sign_in, start_app_with_auth, start_oidc_provider, write_auth_secrets

pytestmark = pytest.mark.e2e

ALICE: dict[str, str | bool] = {"sub": "alice-sub-0001", "email": "alice@example.com", "name": "Alice from the IdP",
                                "email_verified": True}
T = 60_000  # a busy machine: generous waits on states, never durations


@pytest.fixture(scope="module")
def oidc_provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_oidc_provider(tmp_path_factory.mktemp("oidc"), users=[ALICE])
    yield server
    server.stop()


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory, oidc_provider: Server,
             postgres_server: Any) -> Iterator[tuple[Server, Server]]:
    database_url = str(postgres_server.create_database())
    assert database_url.startswith("postgresql+psycopg://")
    secrets_file = write_auth_secrets(tmp_path_factory.mktemp("deployment") / "secrets.toml", oidc_provider.url)
    started: list[Server] = []
    try:
        for name in ("replica-a", "replica-b"):
            started.append(start_app_with_auth(tmp_path_factory.mktemp(name), secrets_file,
                                               extra_env={"DATABASE_URL": database_url}))
        a, b = started
        assert a.url != b.url
        yield a, b
    finally:
        for server in started:
            server.stop()


def send(page: Page, text: str) -> None:
    """Send one chat message and wait until its reply is drawn from the store."""
    messages = page.get_by_test_id("stChatMessage")
    before = messages.count()
    box = page.get_by_test_id("stChatInputTextArea")
    expect(box).to_be_enabled(timeout=T)
    box.fill(text)
    box.press("Enter")
    expect(messages).to_have_count(before + 2, timeout=T)
    expect(box).to_be_enabled(timeout=T)
    wait_for_app(page)


def thread_of(page: Page) -> str:
    expect(page).to_have_url(re.compile(r"[?&]thread="), timeout=T)
    return parse_qs(urlparse(page.url).query)["thread"][0]


def test_two_replicas_share_one_database(browser: Browser, oidc_provider: Server,
                                         replicas: tuple[Server, Server]) -> None:
    replica_a, replica_b = replicas
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US") for _ in replicas]
    try:
        on_a, on_b = (OfflinePage(context.new_page()) for context in contexts)
        a, b = on_a.page, on_b.page

        # replica A: alice signs in and starts a conversation
        sign_in(a, replica_a.url, oidc_provider.url, str(ALICE["sub"]))
        expect(a.get_by_test_id("stSidebar")).to_contain_text("Storage: postgresql (127.0.0.1)", timeout=T)
        first = "hello, this is alice on replica A"
        send(a, first)
        thread = thread_of(a)
        messages_a = a.get_by_test_id("stChatMessage")
        expect(messages_a).to_have_count(2)
        reply = messages_a.last.inner_text()
        assert reply.strip(), "the assistant answered"

        # replica B: signed in on its own (another browser context), the conversation is in her list
        sign_in(b, replica_b.url, oidc_provider.url, str(ALICE["sub"]))
        expect(b.get_by_test_id("stSidebar")).to_contain_text("Signed in as Alice Chen <alice@example.com>")
        assert thread_of(b) != thread  # a new conversation to start with
        b.get_by_test_id("stSidebar").get_by_role("button", name=first).click()
        wait_for_app(b)
        expect(b).to_have_url(re.compile(r"[?&]thread=" + re.escape(thread)), timeout=T)
        messages_b = b.get_by_test_id("stChatMessage")
        expect(messages_b).to_have_count(2, timeout=T)
        expect(messages_b.first).to_contain_text(first)
        # the reply as A drew it, caption and all (retried: B's rerun may still be drawing it)
        expect(messages_b.last).to_have_text(reply, use_inner_text=True, timeout=T)

        # a follow-up written on B is there on A after a reload (a new session: the thread comes from the URL)
        follow_up = "hello again, now from replica B"
        send(b, follow_up)
        expect(messages_b).to_have_count(4)
        a.reload()
        wait_for_app(a)
        expect(messages_a).to_have_count(4, timeout=T)
        expect(messages_a.nth(0)).to_contain_text(first)
        expect(messages_a.nth(2)).to_contain_text(follow_up)
        assert thread_of(a) == thread

        for page in (a, b):
            expect(page.locator("[data-testid='stException']")).to_have_count(0)
        for guarded in (on_a, on_b):  # loopback only: the provider's form asks for one stylesheet, which was blocked
            assert all(url.split("?")[0].endswith(".css") for url in guarded.external), guarded.external
    finally:
        for context in contexts:
            context.close()
