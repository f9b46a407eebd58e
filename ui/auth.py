"""Sign-in and roles on the pages: who is signed in, the demo banner and picker, sign-in and role gates.

The mode is :func:`navigo_core.config.resolve_auth_mode`: ``AUTH_MODE``, else ``oidc`` when Streamlit's secrets
have an ``[auth]`` section, else ``demo``.

* oidc: ``st.user`` (filled by ``st.login()`` from the identity provider's ID token: ``is_logged_in``, ``sub``,
  ``name``, ``email``) is matched to the roles file (:func:`navigo_core.auth.match_identity`).
* demo: no identity provider; the user picked among the roles file's sample users, kept in a plain session key
  (a page switch keeps it) and in the URL's ``?user=`` (a refresh keeps it). Every role rule still holds.

A page calls :func:`require_login` (any signed-in user) or :func:`require_role` (a role), which return the
:class:`~navigo_core.auth.User` or render why not and ``st.stop()``. Settings and roles default to the app's.
"""

from __future__ import annotations

import streamlit as st

from navigo_core.auth import (
    AuthMode,
    Role,
    RolesConfig,
    User,
    can_open,
    demo_user,
    demo_users,
    match_identity,
    roles_status,
)
from navigo_core.config import Settings, resolve_auth_mode
from ui.context import LANG_KEY, LANGS, lang, set_lang, store, tr
from ui.context import settings as app_settings
from ui.markdown import escape_markdown

DEMO_USER_KEY = "auth.demo_user"  # the demo user's id: a plain session key, which a page switch keeps
DEMO_QUERY = "user"  # the URL's ?user= (demo mode only; oidc mode never reads it)
_DEMO_PICK = "auth.demo_pick"  # the picker's widget key


def has_auth_section() -> bool:
    """Whether Streamlit's secrets (``.streamlit/secrets.toml``) have an ``[auth]`` section."""
    return bool(st.secrets.load_if_toml_exists() and "auth" in st.secrets)


def auth_mode(settings: Settings | None = None) -> AuthMode:
    """The sign-in mode in force for these settings (default: the app's) and Streamlit's secrets."""
    return resolve_auth_mode(settings or app_settings(), has_auth_section=has_auth_section())


def roles_in_force(settings: Settings | None = None) -> tuple[RolesConfig | None, str | None]:
    """The roles file of ``settings.roles_file`` and None, or None and its error in the session's language."""
    s = settings or app_settings()
    return roles_status(s.roles_file or None, lang())


def _claim(name: str) -> str:
    value = st.user.get(name)
    return value.strip() if isinstance(value, str) else ""


def current_user(settings: Settings | None = None, roles: RolesConfig | None = None) -> User | None:
    """The signed-in user, or None: in oidc mode when nobody is signed in (or the provider gave no ``sub``), in
    demo mode when the roles file offers no user. ``roles`` None: the file of the settings; when that file is
    broken, a signed-in user is a traveller only (fail closed) and demo mode has nobody to offer."""
    s = settings or app_settings()
    config = roles if roles is not None else roles_in_force(s)[0]
    if auth_mode(s) == "oidc":
        if not has_auth_section() or not st.user.get("is_logged_in"):
            return None
        sub, email, name = _claim("sub"), _claim("email"), _claim("name")
        if not sub:
            return None
        verified = st.user.get("email_verified")
        if config is None:
            return User(id=sub, sub=sub, name=name or email or sub, email=email)
        return match_identity(config, sub=sub, email=email, name=name,
                              email_verified=verified if isinstance(verified, bool) else None)
    if config is None:
        return None
    return demo_user(config, _demo_choice(config))


def _demo_choice(config: RolesConfig) -> str | None:
    """The demo user's id: the session's, else the URL's ``?user=``, else the first sample user."""
    chosen = st.session_state.get(DEMO_USER_KEY)
    if demo_user(config, chosen) is None:
        chosen = st.query_params.get(DEMO_QUERY)
        if demo_user(config, chosen) is None:
            users = demo_users(config)
            chosen = users[0].id if users else None
        st.session_state[DEMO_USER_KEY] = chosen
    return chosen


def _roles_text(user: User) -> str:
    return ", ".join(tr(f"auth.role.{r.value}") for r in sorted(user.roles, key=list(Role).index))


def _picked() -> None:
    chosen = st.session_state.get(_DEMO_PICK)
    st.session_state[DEMO_USER_KEY] = chosen
    if chosen:
        st.query_params[DEMO_QUERY] = chosen


