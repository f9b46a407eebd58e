"""The one redaction function: credentials never reach a screen, a log line or the store.

:func:`redact` masks, in any text:

* the user info of a URL (``http://user:pass@host`` → ``http://***@host``);
* the value of a credential-looking parameter (``?key=…``, ``&token=…``, ``access_token=…``,
  ``api_key``, ``secret``, ``password``, ``signature`` …), in a URL or in free text → ``?key=***``;
* ``Authorization``-style values (``Basic dXNlcjpwYXNz``, ``Bearer sk-…``) → ``Basic ***``;
* every secret registered with :func:`register_secret` (the settings register their keys,
  tokens and the passwords inside URL settings, plain, percent-decoded and as HTTP Basic
  base64), wherever it appears.

:func:`redact_url` is the same for one URL setting (what the sidebar shows).
:func:`install_log_redaction` makes every log record pass through :func:`redact`, its
traceback included. Each pattern is linear-time (no nested quantifiers). Nothing of ours is
imported here, so the store can use it too.
"""

from __future__ import annotations

import base64
import logging
import re
import threading
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["MASK", "install_log_redaction", "redact", "redact_url", "register_secret", "register_url_secrets"]

MASK = "***"

# query parameters whose values are credentials (compared lower-case, "-" as "_")
SECRET_PARAMS = ("key", "api_key", "apikey", "token", "access_token", "refresh_token", "id_token", "auth", "secret",
                 "client_secret", "password", "passwd", "pwd", "sig", "signature", "x_amz_signature",
                 "x_goog_signature", "session", "sessionid", "jwt", "credential", "credentials")
_PARAM_NAMES = "|".join(sorted({p.replace("_", "[_-]") for p in SECRET_PARAMS}, key=len, reverse=True))
# scheme://userinfo@ : the user info has no "/", "@", whitespace, quotes or backslashes (bounded by the "@")
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://)(?P<info>[^/\s@\"'<>\\]{1,512})@")
_PARAM = re.compile(rf"(?P<lead>(?<![A-Za-z0-9_\-])(?:{_PARAM_NAMES})=)(?P<value>[^&#\s\"'<>\\,;]+)", re.IGNORECASE)
_AUTH = re.compile(r"\b(?P<kind>Basic|Bearer|Token|Digest)(?P<sep>\s+|%20)(?P<value>[A-Za-z0-9+/=._~\-]{6,})")
_MIN_SECRET = 6  # shorter values would mask ordinary words

_secrets: set[str] = set()
_lock = threading.Lock()
_pattern: re.Pattern[str] | None = None


def register_secret(*values: Any) -> None:
    """Mask ``values`` (API keys, passwords) wherever :func:`redact` sees them; short or empty ones are ignored."""
    global _pattern
    new = {str(v) for v in values if v is not None and len(str(v)) >= _MIN_SECRET}
    with _lock:
        if new <= _secrets:
            return
        _secrets.update(new)
        ordered = sorted(_secrets, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(s) for s in ordered))


def register_url_secrets(url: str) -> None:
    """Register the credentials inside a URL setting: its password (and user:password, plain,
    percent-decoded and as HTTP Basic base64) and the values of its credential query parameters."""
    if not url or not isinstance(url, str):
        return
    try:
        parts = urlsplit(url.strip())
        user, password = parts.username, parts.password
        query = parse_qsl(parts.query, keep_blank_values=False)
    except ValueError:
        return
    found: list[str] = []
    if password:
        for u, p in ((user or "", password), (unquote(user or ""), unquote(password))):
            found += [p, f"{u}:{p}", base64.b64encode(f"{u}:{p}".encode()).decode()]
    elif user:
        found += [user, unquote(user)]
    for name, value in query:
        if name.lower().replace("-", "_") in SECRET_PARAMS:
            found += [value]
    register_secret(*found)


def redact(text: Any) -> Any:
    """``text`` with every credential masked (non-strings are returned unchanged)."""
    if not isinstance(text, str) or not text:
        return text
    out = text
    pattern = _pattern
    if pattern is not None:
        out = pattern.sub(MASK, out)
    if "://" in out:
        out = _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", out)
    if "=" in out:
        out = _PARAM.sub(lambda m: m.group("lead") + MASK, out)
    return _AUTH.sub(_mask_auth, out)


def _mask_auth(m: re.Match[str]) -> str:
    """``Basic dXNlcjpwYXNz`` / ``Bearer sk-…`` masked; ``Basic information`` / ``Basic Economy`` kept."""
    value = m.group("value")
    token_like = (any(c.isdigit() or c in "=+/_-." for c in value) or any(c.isupper() for c in value[1:]))
    return f"{m.group('kind')}{m.group('sep')}{MASK}" if token_like else m.group(0)


def redact_url(url: str) -> str:
    """One URL setting as it may be shown: user info and credential query values masked."""
    return redact(url or "")


# --- logging -------------------------------------------------------------------------------

_installed = False


def install_log_redaction() -> None:
    """Route every log record through :func:`redact` (message, arguments and traceback); idempotent."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    previous = logging.getLogRecordFactory()
    formatter = logging.Formatter()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string: keep the raw message
            message = str(record.msg)
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(formatter.formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return record

    logging.setLogRecordFactory(factory)
