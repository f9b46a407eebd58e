"""Input limits: stated once in settings (:mod:`navigo_core.config`), enforced at every entry point.

Entry points call these checks before anything runs or is stored: the chat service
(:meth:`~navigo_core.chat.ChatService.send`), the planner (:func:`~navigo_core.planner.supervisor.plan`,
``resume``), the command line (``plan``, ``clarify``, ``intent``), route requests
(:func:`~navigo_core.route.service.validate_request`) and uploads (the Reimbursement and Router
lab pages). The request parser (:mod:`navigo_core.understand`) applies the trip limits (length,
date window, travellers) to what it reads: a value outside them is not taken, and the parser
asks again with the limit in the question.

Entry points that hold settings check against ``Limits.from_settings(settings)``; :func:`current` is the
limits in force for callers that hold none.

Every refusal is an :class:`~navigo_core.errors.InputError` whose ``limits.*`` message is in the
user's language. Messages never echo more than :data:`MAX_ECHO` characters of the input
(:func:`clip`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from navigo_core.errors import MAX_ECHO, InputError, clip

__all__ = ["MAX_ECHO", "Limits", "check_field", "check_message", "check_upload", "clip", "current", "cut"]


@dataclass(frozen=True)
class Limits:
    """The limits in force (see the settings of the same names)."""

    message_chars: int = 2000
    field_chars: int = 200
    trip_days: int = 60
    date_past_days: int = 365
    date_future_days: int = 730
    travellers_min: int = 1
    travellers_max: int = 50
    upload_bytes: int = 2_000_000
    upload_rows: int = 5000

    @classmethod
    def from_settings(cls, settings: Any) -> Limits:
        return cls(
            message_chars=int(getattr(settings, "max_message_chars", cls.message_chars)),
            field_chars=int(getattr(settings, "max_field_chars", cls.field_chars)),
            trip_days=int(getattr(settings, "max_trip_days", cls.trip_days)),
            date_past_days=int(getattr(settings, "date_past_days", cls.date_past_days)),
            date_future_days=int(getattr(settings, "date_future_days", cls.date_future_days)),
            travellers_max=int(getattr(settings, "max_travellers", cls.travellers_max)),
            upload_bytes=int(getattr(settings, "max_upload_bytes", cls.upload_bytes)),
            upload_rows=int(getattr(settings, "max_upload_rows", cls.upload_rows)),
        )

    def date_window(self, today: date) -> tuple[date, date]:
        """The earliest and the latest trip date accepted."""
        return today - timedelta(days=self.date_past_days), today + timedelta(days=self.date_future_days)


_NAMES = ("max_message_chars", "max_field_chars", "max_trip_days", "date_past_days", "date_future_days",
          "max_travellers", "max_upload_bytes", "max_upload_rows")
_cache: dict[tuple[Any, ...], Limits] = {}


def _sources_key() -> tuple[Any, ...]:
    """What the limits are read from: the environment and the files' modification times (microseconds to
    compute; building Settings takes milliseconds, too slow for every message)."""
    from navigo_core.config import SECRETS_TOML

    env = tuple(os.environ.get(n.upper(), os.environ.get(n)) for n in _NAMES)
    stamps: list[int | None] = []
    for path in (".env", str(SECRETS_TOML)):
        try:
            stamps.append(os.stat(path).st_mtime_ns)
        except OSError:
            stamps.append(None)
    return (*env, *stamps)


def current() -> Limits:
    """The limits in force: those of the settings the environment and the settings files give now (re-read when
    they change). What the checks below use when they are called without ``limits``: library calls that hold no
    settings (``parse_request``, ``recognize``, a page's upload or comment check). Entry points that hold
    settings pass ``Limits.from_settings(settings)`` instead (the chat service, the command line, the router, the
    gate, the planner, the route service); this is the one reader of the global settings below the composition
    roots (see :mod:`navigo_core.scenes.defaults`)."""
    key = _sources_key()
    lim = _cache.get(key)
    if lim is None:
        from navigo_core.config import get_settings

        try:
            lim = Limits.from_settings(get_settings())
        except Exception:  # unreadable settings: the documented defaults still hold
            lim = Limits()
        _cache.clear()
        _cache[key] = lim
    return lim


def check_message(text: str | None, limits: Limits | None = None) -> str:
    """``text`` unchanged, or ``InputError("limits.message_too_long")`` when it is longer than allowed."""
    lim = limits or current()
    text = text or ""
    if len(text) > lim.message_chars:
        raise InputError("limits.message_too_long", length=len(text), max=lim.message_chars)
    return text


def cut(text: str, limits: Limits | None = None) -> str:
    """``text`` cut to the message limit: what the routing rules and the gate look at. The entry points
    refuse longer messages; this bounds the work of any caller that did not (the CLI's ``intent``, the
    library's ``recognize``), so one huge string cannot hold the interpreter for seconds."""
    lim = limits or current()
    return text if len(text) <= lim.message_chars else text[: lim.message_chars]


def check_field(value: str | None, field: str, limits: Limits | None = None) -> str:
    """One field (a place, a stop, a title): ``InputError("limits.field_too_long")`` above the limit."""
    lim = limits or current()
    value = value or ""
    if len(value) > lim.field_chars:
        raise InputError("limits.field_too_long", field=field, length=len(value), max=lim.field_chars,
                         start=clip(value, 40))
    return value


def check_upload(data: bytes | str | None, name: str = "", limits: Limits | None = None) -> None:
    """An uploaded or pasted file: size and rows (counted as lines, before any parsing)."""
    lim = limits or current()
    if data is None:
        return
    size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
    if size > lim.upload_bytes:
        raise InputError("limits.upload_too_big", name=clip(name, 80), size=size, max=lim.upload_bytes)
    newline: Any = "\n" if isinstance(data, str) else b"\n"
    cr: Any = "\r" if isinstance(data, str) else b"\r"
    body = data.rstrip(newline + cr)  # a final line break ends the last row, it starts none
    rows = max(body.count(newline), body.count(cr))  # CR-only files count too; the header is not a row
    if rows > lim.upload_rows:
        raise InputError("limits.upload_too_many_rows", name=clip(name, 80), rows=rows, max=lim.upload_rows)
