"""Cached app-wide resources and the current language."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from navigo_core.chat import ChatService
from navigo_core.config import Settings, get_settings
from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.intent import IntentRouter, make_router
from navigo_core.llm import LLMClient, make_llm_client
from navigo_core.maps.assets import ensure_leaflet_assets
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.supervisor import make_planner_deps
from navigo_core.route.service import RouteDeps, make_route_deps
from navigo_core.scenes import GateContext, make_gate_context
from navigo_core.store import Store

APP_DIR = Path(__file__).resolve().parent.parent
LANG_KEY = "lang"


@st.cache_resource
def settings() -> Settings:
    return get_settings()


@st.cache_resource
def store() -> Store:
    """The store; never raises: a database that cannot be opened gives an empty, read-only stand-in whose
    ``fault`` (one sentence, what to do) the sidebar shows, so pages that need no writes still render."""
    return Store.open(settings().database_url)


@st.cache_resource
def llm_client() -> LLMClient | None:
    """The one LLM client, or None: then every feature uses the offline engine."""
    return make_llm_client(settings())


@st.cache_resource
def intent_router() -> IntentRouter:
    """The three-layer router (L3 uses the LLM when configured), recording events in the store."""
    return make_router(settings(), llm=llm_client(), store=store())


@st.cache_resource
def gate_context() -> GateContext:
    """The gate's shared dependencies; per-conversation state is passed per call."""
    return make_gate_context(settings(), router=intent_router(), llm=llm_client())


@st.cache_resource
def chat_service() -> ChatService:
    """The chat service (stateless per call; threads live in the store)."""
    return ChatService(store(), settings(), llm=llm_client(), gate_context=gate_context())


@st.cache_resource
def route_deps(matrix_name: str) -> RouteDeps:
    """Route providers for ``matrix_name``, built once (their HTTP clients are reused across runs);
    pages add the session's own picks with ``dataclasses.replace``."""
    return make_route_deps(settings(), matrix_name=matrix_name)


@st.cache_resource
def planner_deps() -> PlannerDeps:
    """The planner's providers, built once per process (shared, read-only)."""
    return make_planner_deps(settings(), llm=llm_client(), store=store())


@st.cache_resource
def leaflet_prefix() -> str:
    """Copy Leaflet into static/ once per process; the URL prefix Streamlit serves it at."""
    return ensure_leaflet_assets(APP_DIR / "static")


_CHOICE_KEYS = "ui.choice_keys"


def choice(key: str) -> str:
    """Register a radio/selectbox whose option labels are translated; returns ``key``.

    On a language switch the browser keeps showing the old labels' selection
    state unless the value is sent again; :func:`resend_choices` does that.
    """
    st.session_state.setdefault(_CHOICE_KEYS, set()).add(key)
    return key


def resend_choices() -> None:
    """Callback of the language selector: send every registered choice's value again."""
    for key in st.session_state.get(_CHOICE_KEYS, set()):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


LANGS = ("en", "zh")


def lang() -> str:
    """The session's language: chosen in the sidebar, else the URL's ``?lang=`` (a refresh or a shared
    link), else the default. Held in a plain session key, not in the selector's widget state, which
    Streamlit drops on a page switch."""
    code = st.session_state.get(LANG_KEY)
    if code not in LANGS:
        code = st.query_params.get("lang")
        code = code if code in LANGS else settings().default_language
        st.session_state[LANG_KEY] = code
    return code


def set_lang(code: str) -> None:
    """Make ``code`` the session's language and put it in the URL, so a refresh keeps it."""
    if code in LANGS:
        st.session_state[LANG_KEY] = code
        st.query_params["lang"] = code


def keep_lang_in_url() -> None:
    """Called once per run: a page switch clears the URL's query parameters; put the language back."""
    code = lang()
    if st.query_params.get("lang") != code:
        st.query_params["lang"] = code


def tr(key: str, /, **params: object) -> str:
    """The catalog message ``key`` in the current language."""
    return t(key, lang(), **params)


def show_error(exc: NavigoError) -> None:
    """The error's message; the user's values in it are escaped (ui/markdown.py)."""
    from ui.markdown import error_text

    st.error(error_text(exc, lang()), icon="⚠️")
