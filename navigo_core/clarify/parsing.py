"""Find and parse the ``[INTENT_READY]`` block at the end of a model reply.

Accepted shapes (keys in any order)::

    text … [INTENT_READY] {"objective": …}
    text …
    [INTENT_READY]
    ```json
    {"objective": …, "constraints": […], "assumptions": […]}
    ```
    trailing text

The marker may be wrapped in Markdown (``**[INTENT_READY]**``, backticks). A summary
JSON block without the marker (a fenced or bare object with an ``objective``) counts as
the marker too, so it is never shown raw. The visible content is the reply without the
marker and the JSON block (text before it, and any trailing text after it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic import ValidationError

from navigo_core.clarify.models import Summary

MARKER = "[INTENT_READY]"
_MARKER_RX = re.compile(r"(?:(?:\*\*|__|\*|`)[ \t]*)?\[\s*INTENT[_ ]READY\s*\](?:[ \t]*(?:\*\*|__|\*|`(?!`)))?",
                        re.IGNORECASE)
_BLOCK_RX = re.compile(r"```|\{\s*\"")  # where a bare summary block may start
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


def block_start(text: str) -> int:
    """Index where a streamed reply's hidden part may begin (the marker, a code fence, a JSON
    object); -1 when there is none yet. Text from there on is shown only once the reply is parsed."""
    starts = [marker_start(text)]
    block = _BLOCK_RX.search(text)
    if block:
        starts.append(block.start())
    starts = [i for i in starts if i >= 0]
    return min(starts) if starts else -1


def held_back(text: str) -> int:
    """How many trailing characters of a streamed ``text`` could start the marker (with the Markdown
    that may open it: ``**``, backticks) or a summary block (``{``)."""
    n = 0
    for k in range(min(len(MARKER) - 1, len(text)), 0, -1):
        if MARKER.startswith(text[-k:]):
            n = k
            break
    rest = text[:len(text) - n]
    n += len(rest) - len(rest.rstrip("*_`"))
    brace = re.search(r"\{\s*$", text[:len(text) - n])
    return len(text) - brace.start() if brace else n


def _clean(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def parse_reply(text: str) -> ParsedReply:
    """Split a model reply into visible content and the summary block."""
    m = _MARKER_RX.search(text or "")
    if m is None:
        return _bare_summary(text or "")
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


def _bare_summary(text: str) -> ParsedReply:
    """A reply without the marker: a summary object in it (fenced or bare) still ends the dialogue and is
    never shown raw; any other text is the content."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if not isinstance(value, dict) or "objective" not in value:
            continue
        start = match.start()
        before, rest = text[:start], text[end:]
        fence = re.search(r"```[a-zA-Z]*\s*$", before)
        if fence:
            before = before[:fence.start()]
            close = _FENCE_CLOSE.match(rest)
            rest = rest[close.end():] if close else rest
        content = _clean(before.rstrip() + ("\n\n" + rest.strip() if rest.strip() else ""))
        try:
            return ParsedReply(content=content, ready=True, summary=Summary.model_validate(value), raw=text[start:end])
        except ValidationError as exc:
            return ParsedReply(content=content, ready=True, raw=text[start:end],
                               error="; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()))
    return ParsedReply(content=_clean(text), ready=False)
