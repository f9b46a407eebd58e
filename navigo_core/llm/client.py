"""One LLM client for every OpenAI-compatible server, over the official ``openai`` SDK.

:class:`LLMClient` speaks to OpenAI, DeepSeek, Qwen (DashScope compatible mode),
Doubao (Volcengine Ark), vLLM or Ollama alike; ``provider`` (guessed from the
base URL) only picks defaults. It knows nothing of intents, scenes or agents.

* :meth:`LLMClient.complete` — one chat answer as text.
* :meth:`LLMClient.structured` — an answer validated into a pydantic model
  (strategies and the one repair turn: :mod:`navigo_core.llm.structured`).
* :meth:`LLMClient.stream` — text deltas as they arrive (for ``st.write_stream``).
* :meth:`LLMClient.embed` — embedding vectors.

Every call is bounded (:mod:`navigo_core.llm.bounds`): one deadline for the whole call
(``settings.llm_deadline_s``: slot, attempts, retries, repair, stream), ``settings.llm_timeout_s``
for an answer or a stream's first piece, ``settings.llm_stream_gap_s`` between pieces, a token cap
per call kind (``llm_max_tokens_*``, sent as ``max_tokens`` and enforced on streams), and at most
``settings.llm_parallel`` requests at once to one server. Retries (``settings.llm_max_retries``:
connection errors, 408, 409, 429 and 5xx, honouring ``Retry-After``) stay inside the deadline; a
timeout is not retried. ``client.calls`` records each call (kind, seconds, tokens, outcome, bound).
Every failure surfaces as an
:class:`~navigo_core.errors.LLMError`, never as a raw SDK or HTTP exception,
and no message ever holds the API key. :func:`make_llm_client` returns None when
no key is set: callers then use the offline engine.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

import httpx
import openai
from pydantic import BaseModel, ValidationError

from navigo_core.config import Settings
from navigo_core.errors import (
    LLMDeadline,
    LLMError,
    LLMHTTPError,
    LLMInvalidOutput,
    LLMNotConfigured,
    LLMPromptLeak,
    LLMRefusal,
    LLMTimeout,
    LLMTokenLimit,
)
from navigo_core.llm.bounds import Deadline, backoff_s, server_slots
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
R = TypeVar("R")
MAX_DETAIL_CHARS = 300
MAX_CHARS_PER_TOKEN = 8  # a streamed reply longer than cap × this is cut even if its pieces are few
CONNECT_TIMEOUT_S = 10.0
REPORT_GRACE_S = 0.25  # how long past the deadline the caller waits for the attempt's own timeout error
CALL_LOG_SIZE = 2000
_RETRY_STATUS = frozenset({408, 409, 429})
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
        self._slots = server_slots(self.base_url, settings.llm_parallel)
        self.calls: deque[dict[str, Any]] = deque(maxlen=CALL_LOG_SIZE)  # one record per public call (benchmarks)
        with self._errors():
            self._sdk = openai.OpenAI(
                base_url=self.base_url,
                api_key=settings.llm_api_key,
                timeout=settings.llm_timeout_s,
                max_retries=0,  # retries are ours (_request): they must stay inside the call's deadline
                http_client=cast(Any, http_client),  # the SDK accepts httpx and httpx2 clients
            )

    def __repr__(self) -> str:  # never shows the key
        return f"LLMClient(provider={self.provider!r}, model={self.model!r}, base_url={_display_url(self.base_url)!r})"

    # --- public API ---

    def complete(self, messages: list[dict[str, str]], *, temperature: float = 0.0,
                 max_tokens: int | None = None) -> str:
        """The model's answer to ``messages`` as text; ``LLMRefusal`` if it refuses, ``LLMPromptLeak``
        if it repeats the system prompt, ``LLMTokenLimit`` if it reaches ``max_tokens`` (default:
        ``settings.llm_max_tokens_text``), ``LLMDeadline`` past ``settings.llm_deadline_s``."""
        deadline = Deadline(self.settings.llm_deadline_s)
        cap = max_tokens or self.settings.llm_max_tokens_text
        with self._record("complete", deadline) as rec:
            text = self._chat(messages, temperature=temperature, max_tokens=cap, deadline=deadline, rec=rec)
            return self._unleaked(messages, text)

    def structured(self, messages: list[dict[str, str]], schema: type[T], *, strategy: str | None = None,
                   max_tokens: int | None = None) -> T:
        """The model's answer to ``messages`` validated into ``schema``.

        ``strategy``: json_schema, json_object, prompt, or auto; default: the
        ``llm_structured_output`` setting (see :func:`~navigo_core.llm.structured.choose_strategy`).
        A reply that fails to parse or validate gets one repair turn quoting the
        error; a second failure raises ``LLMInvalidOutput``, a refusal ``LLMRefusal``.
        Both turns share one deadline (``settings.llm_deadline_s``); a reply cut at its token cap
        (default ``settings.llm_max_tokens_structured``) raises ``LLMTokenLimit`` without a repair.
        """
        chosen = choose_strategy(self.provider, strategy or self.settings.llm_structured_output)
        fmt = response_format(schema, chosen)
        conversation = build_messages(messages, schema, chosen)
        deadline = Deadline(self.settings.llm_deadline_s)
        cap = max_tokens or self.settings.llm_max_tokens_structured
        error = ""
        with self._record("structured", deadline) as rec:
            for attempt in range(2):  # the answer, then at most one repair
                rec["repaired"] = attempt > 0
                text = self._chat(conversation, temperature=0.0, max_tokens=cap, response_format=fmt,
                                  deadline=deadline, rec=rec)
                try:
                    return self._unleaked_fields(messages, parse_reply(text, schema))
                except ValidationError as exc:
                    error = describe_error(exc)
                    conversation = repair_messages(conversation, text, error)
            raise LLMInvalidOutput(provider=self.provider, detail=_clip(error))

    def stream(self, messages: list[dict[str, str]], *, temperature: float = 0.3,
               max_tokens: int | None = None) -> Iterator[str]:
        """Yield the answer's text deltas as they arrive (usable by ``st.write_stream``).

        A generator: the request is sent on the first ``next()``. If the stream
        fails part-way, the deltas already yielded stay valid and an ``LLMError``
        is raised (``LLMTimeout`` when it stalls, ``LLMHTTPError`` with code
        ``llm.stream_broken`` when it breaks off, ``LLMDeadline`` when the first piece,
        the gap between two pieces or the whole stream takes too long, ``LLMTokenLimit``
        at the token cap, default ``settings.llm_max_tokens_stream``, even when the server
        ignores the cap): callers that want the partial text keep what they have received
        before the error. Closing the generator early cuts the connection.
        """
        guard = PromptLeakGuard.for_messages(messages)
        inner = self._stream(messages, temperature, max_tokens or self.settings.llm_max_tokens_stream)
        try:
            if guard:
                yield from guard.hold(inner, lambda: self._leak())
            else:
                yield from inner
        finally:
            inner.close()

    def _stream(self, messages: list[dict[str, str]], temperature: float, cap: int) -> Generator[str, None, None]:
        s = self.settings
        deadline = Deadline(s.llm_deadline_s)
        first_s, gap_s = s.llm_timeout_s, min(s.llm_stream_gap_s, s.llm_timeout_s)
        with self._record("stream", deadline) as rec:
            self._take_slot(deadline)
            events: queue.Queue[tuple[str, Any]] = queue.Queue()
            cancel = threading.Event()
            kwargs: dict[str, Any] = {"model": self.model, "messages": cast(Any, messages), "temperature": temperature,
                                      "stream": True, **self._cap_field(cap),
                                      "timeout": self._http_timeout(max(first_s, gap_s), deadline)}
            worker = threading.Thread(target=self._pump, args=(kwargs, events, cancel), daemon=True,
                                      name="llm-stream")
            worker.start()  # it owns the slot and the connection from here, and releases both when it ends
            pieces = chars = 0
            refusal: list[str] = []
            try:
                while True:
                    bound, limit = ("gap", gap_s) if pieces else ("first_token", first_s)
                    wait = min(limit, deadline.left())
                    if wait <= 0:
                        raise self._deadline("total", s.llm_deadline_s)
                    try:
                        kind, value = events.get(timeout=wait)
                    except queue.Empty:
                        if deadline.expired():
                            raise self._deadline("total", s.llm_deadline_s) from None
                        raise self._deadline(bound, limit) from None
                    if kind == "delta":
                        pieces += 1
                        chars += len(value)
                        rec["completion_tokens"] = pieces
                        yield value
                        if pieces > cap or chars > cap * MAX_CHARS_PER_TOKEN:  # the server ignores the cap
                            raise LLMTokenLimit(provider=self.provider, max_tokens=cap)
                    elif kind == "refusal":
                        refusal.append(value)
                    elif kind == "finish":
                        if value == "length":
                            raise LLMTokenLimit(provider=self.provider, max_tokens=cap)
                        self._check_finish(value, "".join(refusal))
                        rec["finished"] = True
                    elif kind == "error":
                        raise value
                    else:  # "end"
                        break
            finally:
                cancel.set()  # the worker stops reading and closes the connection
            if refusal:
                raise LLMRefusal(provider=self.provider, detail=self._redact("".join(refusal)))
            if not rec.get("finished"):
                raise LLMHTTPError("llm.stream_broken", provider=self.provider,
                                   detail="the stream ended before the model finished")

    def _pump(self, kwargs: dict[str, Any], events: queue.Queue[tuple[str, Any]], cancel: threading.Event) -> None:
        """Worker thread of a stream: read the chunks into ``events`` until the end, an error or ``cancel``."""
        try:
            with self._errors(streaming=True):
                chunks = self._sdk.chat.completions.create(**kwargs)
                with chunks:
                    for chunk in chunks:
                        if cancel.is_set():
                            return
                        for choice in chunk.choices:
                            if choice.delta.refusal:
                                events.put(("refusal", choice.delta.refusal))
                            if choice.delta.content:
                                events.put(("delta", choice.delta.content))
                            if choice.finish_reason:
                                events.put(("finish", choice.finish_reason))
            events.put(("end", None))
        except LLMError as exc:
            events.put(("error", exc))
        except Exception as exc:  # a bug here must still end the stream with our error, never hang it
            events.put(("error", LLMError(provider=self.provider, detail=self._redact(f"{type(exc).__name__}: {exc}"))))
        finally:
            self._slots.release()

    def embed(self, texts: list[str], *, model: str | None = None) -> list[list[float]]:
        """One embedding vector per text, in order (``model``: default ``settings.llm_embedding_model``)."""
        name = model or self.settings.llm_embedding_model
        if not name:
            raise LLMNotConfigured("llm.embedding_not_configured", provider=self.provider)
        if not texts:
            return []
        deadline = Deadline(self.settings.llm_deadline_s)
        with self._record("embed", deadline) as rec:
            result = self._request(lambda timeout: self._sdk.embeddings.create(
                model=name, input=texts, encoding_format="float",
                timeout=timeout,  # type: ignore[arg-type]  # the SDK's hints name httpx2.Timeout; it takes httpx's too
            ), deadline, rec)
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

    def _cap_field(self, max_tokens: int) -> dict[str, int]:
        # OpenAI's newer models want max_completion_tokens; compatible servers max_tokens
        return {"max_completion_tokens" if self.provider == "openai" else "max_tokens": max_tokens}

    def _http_timeout(self, read_s: float, deadline: Deadline) -> httpx.Timeout:
        """The transport timeouts of one attempt: ``read_s`` per read, never past the deadline."""
        left = max(0.01, deadline.left())
        return httpx.Timeout(min(read_s, left), connect=min(CONNECT_TIMEOUT_S, left))

    def _deadline(self, bound: str, seconds: float) -> LLMDeadline:
        return LLMDeadline(provider=self.provider, bound=bound, seconds=round(seconds, 3))

    def _take_slot(self, deadline: Deadline) -> None:
        """Wait for a free slot of the server (``settings.llm_parallel``), within the deadline."""
        if not self._slots.acquire(timeout=max(0.0, deadline.left())):
            raise self._deadline("total", deadline.total)

    def _request(self, send: Callable[[httpx.Timeout], R], deadline: Deadline, rec: dict[str, Any]) -> R:
        """One non-streamed request with our retries (connection errors, 408, 409, 429, 5xx; honouring
        Retry-After), every attempt in a worker thread so the caller returns at the deadline even if
        a server trickles its answer."""
        retries = self.settings.llm_max_retries
        for attempt in range(retries + 1):
            rec["attempts"] = rec.get("attempts", 0) + 1
            try:
                return self._attempt(send, deadline)
            except _Retryable as r:
                wait = backoff_s(attempt, r.retry_after)
                if attempt >= retries or wait >= deadline.left():
                    raise r.error from None
                time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _attempt(self, send: Callable[[httpx.Timeout], R], deadline: Deadline) -> R:
        self._take_slot(deadline)
        timeout = self._http_timeout(self.settings.llm_timeout_s, deadline)
        box: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)

        def work() -> None:
            try:
                box.put((True, send(timeout)))
            except BaseException as exc:  # handed to the caller
                box.put((False, exc))
            finally:
                self._slots.release()

        threading.Thread(target=work, daemon=True, name="llm-request").start()
        try:
            ok, value = box.get(timeout=max(0.0, deadline.left()) + REPORT_GRACE_S)
        except queue.Empty:
            raise self._deadline("total", deadline.total) from None
        if ok:
            return value
        if isinstance(value, openai.APITimeoutError) and deadline.left() <= REPORT_GRACE_S:
            raise self._deadline("total", deadline.total) from value
        retry_after = _retry_after(value)
        error = self._translate(value, streaming=False) if not isinstance(value, LLMError) else value
        if _retryable(value):
            raise _Retryable(error, retry_after)
        raise error from value

    def _chat(self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int,
              deadline: Deadline, rec: dict[str, Any], response_format: dict[str, Any] | None = None) -> str:
        """One non-streamed chat request; the answer's text ('' when the model sent no content)."""
        extra: dict[str, Any] = self._cap_field(max_tokens)
        if response_format is not None:
            extra["response_format"] = response_format
        # the SDK's hints name httpx2.Timeout only; it takes httpx.Timeout too (as in embed): no overload matches
        completion = self._request(lambda timeout: self._sdk.chat.completions.create(  # type: ignore[call-overload]
            model=self.model, messages=cast(Any, messages), temperature=temperature, timeout=timeout, **extra,
        ), deadline, rec)
        usage = getattr(completion, "usage", None)
        if usage is not None:
            rec["prompt_tokens"] = rec.get("prompt_tokens", 0) + (usage.prompt_tokens or 0)
            rec["completion_tokens"] = rec.get("completion_tokens", 0) + (usage.completion_tokens or 0)
        if not completion.choices:
            raise LLMHTTPError("llm.bad_response", provider=self.provider, detail="the reply has no choices")
        choice = completion.choices[0]
        self._check_finish(choice.finish_reason, choice.message.refusal)
        if choice.finish_reason == "length":
            raise LLMTokenLimit(provider=self.provider, max_tokens=max_tokens)
        return choice.message.content or ""

    @contextmanager
    def _record(self, kind: str, deadline: Deadline) -> Iterator[dict[str, Any]]:
        """Append one record per public call to ``self.calls`` (kind, seconds, tokens, outcome)."""
        rec: dict[str, Any] = {"kind": kind}
        try:
            yield rec
            rec["outcome"] = "ok"
        except LLMError as exc:
            rec["outcome"] = exc.code
            rec["bound"] = exc.params.get("bound") if isinstance(exc, LLMDeadline) else (
                "max_tokens" if isinstance(exc, LLMTokenLimit) else None)
            raise
        except GeneratorExit:
            rec["outcome"] = "closed"
            raise
        finally:
            rec["seconds"] = round(deadline.elapsed(), 4)
            self.calls.append(rec)
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


class _Retryable(Exception):
    """An attempt failed in a way worth retrying (``error``: our error for it)."""

    def __init__(self, error: LLMError, retry_after: float | None) -> None:
        super().__init__(error.code)
        self.error = error
        self.retry_after = retry_after


def _retryable(exc: BaseException) -> bool:
    """Connection errors, 408, 409, 429 and 5xx are retried (as the SDK would); a timeout is not: a slow
    server stays slow, and a retry would queue behind the request it is still computing."""
    if isinstance(exc, openai.APITimeoutError):
        return False
    if isinstance(exc, openai.APIConnectionError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in _RETRY_STATUS or exc.status_code >= 500
    return False


def _retry_after(exc: BaseException) -> float | None:
    """The server's ``retry-after-ms`` / ``Retry-After`` (seconds) of an HTTP error, if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return float(value) * scale
            except ValueError:
                continue
    return None


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
