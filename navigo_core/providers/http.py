"""The one place where HTTP failures become NaviGo errors.

Every HTTP provider (places, matrix, and later LLM, weather, flights) calls
:func:`get_json` (or :func:`request_json`) instead of handling httpx itself,
so each failure reads the same everywhere:

=======================================  ===========================================
what happened                            raised
=======================================  ===========================================
no answer within the timeout             :class:`ProviderTimeout` (``seconds``)
connection refused / DNS / TLS failure   :class:`ProviderError` ``provider.unreachable``
HTTP status >= 400                       :class:`ProviderHTTPError` (``status``, and the
                                         server's own ``message``/``error`` as ``detail``)
a body that is not JSON                  :class:`ProviderError` ``provider.bad_json``
=======================================  ===========================================

URLs in messages never carry the query string, so API keys passed as query
parameters (AMap's ``key``) are never shown or logged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import httpx

from navigo_core import __version__
from navigo_core.errors import ProviderError, ProviderHTTPError, ProviderTimeout

#: Sent with every request; Nominatim's usage policy requires an identifying agent.
USER_AGENT = f"NaviGo-Workbench/{__version__} (route and trip planning; python-httpx)"

_DETAIL_MAX = 300


def make_client(*, timeout_s: float, user_agent: str = USER_AGENT,
                headers: Mapping[str, str] | None = None) -> httpx.Client:
    """An ``httpx.Client`` with NaviGo's User-Agent and one timeout for connect, read and write."""
    all_headers = {"User-Agent": user_agent, "Accept": "application/json"}
    all_headers.update(headers or {})
    return httpx.Client(timeout=httpx.Timeout(timeout_s), headers=all_headers, follow_redirects=True)


def safe_url(url: str | httpx.URL) -> str:
    """``url`` without its query string or credentials (so no key leaks into a message)."""
    u = httpx.URL(str(url))
    port = f":{u.port}" if u.port else ""
    return f"{u.scheme}://{u.host}{port}{u.path}"


def format_seconds(seconds: float | None) -> str:
    """``10`` for 10.0, ``0.5`` for 0.5: how a timeout reads in a message."""
    return "?" if seconds is None else f"{seconds:g}"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _DETAIL_MAX else text[: _DETAIL_MAX - 1] + "…"


def error_detail(response: httpx.Response) -> str:
    """The most useful short text of an error response: its JSON ``message``/``error``/``info``, else the body."""
    data = json_or_none(response)
    if isinstance(data, dict):
        for key in ("message", "error", "info", "detail", "error_message"):
            value = data.get(key)
            if isinstance(value, dict):  # OpenAI style: {"error": {"message": ...}}
                value = value.get("message")
            if value:
                return _short(str(value))
    return _short(response.text) or response.reason_phrase or "no body"


def _timeout_of(client: httpx.Client, timeout_s: float | None) -> float | None:
    if timeout_s is not None:
        return timeout_s
    t = client.timeout
    return t.read if t.read is not None else t.connect


ErrorHook = Callable[[httpx.Response], Exception | None]


def request_json(client: httpx.Client, method: str, url: str, *, provider: str,
                 params: Mapping[str, Any] | None = None, json_body: Any = None,
                 headers: Mapping[str, str] | None = None, timeout_s: float | None = None,
                 on_error_status: ErrorHook | None = None) -> Any:
    """Send one request and return its parsed JSON body, or raise a ``ProviderError`` subclass.

    ``provider`` is the display name used in messages ("OSRM", "AMap", ...).
    ``timeout_s`` overrides the client's timeout for this request.
    ``on_error_status`` may turn an HTTP >= 400 response into a more specific
    error (return it); returning None keeps the generic ``ProviderHTTPError``.
    """
    kwargs: dict[str, Any] = {"params": params, "headers": headers}
    if json_body is not None:
        kwargs["json"] = json_body
    if timeout_s is not None:
        kwargs["timeout"] = httpx.Timeout(timeout_s)
    try:
        response = client.request(method, url, **kwargs)
    except httpx.TimeoutException:
        raise ProviderTimeout(provider=provider, seconds=format_seconds(_timeout_of(client, timeout_s))) from None
    except httpx.TransportError as exc:
        raise ProviderError("provider.unreachable", provider=provider, url=safe_url(url),
                            detail=_short(str(exc)) or type(exc).__name__) from exc
    if response.status_code >= 400:
        specific = on_error_status(response) if on_error_status else None
        if specific is not None:
            raise specific
        raise ProviderHTTPError(provider=provider, status=response.status_code, detail=error_detail(response))
    try:
        return response.json()
    except ValueError as exc:
        snippet = _short(response.text[:80]) or "empty body"
        raise ProviderError("provider.bad_json", provider=provider, url=safe_url(url),
                            detail=f"{type(exc).__name__}: {snippet}") from exc


def get_json(client: httpx.Client, url: str, *, provider: str, params: Mapping[str, Any] | None = None,
             timeout_s: float | None = None, on_error_status: ErrorHook | None = None) -> Any:
    """``GET url`` and return the parsed JSON (see :func:`request_json` for the errors)."""
    return request_json(client, "GET", url, provider=provider, params=params, timeout_s=timeout_s,
                        on_error_status=on_error_status)


def json_or_none(response: httpx.Response) -> Any:
    """The response's JSON body, or None when it has none."""
    try:
        return response.json()
    except ValueError:
        return None


def bad_reply(provider: str, detail: str) -> ProviderError:
    """The error for a JSON reply whose shape is not what the API documents."""
    return ProviderError("provider.bad_reply", provider=provider, detail=_short(detail))

