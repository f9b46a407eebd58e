"""Containment: a model's reply must never carry its system prompt to the user.

The risk guard refuses attacks it recognises; this is the layer behind it, for the ones it
misses. :class:`PromptLeakGuard` is built from the system messages of one request and tells
whether a reply repeats any run of :data:`RUN` (12) consecutive words of them (lower-cased, punctuation
ignored; each CJK character counts as a word). A reply that does is not delivered:
:class:`~navigo_core.llm.client.LLMClient` raises ``LLMPromptLeak`` instead, and every caller
already falls back on an ``LLMError``. Streams are held back by :data:`HOLD_CHARS` characters
(whole chunks are delayed, never cut) so no part of a leaked passage reaches the screen.

Short pieces a reply may legitimately share with its prompt (a marker, a field name, "one adult")
are shorter than a run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence

RUN = 12  # consecutive words (or CJK characters) of the system prompt that make a leak
HOLD_CHARS = 160  # a streamed reply is released this far behind what has arrived

_LOOKBACK = 600  # characters before a new chunk that a run ending in it can reach back to
_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff\uf900-\ufaff]")
_PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class PromptLeakGuard:
    """Built from the system prompts of one request; :meth:`leaks` tests a reply."""

    def __init__(self, prompts: Iterable[str], run: int = RUN) -> None:
        self.run = run
        self._runs: set[tuple[str, ...]] = set()
        for prompt in prompts:
            for part in _PLACEHOLDER.split(prompt):  # filled-in values are the user's, not the prompt's
                toks = _tokens(part)
                self._runs.update(tuple(toks[i:i + run]) for i in range(len(toks) - run + 1))

    @classmethod
    def for_messages(cls, messages: Sequence[dict[str, str]]) -> PromptLeakGuard:
        return cls(m.get("content") or "" for m in messages if m.get("role") == "system")

    def __bool__(self) -> bool:
        return bool(self._runs)

    def leaks(self, reply: str) -> bool:
        if not self._runs or not reply:
            return False
        toks = _tokens(reply)
        return any(tuple(toks[i:i + self.run]) in self._runs for i in range(len(toks) - self.run + 1))

    def hold(self, chunks: Iterable[str], on_leak: Callable[[], Exception]) -> Iterator[str]:
        """Re-yield ``chunks`` unchanged, each once at least :data:`HOLD_CHARS` characters have
        arrived after it; raise ``on_leak()`` as soon as what has arrived leaks, before the leaked
        part is yielded."""
        tail = ""
        pending: list[str] = []
        pending_chars = 0
        source = iter(chunks)
        while True:
            try:
                chunk = next(source)
            except StopIteration:
                break
            except Exception:
                yield from pending  # the source failed: what arrived did not leak; deliver it, then the error
                raise
            tail = (tail + chunk)[-(len(chunk) + _LOOKBACK):]  # a run ending in this chunk starts in here
            if self.leaks(tail):
                raise on_leak()  # the held-back text may hold the leak's start: it is dropped
            pending.append(chunk)
            pending_chars += len(chunk)
            while pending and pending_chars - len(pending[0]) >= HOLD_CHARS:
                pending_chars -= len(pending[0])
                yield pending.pop(0)
        yield from pending


__all__ = ["HOLD_CHARS", "RUN", "PromptLeakGuard"]
