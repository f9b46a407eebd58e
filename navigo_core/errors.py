"""The one error hierarchy of NaviGo.

Every error a user can meet carries a stable ``code`` (an i18n catalog key) and
``params`` for the message template, so a page renders it in the user's
language with :meth:`NavigoError.message` and never shows a traceback.

Hierarchy::

    NavigoError
    ├── InputError              the user's input is wrong; the message says how to fix it
    │   └── PlaceResolutionError  a name is unknown or ambiguous (carries candidates)
    ├── ProviderError           an upstream service failed
    │   ├── ProviderNotConfigured
    │   ├── ProviderTimeout
    │   ├── ProviderHTTPError
    │   └── LLMError            the LLM layer failed (never a raw SDK exception)
    │       ├── LLMNotConfigured    no key: the offline engine is used
    │       ├── LLMTimeout
    │       │   └── LLMDeadline     a time bound of the call (first token, gap, total)
    │       ├── LLMTokenLimit       the reply reached its token cap
    │       ├── LLMHTTPError        upstream HTTP error (status, message)
    │       ├── LLMRefusal          the model refused
    │       └── LLMInvalidOutput    the reply did not parse or validate, even after one repair
    └── ResultCheckError        a computed result broke an invariant (a bug, reported clearly)
"""

from __future__ import annotations

from typing import Any

MAX_ECHO = 200
"""Most characters of one input value a message repeats (``errors never echo a 1 MB input back``)."""

_COMPOSED = frozenset({"candidates", "details"})  # params the app composes from values already clipped


def clip(value: Any, limit: int = MAX_ECHO) -> Any:
    """A string cut to ``limit`` characters (an ellipsis marks the cut); other values unchanged."""
    if isinstance(value, str) and len(value) > limit:
        return value[: max(limit - 1, 0)] + "…"
    return value


class NavigoError(Exception):
    """Base of every error raised on purpose by navigo_core."""

    default_code = "error.generic"
    #: the error is about what the user asked for (retrying the same request cannot help): a chat turn
    #: that ends in it is an answer, not a failure (``SceneReply.from_error``)
    about_input = False

    def __init__(self, code: str | None = None, /, **params: Any) -> None:
        self.code = code or self.default_code
        self.params = params
        super().__init__(self.message("en"))

    def message(self, lang: str = "en") -> str:
        """The user-facing message in ``lang`` (falls back to English), credentials masked
        (:func:`navigo_core.redact.redact`: a server may echo a key or a URL's user info)."""
        from navigo_core.i18n import t
        from navigo_core.redact import redact

        params = {k: redact(v) if k in _COMPOSED else clip(redact(v)) for k, v in self.params.items()}
        return redact(t(self.code, lang, **params))

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        return {"code": self.code, "message": self.message(lang)}


class InputError(NavigoError):
    """Bad user input. The message names what was wrong and how to fix it."""

    default_code = "error.input"
    about_input = True


class PlaceResolutionError(InputError):
    """A place name resolved to zero or several places.

    ``candidates`` lists what the user may pick from (empty when unknown).
    """

    def __init__(self, code: str, /, *, query: str, candidates: list[Any] | None = None,
                 role: str = "", **params: Any) -> None:
        self.query = query
        self.role = role
        self.candidates = list(candidates or [])
        names = "; ".join(getattr(c, "label", str(c)) for c in self.candidates[:8])
        super().__init__(code, query=query, candidates=names, **params)


class ProviderError(NavigoError):
    """An upstream provider (places, matrix, LLM, flights, weather) failed."""

    default_code = "error.provider"

    def __init__(self, code: str | None = None, /, *, provider: str = "", **params: Any) -> None:
        self.provider = provider
        super().__init__(code, provider=provider, **params)


class ProviderNotConfigured(ProviderError):
    default_code = "error.provider_not_configured"


class ProviderTimeout(ProviderError):
    default_code = "error.provider_timeout"


class ProviderHTTPError(ProviderError):
    default_code = "error.provider_http"


class LLMError(ProviderError):
    """Base of the LLM layer's errors."""

    default_code = "llm.error"


class LLMNotConfigured(LLMError):
    default_code = "llm.not_configured"


class LLMTimeout(LLMError):
    default_code = "llm.timeout"


class LLMHTTPError(LLMError):
    default_code = "llm.http_error"


class LLMRefusal(LLMError):
    default_code = "llm.refusal"


class LLMInvalidOutput(LLMError):
    default_code = "llm.invalid_output"


class LLMDeadline(LLMTimeout):
    """A call hit one of its time bounds (``bound``: first_token, gap or total; ``seconds``)."""

    default_code = "llm.deadline"


class LLMTokenLimit(LLMError):
    """The reply reached its token cap (``max_tokens``) before the model finished: it is not used."""

    default_code = "llm.token_limit"


class LLMPromptLeak(LLMError):
    """The reply repeated the request's system prompt; it is not delivered (llm/leak.py)."""

    default_code = "llm.prompt_leak"


def describe_failure(exc: BaseException) -> str:
    """A short English phrase for decision logs: which bound an LLM call hit, or the error's class and code."""
    if isinstance(exc, LLMDeadline):
        return f"deadline: {exc.params.get('bound', 'total')} bound of {exc.params.get('seconds')} s"
    if isinstance(exc, LLMTokenLimit):
        return f"token cap: {exc.params.get('max_tokens')} tokens"
    if isinstance(exc, NavigoError):
        return f"{type(exc).__name__} ({exc.code})"
    return type(exc).__name__


class ResultCheckError(NavigoError):
    """A computed result failed a consistency check; never shown as a traceback."""

    default_code = "error.result_check"
