"""AppTest for ui/auth.py: demo mode's banner and picker, oidc mode's sign-in screen, role gates that show nothing else."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.usefixtures("no_internet")

AUTH_SECRETS = {"auth": {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32,
                         "client_id": "c", "client_secret": "s",
                         "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}}


def _script() -> None:
    import streamlit as st

    from ui.auth import render_demo_banner_and_picker, require_role

    render_demo_banner_and_picker()
    user = require_role(st.query_params.get("need", "traveller"))
    st.text(f"user={user.id} config={user.config_id} roles={','.join(sorted(r.value for r in user.roles))}")
    st.text("page content")


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for var in ("AUTH_MODE", "ROLES_FILE", "LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'auth.db'}")
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def run(need: str = "traveller", *, secrets: dict[str, Any] | None = None, user: dict[str, Any] | None = None,
        query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=60)
    if secrets:
        at.secrets.update(secrets)
    if user is not None:
        at.user = user
    at.query_params["need"] = need
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run()


def texts(at: AppTest) -> list[str]:
    return [t.value for t in at.text]


def shown(at: AppTest) -> str:
    return " | ".join([*(e.value for e in at.warning), *(e.value for e in at.error), *(e.value for e in at.info)])


def test_demo_mode_shows_the_banner_and_the_picker_and_starts_as_the_traveller() -> None:
    at = run()
    assert not at.exception
    assert "Demo mode: not signed in, data is shared by this demo" in [w.value for w in at.warning]
    picker = at.sidebar.selectbox[0]
    assert picker.options[:3] == ["Alice Chen (traveller)", "Bob Müller (traveller)", "Carol Wang (traveller, approver)"]
    assert texts(at) == ["user=alice config=alice roles=traveller", "page content"]
    assert at.query_params["user"] == "alice"


def test_demo_mode_keeps_every_role_rule() -> None:
    at = run("approver")
    assert "This page is for the approver role." in shown(at) and "Alice Chen" in shown(at)
    assert "page content" not in texts(at)
    at.sidebar.selectbox[0].select("carol").run()
    assert not at.exception
    assert texts(at) == ["user=carol config=carol roles=approver,traveller", "page content"]
    assert at.query_params["user"] == "carol"
    assert "This page is for" not in shown(at)


def test_demo_mode_reads_the_user_from_the_url() -> None:
    assert texts(run("approver", query={"user": "carol"}))[0].startswith("user=carol ")
    assert texts(run(query={"user": "mallory"}))[0].startswith("user=alice ")  # not a demo user: the first


def test_an_auth_section_switches_to_oidc_and_the_page_asks_to_sign_in() -> None:
    at = run(secrets=AUTH_SECRETS)
    assert not at.exception
    assert "Sign in to use NaviGo Workbench." in shown(at) and "Demo mode" not in shown(at)
    assert [b.label for b in at.button] == ["Sign in"]
    assert texts(at) == [] and not at.sidebar.selectbox


def test_oidc_mode_matches_the_signed_in_user_to_the_roles_file() -> None:
    carol = {"is_logged_in": True, "sub": "idp-123", "email": "CAROL@example.com", "name": "Carol at the IdP"}
    at = run("approver", secrets=AUTH_SECRETS, user=carol)
    assert not at.exception
    assert texts(at) == ["user=idp-123 config=carol roles=approver,traveller", "page content"]


def test_oidc_mode_ignores_the_demo_user_in_the_url() -> None:
    alice = {"is_logged_in": True, "sub": "idp-1", "email": "alice@example.com"}
    at = run("approver", secrets=AUTH_SECRETS, user=alice, query={"user": "carol"})
    assert "This page is for the approver role." in shown(at) and "page content" not in texts(at)


def test_an_unknown_signed_in_user_is_a_traveller() -> None:
    at = run(secrets=AUTH_SECRETS, user={"is_logged_in": True, "sub": "zz", "email": "zz@elsewhere.example"})
    assert texts(at) == ["user=zz config= roles=traveller", "page content"]
    assert "This page is for the administrator role." in shown(run("admin", secrets=AUTH_SECRETS,
                                                                    user={"is_logged_in": True, "sub": "zz"}))


def test_auth_mode_oidc_without_an_auth_section_says_what_to_add(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTH_MODE", "oidc")
    at = run()
    assert "has no [auth] section" in shown(at) and texts(at) == []


def test_auth_mode_demo_wins_over_an_auth_section(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTH_MODE", "demo")
    at = run(secrets=AUTH_SECRETS)
    assert "Demo mode: not signed in" in shown(at) and texts(at)[0].startswith("user=alice ")


def test_a_broken_roles_file_fails_closed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bad = tmp_path / "roles.yaml"
    bad.write_text("users:\n  - id: carol\n    roles: [boss]\n", encoding="utf-8")
    monkeypatch.setenv("ROLES_FILE", str(bad))
    at = run()
    assert "names the role boss" in shown(at) and texts(at) == []  # demo: nobody to act as
    st.cache_resource.clear()
    carol = {"is_logged_in": True, "sub": "idp-123", "email": "carol@example.com"}
    at = run("approver", secrets=AUTH_SECRETS, user=carol)
    assert "everyone who signs in is a traveller only" in shown(at)
    assert "This page is for the approver role." in shown(at) and "page content" not in texts(at)
