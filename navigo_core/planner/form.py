"""The Plan page's form → the request sentence the planner parses.

The planner has one input, natural language, so the form is written out as a
sentence in the user's language that the rules-first parser reads exactly;
the page shows the sentence, so nothing is hidden.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from navigo_core.understand import interest_lexicon


def request_text(*, origin: str, destination: str, start: date | None, end: date | None, budget: float | None,
                 currency: str, adults: int, children: int, interests: Sequence[str], lang: str) -> str:
    """A sentence such as ``From Shanghai to Hangzhou, 2026-05-01 to 2026-05-05, 2 adults, budget 6000 CNY``."""
    lexicon = interest_lexicon()
    words = [_word(lexicon[i][lang], i) for i in interests if i in lexicon and lexicon[i].get(lang)]
    parts: list[str] = []
    if lang == "zh":
        if origin.strip() and destination.strip():
            parts.append(f"从{origin.strip()}出发去{destination.strip()}")
        elif destination.strip():
            parts.append(f"去{destination.strip()}")
        if start and end:
            parts.append(f"{start:%Y-%m-%d}到{end:%Y-%m-%d}")
        parts.append(f"{adults}个大人" + (f"{children}个小孩" if children else ""))
        if budget:
            parts.append(f"预算{budget:.0f}{currency}")
        if words:
            parts.append("喜欢" + "和".join(words))
        return "，".join(parts)
    if origin.strip() and destination.strip():
        parts.append(f"From {origin.strip()} to {destination.strip()}")
    elif destination.strip():
        parts.append(f"To {destination.strip()}")
    if start and end:
        parts.append(f"{start:%Y-%m-%d} to {end:%Y-%m-%d}")
    parts.append(f"{adults} adult{'s' if adults != 1 else ''}"
                 + (f" {children} kid{'s' if children != 1 else ''}" if children else ""))
    if budget:
        parts.append(f"budget {budget:.0f} {currency}")
    if words:
        parts.append("we like " + " and ".join(words))
    return ", ".join(parts)


def _word(keywords: list[str], interest: str) -> str:
    """The interest's own name when the lexicon knows it as a keyword (English), else its first keyword."""
    return interest if interest in keywords else keywords[0]
