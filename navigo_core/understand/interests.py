"""Interests from the bilingual lexicon ``data/interests.yaml`` (canonical ids, in order of mention)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from navigo_core.safe_yaml import read_yaml
from navigo_core.understand.numbers import normalize_text

__all__ = ["canonical_interest", "interest_label", "interest_lexicon", "parse_interests"]

_DATA = Path(__file__).parent / "data" / "interests.yaml"


@lru_cache(maxsize=1)
def interest_lexicon() -> dict[str, dict[str, list[str]]]:
    """Canonical interest id → {"en": [...], "zh": [...]}."""
    return read_yaml(_DATA)


@lru_cache(maxsize=1)
def _interest_patterns() -> list[tuple[str, re.Pattern[str]]]:
    out = []
    for iid, words in interest_lexicon().items():
        en = "|".join(re.escape(w.lower()) for w in sorted(words.get("en", []), key=len, reverse=True))
        zh = "|".join(re.escape(w) for w in sorted(words.get("zh", []), key=len, reverse=True))
        parts = [rf"\b(?:{en})s?\b"] if en else []
        if zh:
            parts.append(f"(?:{zh})")
        out.append((iid, re.compile("|".join(parts))))
    return out


def parse_interests(text: str) -> list[str]:
    """Canonical interest ids in order of mention: "喜欢喝茶和徒步" → ["tea", "hiking"]."""
    low = normalize_text(text).lower()
    hits = []
    for iid, pattern in _interest_patterns():
        if m := pattern.search(low):
            hits.append((m.start(), iid))
    return [iid for _, iid in sorted(hits)]


def canonical_interest(word: str) -> str | None:
    """A canonical id for ``word`` (an id itself or any lexicon keyword), else None."""
    w = word.strip().lower()
    if w in interest_lexicon():
        return w
    found = parse_interests(w)
    return found[0] if found else None


def interest_label(iid: str, lang: str) -> str:
    """The interest in the user's language: the id in English, the lexicon's first word in Chinese ("tea" → "喝茶")."""
    if lang != "zh":
        return iid.replace("_", " ")  # the ids are English nouns ("hiking", "museums")
    words = interest_lexicon().get(iid, {})
    return (words.get("zh") or [iid])[0]
