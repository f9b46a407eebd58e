"""Find and parse the ``[INTENT_READY]`` block at the end of a model reply.

Accepted shapes (keys in any order)::

    text … [INTENT_READY] {"objective": …}
    text …
    [INTENT_READY]
    ```json
    {"objective": …, "constraints": […], "assumptions": […]}
    ```
    trailing text

The visible content is the reply without the marker and the JSON block (text
before it, and any trailing text after it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic import ValidationError

from navigo_core.clarify.models import Summary

MARKER = "[INTENT_READY]"
_MARKER_RX = re.compile(r"\[\s*INTENT[_ ]READY\s*\]", re.IGNORECASE)
_FENCE_OPEN = re.compile(r"\s*```[a-zA-Z]*\s*")
_FENCE_CLOSE = re.compile(r"\s*```")


@dataclass
class ParsedReply:
    """``ready``: the marker was found. ``summary``: the valid summary (None when the JSON is missing or
    invalid; ``raw`` then holds the text after the marker and ``error`` says why)."""

    content: str
    ready: bool
    summary: Summary | None = None
    raw: str = ""
    error: str = ""


def marker_start(text: str) -> int:
    """Index of the marker in ``text`` (-1 when absent)."""
    m = _MARKER_RX.search(text)
    return m.start() if m else -1


def held_back(text: str) -> int:
    """How many trailing characters of a streamed ``text`` could be the start of the marker."""
    for n in range(min(len(MARKER) - 1, len(text)), 0, -1):
        if MARKER.startswith(text[-n:]):
            return n
    return 0


def _clean(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def parse_reply(text: str) -> ParsedReply:
    """Split a model reply into visible content and the summary block."""
    m = _MARKER_RX.search(text or "")
    if m is None:
        return ParsedReply(content=_clean(text or ""), ready=False)
    before, after = text[:m.start()], text[m.end():]
    fence = _FENCE_OPEN.match(after)
    body_start = fence.end() if fence and "```" in after[:fence.end()] else 0
    brace = after.find("{", body_start)
    if brace < 0 or after[body_start:brace].strip():
        return ParsedReply(content=_clean(before), ready=True, raw=after.strip(), error="no JSON object after the marker")
    try:
        value, end = json.JSONDecoder().raw_decode(after, brace)
    except json.JSONDecodeError as exc:
        return ParsedReply(content=_clean(before), ready=True, raw=after.strip(), error=f"invalid JSON: {exc}")
    rest = after[end:]
    if body_start:
        close = _FENCE_CLOSE.match(rest)
        if close:
            rest = rest[close.end():]
    content = _clean(before.rstrip() + ("\n\n" + rest.strip() if rest.strip() else ""))
    if not isinstance(value, dict):
        return ParsedReply(content=content, ready=True, raw=after[brace:end], error="the JSON is not an object")
    try:
        summary = Summary.model_validate(value)
    except ValidationError as exc:
        return ParsedReply(content=content, ready=True, raw=after[brace:end],
                           error="; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()))
    return ParsedReply(content=content, ready=True, summary=summary, raw=after[brace:end])
