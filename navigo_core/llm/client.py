"""One LLM client for every OpenAI-compatible server, over the official ``openai`` SDK.

:class:`LLMClient` speaks to OpenAI, DeepSeek, Qwen (DashScope compatible mode),
Doubao (Volcengine Ark), vLLM or Ollama alike; ``provider`` (guessed from the
base URL) only picks defaults. It knows nothing of intents, scenes or agents.

* :meth:`LLMClient.complete` — one chat answer as text.
* :meth:`LLMClient.structured` — an answer validated into a pydantic model
  (strategies and the one repair turn: :mod:`navigo_core.llm.structured`).
* :meth:`LLMClient.stream` — text deltas as they arrive (for ``st.write_stream``).
* :meth:`LLMClient.embed` — embedding vectors.

Every request uses ``settings.llm_timeout_s`` and the SDK's own retry
(``settings.llm_max_retries``; it retries connection errors, timeouts, 408,
409, 429 and 5xx, honouring ``Retry-After``). Every failure surfaces as an
:class:`~navigo_core.errors.LLMError`, never as a raw SDK or HTTP exception,
and no message ever holds the API key. :func:`make_llm_client` returns None when
no key is set: callers then use the offline engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

import httpx
import openai
from pydantic import BaseModel, ValidationError

from navigo_core.config import Settings
from navigo_core.errors import (
    LLMError,
    LLMHTTPError,
    LLMInvalidOutput,
    LLMNotConfigured,
    LLMPromptLeak,
    LLMRefusal,
    LLMTimeout,
)
from navigo_core.llm.leak import PromptLeakGuard
from navigo_core.llm.providers import OPENAI_BASE_URL, detect_provider
from navigo_core.llm.structured import (
    build_messages,
    choose_strategy,
    describe_error,
    parse_reply,
    repair_messages,
    response_format,
)

__all__ = ["LLMClient", "make_llm_client"]

T = TypeVar("T", bound=BaseModel)
MAX_DETAIL_CHARS = 300
_STATUS_CODES = {401: "llm.auth_failed", 403: "llm.auth_failed", 429: "llm.rate_limited"}  # HTTP status → i18n key


class LLMClient:
    """A chat/embeddings client for one OpenAI-compatible server, configured by :class:`Settings`.

    ``http_client``: an ``httpx.Client`` to send through (proxies, custom TLS, tests);
    the SDK's default client otherwise. Raises ``LLMNotConfigured`` without an API key.
    """

    def __init__(self, settings: Settings, *, http_client: httpx.Client | None = None) -> None:
        self.provider: str = detect_provider(settings.llm_base_url)
        if not settings.llm_api_key:
            raise LLMNotConfigured(provider=self.provider)
        self.settings = settings
        self.model: str = settings.llm_model
        self.base_url: str = settings.llm_base_url or OPENAI_BASE_URL
        self._api_key = settings.llm_api_key
        with self._errors():
            self._sdk = openai.OpenAI(
                base_url=self.base_url,
                api_key=settings.llm_api_key,
                timeout=settings.llm_timeout_s,
                max_retries=settings.llm_max_retries,
                http_client=cast(Any, http_client),  # the SDK accepts httpx and httpx2 clients
            )

    def __repr__(self) -> str:  # never shows the key
        return f"LLMClient(provider={self.provider!r}, model={self.model!r}, base_url={_display_url(self.base_url)!r})"

    # --- public API ---

    def complete(self, messages: list[dict[str, str]], *, temperature: float = 0.0,
                 max_tokens: int | None = None) -> str:
        """The model's answer to ``messages`` as text; ``LLMRefusal`` if it refuses, ``LLMPromptLeak``
        if it repeats the system prompt."""
        return self._unleaked(messages, self._chat(messages, temperature=temperature, max_tokens=max_tokens))

    def structured(self, messages: list[dict[str, str]], schema: type[T], *, strategy: str | None = None) -> T:
        """The model's answer to ``messages`` validated into ``schema``.

        ``strategy``: json_schema, json_object, prompt, or auto; default: the
        ``llm_structured_output`` setting (see :func:`~navigo_core.llm.structured.choose_strategy`).
        A reply that fails to parse or validate gets one repair turn quoting the
        error; a second failure raises ``LLMInvalidOutput``, a refusal ``LLMRefusal``.
        """
        chosen = choose_strategy(self.provider, strategy or self.settings.llm_structured_output)
        fmt = response_format(schema, chosen)
        conversation = build_messages(messages, schema, chosen)
        error = ""
        for _attempt in range(2):  # the answer, then at most one repair
            text = self._chat(conversation, temperature=0.0, response_format=fmt)
            try:
                return self._unleaked_fields(messages, parse_reply(text, schema))
            except ValidationError as exc:
                error = describe_error(exc)
                conversation = repair_messages(conversation, text, error)
        raise LLMInvalidOutput(provider=self.provider, detail=_clip(error))

    def stream(self, messages: list[dict[str, str]], *, temperature: float = 0.3) -> Iterator[str]:
        """Yield the answer's text deltas as they arrive (usable by ``st.write_stream``).

        A generator: the request is sent on the first ``next()``. If the stream
        fails part-way, the deltas already yielded stay valid and an ``LLMError``
        is raised (``LLMTimeout`` when it stalls, ``LLMHTTPError`` with code
        ``llm.stream_broken`` when it breaks off): callers that want the partial
        text keep what they have received before the error.
        """
        guard = PromptLeakGuard.for_messages(messages)
        if guard:
            yield from guard.hold(self._stream(messages, temperature), lambda: self._leak())
        else:
            yield from self._stream(messages, temperature)

    def _stream(self, messages: list[dict[str, str]], temperature: float) -> Iterator[str]:
        finished = False
        refusal: list[str] = []
        with self._errors(streaming=True):
            chunks = self._sdk.chat.completions.create(
                model=self.model, messages=cast(Any, messages), temperature=temperature, stream=True,
            )
            with chunks:
                for chunk in chunks:
                    for choice in chunk.choices:
                        if choice.delta.refusal:
                            refusal.append(choice.delta.refusal)
                        if choice.delta.content:
                            yield choice.delta.content
                        if choice.finish_reason:
                            self._check_finish(choice.finish_reason, "".join(refusal))
                            finished = True
        if refusal:
            raise LLMRefusal(provider=self.provider, detail=self._redact("".join(refusal)))
        if not finished:
            raise LLMHTTPError("llm.stream_broken", provider=self.provider,
                               detail="the stream ended before the model finished")

    def embed(self, texts: list[str], *, model: str | None = None) -> list[list[float]]:
        """One embedding vector per text, in order (``model``: default ``settings.llm_embedding_model``)."""
        name = model or self.settings.llm_embedding_model
        if not name:
            raise LLMNotConfigured("llm.embedding_not_configured", provider=self.provider)
        if not texts:
            return []
        with self._errors():
            result = self._sdk.embeddings.create(model=name, input=texts, encoding_format="float")
        vectors = [list(item.embedding) for item in sorted(result.data, key=lambda item: item.index)]
        if len(vectors) != len(texts):
            raise LLMInvalidOutput(provider=self.provider, detail=f"{len(vectors)} vectors for {len(texts)} texts")
        return vectors

    def close(self) -> None:
        """Release the connection pool (a client passed as ``http_client`` is left open)."""
        self._sdk.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- internals ---

    def _chat(self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int | None = None,
              response_format: dict[str, Any] | None = None) -> str:
        """One non-streamed chat request; the answer's text ('' when the model sent no content)."""
        extra: dict[str, Any] = {}
        if max_tokens is not None:  # OpenAI's newer models want max_completion_tokens; compatible servers max_tokens
            extra["max_completion_tokens" if self.provider == "openai" else "max_tokens"] = max_tokens
        if response_format is not None:
            extra["response_format"] = response_format
        with self._errors():
            completion = self._sdk.chat.completions.create(
                model=self.model, messages=cast(Any, messages), temperature=temperature, **extra,
            )
        if not completion.choices:
            raise LLMHTTPError("llm.bad_response", provider=self.provider, detail="the reply has no choices")
        choice = completion.choices[0]
        self._check_finish(choice.finish_reason, choice.message.refusal)
        return choice.message.content or ""

    def _unleaked(self, messages: list[dict[str, str]], text: str) -> str:
        if PromptLeakGuard.for_messages(messages).leaks(text):
            raise self._leak()
        return text

    def _unleaked_fields(self, messages: list[dict[str, str]], result: T) -> T:
        """A structured answer repeats its keys and codes from the prompt by design: each string
        value is checked on its own."""
        guard = PromptLeakGuard.for_messages(messages)
        if guard and any(guard.leaks(v) for v in _strings(result.model_dump())):
            raise self._leak()
        return result

    def _leak(self) -> LLMPromptLeak:
        return LLMPromptLeak(provider=self.provider, detail="the reply repeated the system prompt")

    def _check_finish(self, finish_reason: str | None, refusal: str | None) -> None:
        """Raise ``LLMRefusal`` for a refusal or a content-filter stop."""
        if refusal:
            raise LLMRefusal(provider=self.provider, detail=self._redact(refusal))
        if finish_reason == "content_filter":
            raise LLMRefusal(provider=self.provider, detail="stopped by the provider's content filter")

    @contextmanager
    def _errors(self, *, streaming: bool = False) -> Iterator[None]:
        """Turn any exception raised by the SDK (or its HTTP stack) inside the block into an LLMError.

        Only SDK calls and the iteration of their results run inside these blocks,
        so every non-LLMError caught here came from the SDK or the transport.
        """
        try:
            yield
        except LLMError:
            raise
        except Exception as exc:  # the boundary: no raw SDK exception may escape
            raise self._translate(exc, streaming=streaming) from exc

    def _translate(self, exc: Exception, *, streaming: bool) -> LLMError:
        """Our error for an SDK exception (the key redacted from every detail)."""
        p = self.provider
        if isinstance(exc, openai.APITimeoutError):
            return LLMTimeout(provider=p, seconds=self.settings.llm_timeout_s)
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            detail = self._redact(str(cause) if cause else exc.message)
            if streaming:
                return LLMHTTPError("llm.stream_broken", provider=p, detail=detail)
            return LLMHTTPError("llm.unreachable", provider=p, url=_display_url(self.base_url), detail=detail)
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            code = _STATUS_CODES.get(status, "llm.http_error")
            return LLMHTTPError(code, provider=p, status=status, detail=self._redact(_error_detail(exc)))
        if isinstance(exc, openai.APIError):  # e.g. an error event inside a stream
            code = "llm.stream_broken" if streaming else "llm.error"
            return LLMHTTPError(code, provider=p, detail=self._redact(_error_detail(exc)))
        if isinstance(exc, ValueError):  # a body (or stream event) that is not JSON
            return LLMHTTPError("llm.bad_response", provider=p, detail=self._redact(f"{type(exc).__name__}: {exc}"))
        return LLMError(provider=p, detail=self._redact(f"{type(exc).__name__}: {exc}"))

    def _redact(self, text: str) -> str:
        """``text`` clipped, with the API key (should a server echo it) masked."""
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return _clip(text)


def make_llm_client(settings: Settings, *, http_client: httpx.Client | None = None) -> LLMClient | None:
    """An :class:`LLMClient`, or None when no API key is set (callers then use the offline engine)."""
    if not settings.llm_enabled:
        return None
    return LLMClient(settings, http_client=http_client)


def _error_detail(exc: openai.APIError) -> str:
    """The server's own error message when its body has one (OpenAI shape), else the SDK's."""
    body = exc.body
    message = body.get("message") if isinstance(body, dict) else None
    if isinstance(message, str):
        return message
    if isinstance(body, str) and body.strip():
        return body
    return exc.message


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _display_url(url: str) -> str:
    """``url`` without user info, query or fragment (nothing secret in a message)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_DETAIL_CHARS else text[:MAX_DETAIL_CHARS] + "…"
