"""Cached app-wide resources and the current language.

The heavy parts (the chat service's intent router, the LLM SDK, the maps, the planner) are imported inside
the functions that build them, so the first page draws without loading them; :func:`warm_up` builds them in
the background once per server process (issue 12).
"""

from __future__ import annotations

import ast
import importlib
import logging
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from navigo_core.config import Settings, get_settings
from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.store import Store

if TYPE_CHECKING:
    from navigo_core.chat import ChatService
    from navigo_core.intent import IntentRouter
    from navigo_core.llm import LLMClient
    from navigo_core.planner.deps import PlannerDeps
    from navigo_core.providers.selection import Providers
    from navigo_core.route.service import RouteDeps
    from navigo_core.scenes import GateContext

APP_DIR = Path(__file__).resolve().parent.parent
LANG_KEY = "lang"


@st.cache_resource
def settings() -> Settings:
    return get_settings()


@st.cache_resource
def store() -> Store:
    """The store; never raises: a database that cannot be opened gives an empty, read-only stand-in whose
    ``fault`` (one sentence, what to do) the sidebar shows, so pages that need no writes still render."""
    return Store.open(settings().database_url, legacy_owner=settings().legacy_owner)


@st.cache_resource
def llm_client() -> LLMClient | None:
    """The one LLM client, or None: then every feature uses the offline engine."""
    from navigo_core.llm import make_llm_client

    return make_llm_client(settings())


@st.cache_resource
def providers() -> Providers:
    """The providers of every kind the settings select (:mod:`navigo_core.providers.selection`), one bundle per
    process: each built on first use and shared by the route page, the planner, the gate and the chat."""
    from navigo_core.providers.selection import make_providers

    return make_providers(settings())


@st.cache_resource
def intent_router() -> IntentRouter:
    """The three-layer router (L3 uses the LLM when configured), recording events in the store."""
    from navigo_core.intent import make_router

    return make_router(settings(), llm=llm_client(), store=store())


@st.cache_resource
def gate_context() -> GateContext:
    """The gate's shared dependencies; per-conversation state is passed per call."""
    from navigo_core.scenes import make_gate_context

    return make_gate_context(settings(), router=intent_router(), llm=llm_client(), providers=providers())


@st.cache_resource(show_spinner=False)  # the Chat page says itself that it waits for the warm-up
def chat_service() -> ChatService:
    """The chat service (stateless per call; threads live in the store)."""
    from navigo_core.chat import ChatService

    return ChatService(store(), settings(), llm=llm_client(), gate_context=gate_context(), providers=providers())


@st.cache_resource
def route_deps(matrix_name: str) -> RouteDeps:
    """Route providers for ``matrix_name`` from :func:`providers`, built once (their HTTP clients are reused across
    runs); pages add the session's own picks with ``dataclasses.replace``."""
    from navigo_core.route.service import make_route_deps

    return make_route_deps(settings(), matrix_name=matrix_name, providers=providers())


@st.cache_resource
def planner_deps() -> PlannerDeps:
    """The planner's providers, built once per process (shared, read-only)."""
    from navigo_core.planner.supervisor import make_planner_deps

    return make_planner_deps(settings(), llm=llm_client(), store=store(), providers=providers())


@st.cache_resource
def leaflet_prefix() -> str:
    """Copy Leaflet into static/ once per process; the URL prefix Streamlit serves it at."""
    from navigo_core.maps.assets import ensure_leaflet_assets

    return ensure_leaflet_assets(APP_DIR / "static")


log = logging.getLogger(__name__)


@st.cache_resource(show_spinner=False)
def _warmed() -> bool:
    """Build the slow resources into the same caches the pages read (nested in this cached function, they
    show no spinner: there is no page in the warm-up thread). A page that needs one meanwhile waits for
    this build (Streamlit's per-value lock) and never builds a second."""
    from navigo_core.providers.places.gazetteer import load_index
    from navigo_core.security.classifier import load_model

    chat_service()  # settings, store, LLM client, intent router (reads its fitted classifier from CACHE_DIR, or fits it: 10-40 s), gate context
    load_model()  # the risk guard's injection classifier (every message's first check)
    load_index()  # the offline gazetteer's city index
    planner_deps()
    leaflet_prefix()
    return True


def _import_ahead() -> None:
    """Import every module the pages import at their top, and the chat core with the risk guard's classifier
    (scikit-learn), in the calling script thread, before the warm-up thread starts: two threads initialising
    the same package at once can fail (CPython raises ``_DeadlockError`` when one imports a submodule of a
    package the other is still initialising). So no page imports anything new at its top while the thread
    runs, and the thread is left the libraries only the router and the gazetteer load."""
    names = {"navigo_core.chat", "navigo_core.security.classifier"}
    for path in sorted((APP_DIR / "app_pages").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)
    for name in sorted(names):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - only logged: the page that imports it shows the error
            log.exception("importing %s ahead of the pages failed", name)


#: Written to the server's log when the warm-up has built everything (the browser tests wait for it).
WARM_UP_DONE = "navigo: warm-up done"


def _warm() -> None:
    try:
        _warmed()
        print(WARM_UP_DONE, file=sys.stderr, flush=True)
    except Exception:  # noqa: BLE001 - only logged: the page that needs the resource builds it and shows why
        log.exception("warming up the app's resources failed")


@st.cache_resource(show_spinner=False)
def warm_up() -> threading.Thread | None:
    """Once per server process: import ahead (:func:`_import_ahead`, here in the script thread), then start
    :func:`_warm` in a background thread. app.py calls this at the end of every run, so the first visitor's
    page has drawn before, with the whole interpreter, and the models load behind it (``streamlit run`` has
    no hook before the first session). None under AppTest: tests clear the caches between runs and must
    not get resources a thread built for the previous test."""
    from streamlit import config  # AppTest patches this module's get_option (not st.get_option)

    if config.get_option("global.appTest"):
        return None
    _import_ahead()
    thread = threading.Thread(target=_warm, name="navigo-warm-up", daemon=True)
    thread.start()
    return thread


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
