"""The signed-in user on every page (app.py): demo mode's banner and picker in both languages, oidc mode's sign-in
screen before any page, and the pages acting for the user picked (their plans, routes, claims, applications)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.app.test_auth_ui import AUTH_SECRETS

pytestmark = pytest.mark.usefixtures("no_internet")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for var in ("AUTH_MODE", "ROLES_FILE", "LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'pages.db'}")
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def app(*, secrets: dict | None = None, **query: str) -> AppTest:  # type: ignore[type-arg]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if secrets:
        at.secrets.update(secrets)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


@pytest.mark.parametrize("lang, banner, picker", [
    ("en", "Demo mode: not signed in, data is shared by this demo", "Demo user"),
    ("zh", "演示模式：未登录，数据由本演示的所有使用者共享", "演示用户"),
])
def test_demo_mode_shows_the_banner_and_the_picker_on_every_page(lang: str, banner: str, picker: str) -> None:
    at = app(lang=lang)
    assert not at.exception, at.exception
    assert banner in [w.value for w in at.warning]
    pick = next(s for s in at.sidebar.selectbox if s.key == "auth.demo_pick")
    assert pick.label == picker and pick.value == "alice"  # the first traveller
    assert at.session_state["chat.owner"] == "alice"  # the default page (Chat) acts for her
    pick.select("bob").run()
    assert not at.exception, at.exception
    assert at.session_state["chat.owner"] == "bob" and at.query_params["user"] == "bob"


def test_oidc_mode_shows_only_the_sign_in_screen_until_signed_in() -> None:
    at = app(secrets=AUTH_SECRETS)
    assert not at.exception, at.exception
    assert [b.label for b in at.button] == ["Sign in"]
    assert "chat.owner" not in at.session_state  # no page ran
    assert not any("Demo mode" in w.value for w in at.warning)


def test_oidc_mode_offers_sign_out_and_the_pages_act_for_the_subject() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.secrets.update(AUTH_SECRETS)
    at.user = {"is_logged_in": True, "sub": "idp-7", "email": "bob@example.com", "name": "Bob"}
    at.run()
    assert not at.exception, at.exception
    assert "auth.logout" in [b.key for b in at.sidebar.button]
    assert at.session_state["chat.owner"] == "idp-7"


def test_the_language_picked_is_kept_in_the_users_profile() -> None:
    at = app()
    assert not at.exception, at.exception
    at.sidebar.selectbox(key="lang_choice").select("zh").run()
    assert not at.exception, at.exception
    fresh = app()  # a new session (no ?lang=): the user's kept language
    assert not fresh.exception, fresh.exception
    assert fresh.session_state["lang"] == "zh"
    assert "演示模式：未登录，数据由本演示的所有使用者共享" in [w.value for w in fresh.warning]
    bob = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    bob.query_params["user"] = "bob"
    assert bob.run().session_state["lang"] == "en"  # bob's own (none: the default)


def test_the_reimbursement_page_uses_the_grade_kept_for_the_user(tmp_path: Path) -> None:
    from navigo_core.store import Store

    Store.from_url(f"sqlite:///{tmp_path / 'pages.db'}").profiles.remember("alice", grade="G3")
    at = AppTest.from_file(str(ROOT / "app_pages" / "reimbursement.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    assert any("G3" in c.value for c in at.caption), [c.value for c in at.caption]
    bob = AppTest.from_file(str(ROOT / "app_pages" / "reimbursement.py"), default_timeout=60)
    bob.session_state["auth.demo_user"] = "bob"
    bob.run()
    assert not any("G3" in c.value for c in bob.caption)
