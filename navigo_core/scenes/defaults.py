"""``navigo_core.scenes.defaults``, the composition root for library use: the settings in force and what they build, for callers with no app
and no command line (benchmarks, scripts, an interactive session).

Every constructor and factory of ``navigo_core`` takes its :class:`~navigo_core.config.Settings` as a
parameter and never reads the global settings. The composition roots build them once and pass them in:
``ui/context.py`` (the app, cached per process), :mod:`navigo_core.cli` (once per command) and this module.
The only other readers of :func:`~navigo_core.config.get_settings` are ``config.py``, where it is defined, and
:func:`navigo_core.limits.current` (the limits in force, for the checks called without limits);
``tests/unit/test_foundation.py::test_only_the_composition_roots_read_the_global_settings`` keeps it so.

* :func:`settings` — the settings in force, built once (:func:`reset` forgets them).
* :func:`providers` — ``make_providers(settings())`` (:mod:`navigo_core.providers.selection`), built once.
* :func:`gate_context` — ``make_gate_context(settings(), providers=providers())``, built once.
* :func:`classify` — what the chat would do with a text as the first message of a conversation: the gate's
  decision with :func:`gate_context` (offline unless an LLM is configured, no active flow). The function to
  measure routing through (``benchmarks/bench_intent.py``, ``scripts/redos.py``).
"""

from __future__ import annotations

import threading
from dataclasses import replace

from navigo_core.config import Settings, get_settings
from navigo_core.providers.selection import Providers, make_providers
from navigo_core.scenes.descriptor import GateContext, GateDecision
from navigo_core.scenes.gate import gate_classify, make_gate_context

__all__ = ["classify", "gate_context", "providers", "reset", "settings"]

_lock = threading.Lock()
_settings: Settings | None = None
_providers: Providers | None = None
_gate_context: GateContext | None = None


def settings() -> Settings:
    """The settings in force (environment, ``.env``, ``.streamlit/secrets.toml``), read on first use."""
    global _settings
    with _lock:
        if _settings is None:
            _settings = get_settings()
        return _settings


def providers() -> Providers:
    """The providers :func:`settings` select, one bundle (each provider built on first use)."""
    global _providers
    built = settings()
    with _lock:
        if _providers is None:
            _providers = make_providers(built)
        return _providers


def gate_context() -> GateContext:
    """The gate's dependencies from :func:`settings` (LLM client, router, weather and place providers)."""
    global _gate_context
    built = settings()
    bundle = providers()
    with _lock:
        context = _gate_context
    if context is None:
        context = make_gate_context(built, providers=bundle)  # outside the lock: building the router takes a while
        with _lock:
            _gate_context = _gate_context or context
            context = _gate_context
    return context


def classify(text: str, *, lang: str | None = None) -> GateDecision:
    """The gate's decision for ``text`` as the first message of a conversation (no active flow)."""
    return gate_classify(text, replace(gate_context(), lang=lang, active_flow=None))


def reset() -> None:
    """Forget the settings, the providers and the gate context (after changing the environment)."""
    global _settings, _providers, _gate_context
    with _lock:
        _settings = None
        _providers = None
        _gate_context = None