def render_demo_banner_and_picker(settings: Settings | None = None, roles: RolesConfig | None = None, *,
                                  picker_in_sidebar: bool = True) -> User | None:
    """In demo mode: the banner (main area) and the sample-user picker (the sidebar, or where the caller is);
    returns the demo user. In oidc mode: nothing is rendered; returns :func:`current_user`. Call it once per
    run (app.py or the sidebar): the picker has a fixed widget key."""
    s = settings or app_settings()
    if auth_mode(s) != "demo":
        return current_user(s, roles)
    error: str | None = None
    config = roles
    if config is None:
        config, error = roles_in_force(s)
    st.warning(tr("auth.demo.banner"), icon="🧪")
    users = demo_users(config) if config is not None else []
    if not users:
        st.error(error or tr("auth.demo.no_users"), icon="👥")
        return None
    assert config is not None
    chosen = _demo_choice(config)
    if st.query_params.get(DEMO_QUERY) != chosen and chosen:
        st.query_params[DEMO_QUERY] = chosen  # a page switch clears the URL's parameters: put it back
    st.session_state[_DEMO_PICK] = chosen  # sent every run: a page switch cannot reset the picker
    labels = {u.id: tr("auth.demo.option", name=u.name, roles=_roles_text(u)) for u in users}
    where = st.sidebar if picker_in_sidebar else st.container()
    where.selectbox(tr("auth.demo.picker"), [u.id for u in users], key=_DEMO_PICK, on_change=_picked,
                    format_func=lambda uid: labels.get(uid, uid), help=tr("auth.demo.picker_help"))
    return demo_user(config, chosen)


def render_sign_out(settings: Settings | None = None, roles: RolesConfig | None = None) -> None:
    """In oidc mode, for a signed-in user: who is signed in and a sign-out button (``st.logout``)."""
    s = settings or app_settings()
    if auth_mode(s) != "oidc":
        return
    user = current_user(s, roles)
    if user is None:
        return
    st.caption(tr("auth.signed_in_as", user=escape_markdown(user.label)))
    st.button(tr("auth.logout.button"), key="auth.logout", on_click=st.logout)


def require_login(settings: Settings | None = None, roles: RolesConfig | None = None) -> User:
    """The signed-in user; else renders why not and stops the page. oidc mode: a sign-in button calling
    ``st.login()`` (nothing else of the page is shown). demo mode: the demo user (the picker's choice)."""
    s = settings or app_settings()
    mode = auth_mode(s)
    config = roles
    roles_error: str | None = None
    if config is None:
        config, roles_error = roles_in_force(s)
    if mode == "oidc":
        if not has_auth_section():
            st.error(tr("auth.oidc.not_configured"), icon="🔐")
            st.stop()
        if not st.user.get("is_logged_in"):
            st.info(tr("auth.login.needed"), icon="🔐")
            st.button(tr("auth.login.button"), key="auth.login", type="primary", on_click=st.login)
            st.stop()
        if not _claim("sub"):
            st.error(tr("auth.oidc.no_subject"), icon="🔐")
            st.button(tr("auth.logout.button"), key="auth.logout_no_sub", on_click=st.logout)
            st.stop()
        if roles_error:
            st.error(tr("auth.roles.broken", message=roles_error), icon="👥")
    user = current_user(s, config)
    if user is None:  # demo mode with no user to offer
        st.error(roles_error or tr("auth.demo.no_users"), icon="👥")
        st.stop()
    assert user is not None
    return user


def require_role(role: Role | str, settings: Settings | None = None, roles: RolesConfig | None = None) -> User:
    """The signed-in user when they hold ``role``; else :func:`require_login`'s screen, or a message naming the
    role the page needs and the user's roles, and the page stops (it shows nothing else)."""
    needed = Role(role)
    user = require_login(settings, roles)
    if not can_open(user, needed):
        st.error(tr("auth.role.needed", role=tr(f"auth.role.{needed.value}"), user=escape_markdown(user.label),
                    roles=_roles_text(user)), icon="🚫")
        st.stop()
    return user


# --- the signed-in user's profile (navigo_core.store ProfileRepo): what they said once, kept for them ---------

def profile(user: User | None) -> dict[str, str | None]:
    """``user``'s profile (grade, language, home_city; each None until given); {} without a user or a readable store."""
    return store().profiles.kept(user.id) if user is not None else {}


def remember(user: User | None, **values: str | None) -> None:
    """Keep values in ``user``'s profile; a store that cannot be written keeps nothing (the page goes on)."""
    if user is not None:
        store().profiles.keep(user.id, **values)


def apply_profile_language() -> None:
    """Once per session, before the sidebar draws: the language kept in the user's profile, unless the session or the
    URL (``?lang=``) already chose one."""
    if LANG_KEY in st.session_state or st.query_params.get("lang") in LANGS:
        return
    kept = profile(current_user()).get("language")
    if kept in LANGS:
        set_lang(str(kept))
