"""Bounds of one LLM call: a deadline, a token cap, and the server's parallel slots.

Every public call of :class:`~navigo_core.llm.client.LLMClient` (``complete``, ``structured``,
``stream``, ``embed``) gets one :class:`Deadline` of ``settings.llm_deadline_s`` seconds when it
starts. Everything the call does runs inside it: waiting for a free slot of the server
(:func:`server_slots`, ``settings.llm_parallel``), every attempt and retry, the repair turn of a
structured answer, a whole stream. A streamed reply has two more bounds: its first piece must come
within ``llm_timeout_s`` and each next one within ``llm_stream_gap_s``. A bound that is hit raises
``LLMDeadline`` (``bound``: first_token, gap or total); a reply that reaches its token cap raises
``LLMTokenLimit``. Callers fall back on either like on any other ``LLMError``;
:func:`describe_failure` names the bound for their decision logs.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from navigo_core.errors import describe_failure  # noqa: F401  (re-exported: callers import it from here too)

__all__ = ["Deadline", "backoff_s", "describe_failure", "server_slots"]

MAX_RETRY_AFTER_S = 30.0  # a server's Retry-After is honoured up to this (and never past the deadline)

_SLOTS: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_SLOTS_LOCK = threading.Lock()


@dataclass
class Deadline:
    """``total`` seconds from now (monotonic clock)."""

    total: float
    start: float = field(default_factory=time.monotonic)

    @property
    def end(self) -> float:
        return self.start + self.total

    def left(self) -> float:
        return self.end - time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def expired(self) -> bool:
        return self.left() <= 0


def server_slots(base_url: str, parallel: int) -> threading.BoundedSemaphore:
    """The one semaphore of the server at ``base_url`` with ``parallel`` slots (shared by every client of it)."""
    key = (base_url, max(1, int(parallel)))
    with _SLOTS_LOCK:
        if key not in _SLOTS:
            _SLOTS[key] = threading.BoundedSemaphore(key[1])
        return _SLOTS[key]


def backoff_s(attempt: int, retry_after: float | None) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): the server's Retry-After when given, else 0.5 · 2^n (≤ 8 s)."""
    if retry_after is not None and retry_after >= 0:
        return min(retry_after, MAX_RETRY_AFTER_S)
    return min(0.5 * 2 ** attempt, 8.0)
