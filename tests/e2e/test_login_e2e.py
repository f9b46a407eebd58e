"""st.login works: Chromium signs in through a local OpenID Connect provider (oidc-provider-mock) and the app
shows who signed in, as Streamlit's st.user and as NaviGo's user from the roles file (ui/auth.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.conftest import OfflinePage, wait_for_app
from tests.e2e.oidc import Server, start_oidc_provider, start_streamlit_with_auth

pytestmark = pytest.mark.e2e

APP = Path(__file__).resolve().parent / "apps" / "login_app.py"
ALICE: dict[str, str | bool] = {"sub": "alice-sub-0001", "email": "alice@example.com", "name": "Alice from the IdP", "email_verified": True}


@pytest.fixture(scope="module")
def oidc_provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_oidc_provider(tmp_path_factory.mktemp("oidc"), users=[ALICE])
    yield server
    server.stop()


@pytest.fixture(scope="module")
def login_app(tmp_path_factory: pytest.TempPathFactory, oidc_provider: Server) -> Iterator[Server]:
    server = start_streamlit_with_auth(tmp_path_factory.mktemp("login-app"), APP, oidc_provider.url)
    yield server
    server.stop()


def test_sign_in_through_the_identity_provider(browser: Browser, oidc_provider: Server, login_app: Server) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 900}, locale="en-US")
    try:
        guarded = OfflinePage(context.new_page())
        page = guarded.page
        page.goto(login_app.url)
        wait_for_app(page)
        expect(page.get_by_text("Sign in to use NaviGo Workbench.")).to_be_visible()
        expect(page.get_by_text("st.user.email")).to_have_count(0)  # nothing of the page before sign-in

        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(re.compile(re.escape(oidc_provider.url) + r"/oauth2/authorize\b.*"), timeout=60_000)
        page.locator("input[name='sub']").fill(str(ALICE["sub"]))
        page.get_by_role("button", name="Authorize").click()

        page.wait_for_url(re.compile(re.escape(login_app.url) + r"/?(\?.*)?$"), timeout=60_000)
        wait_for_app(page)
        expect(page.get_by_text("st.user.email: alice@example.com")).to_be_visible(timeout=60_000)
        expect(page.get_by_text(f"st.user.sub: {ALICE['sub']}")).to_be_visible()
        expect(page.get_by_text("st.user.name: Alice from the IdP")).to_be_visible()
        # the roles file (the shipped one) knows alice by her e-mail: a traveller of sales, her id the sub
        expect(page.get_by_text(f"NaviGo user: id={ALICE['sub']} roles-file id=alice department=sales "
                                "roles=traveller")).to_be_visible()
        expect(page.get_by_text("Signed in as Alice Chen <alice@example.com>")).to_be_visible()
        # a section for approvers says so and shows nothing else
        expect(page.get_by_text("This page is for the approver role.")).to_be_visible()
        expect(page.get_by_text("approver section")).to_have_count(0)
        expect(page.get_by_role("button", name="Sign in")).to_have_count(0)
        # the browser went nowhere but loopback: the provider's page asks for one stylesheet, which was blocked
        assert all(url.split("?")[0].endswith(".css") for url in guarded.external), guarded.external
    finally:
        context.close()
