"""Markdown the app writes: lists that end where they end, questions one per line.

CommonMark continues a list item with any following line that is not blank ("lazy continuation"):
``"- a\\n- b\\nTry one of the examples."`` renders the sentence inside the last bullet. Every text the
app composes from a list and sentences goes through :func:`end_lists`; several questions go through
:func:`question_list`.
"""

from __future__ import annotations

import re

__all__ = ["end_lists", "question_list"]

_ITEM = re.compile(r"^[ ]{0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")  # a bullet or a numbered item (not "\-", "1\.")
_FENCE = re.compile(r"^[ ]{0,3}(```|~~~)")


def end_lists(text: str) -> str:
    """``text`` with a blank line between a list and a paragraph line that follows it, so the sentence
    after the last bullet is its own paragraph. Indented lines (an item's own continuation), blank
    lines, further items and fenced code are left as they are."""
    if not text or "\n" not in text:
        return text
    out: list[str] = []
    in_list = in_fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence, in_list = not in_fence, False
        elif in_fence:
            pass
        elif not line.strip():
            in_list = False
        elif _ITEM.match(line):
            in_list = True
        elif in_list and not line.startswith((" ", "\t")):
            out.append("")  # the sentence after a list: its own paragraph
            in_list = False
        out.append(line)
    return "\n".join(out)


def question_list(questions: list[str], mark: str = "❓") -> str:
    """Questions one per line: one question as its own line, several as a numbered list."""
    if len(questions) == 1:
        return f"{mark} {questions[0]}"
    return "\n".join(f"{i}. {mark} {q}" for i, q in enumerate(questions, 1))
