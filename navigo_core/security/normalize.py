"""Text normalisation before rule matching: defeat the cheap evasions.

:func:`normalize` applies, in order:

1. **NFKC** — full-width forms (``ｉｇｎｏｒｅ``), ligatures, compatibility digits fold
   to their plain forms.
2. **Invisible characters removed** — zero-width space/joiners, directional marks,
   word joiner and invisible operators, BOM, soft hyphen, Mongolian vowel separator,
   combining grapheme joiner, Hangul fillers (:data:`INVISIBLE`).
3. **Homoglyphs folded** — Cyrillic, Greek and a few other letters that look like Latin
   ones are mapped to them (:data:`HOMOGLYPHS`), so ``іgnore`` (Cyrillic і) reads ``ignore``.
   Always applied: the result is only used for matching (Russian or Greek text is not
   a use case of a travel planner, and folding it merely makes it read as Latin).
4. **Case-folded** and **whitespace collapsed** (any run of Unicode spaces → one space);
   spaces *between two CJK characters* are dropped (``忽 略`` → ``忽略``).

The result is for matching only; never show it to the user.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

__all__ = ["HOMOGLYPHS", "INVISIBLE", "ScriptGate", "normalize", "script_needed"]

#: Characters removed outright (all are invisible or formatting-only).
INVISIBLE = (
    "\u00ad"  # soft hyphen
    "\u034f"  # combining grapheme joiner
    "\u061c"  # Arabic letter mark
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers
    "\u180e"  # Mongolian vowel separator
    "\u200b\u200c\u200d\u200e\u200f"  # zero-width space/non-joiner/joiner, LRM, RLM
    "\u202a\u202b\u202c\u202d\u202e"  # bidi embeddings and overrides
    "\u2060\u2061\u2062\u2063\u2064"  # word joiner, invisible operators
    "\u2066\u2067\u2068\u2069"  # bidi isolates
    "\ufe00\ufe01\ufe02\ufe03\ufe04\ufe05\ufe06\ufe07\ufe08\ufe09\ufe0a\ufe0b\ufe0c\ufe0d\ufe0e\ufe0f"  # variation selectors
    "\ufeff"  # BOM / zero-width no-break space
)

#: Look-alike letters → the Latin letter they imitate (lower and upper case).
#: Cyrillic: а е о р с х у і ј ѕ ԁ һ ӏ ԛ ԝ and capitals; Greek: α ο ρ ν ι κ τ χ and capitals.
HOMOGLYPHS: dict[str, str] = {
    # Cyrillic lower case
    "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j", "к": "k", "м": "m",
    "н": "h", "о": "o", "р": "p", "с": "c", "ѕ": "s", "т": "t", "у": "y", "х": "x", "ԁ": "d", "ӏ": "l",
    "ԛ": "q", "ԝ": "w", "ɡ": "g", "ո": "n", "ս": "u",
    # Cyrillic upper case
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "Һ": "H", "І": "I", "Ї": "I", "Ј": "J", "К": "K", "М": "M",
    "Н": "H", "О": "O", "Р": "P", "С": "C", "Ѕ": "S", "Т": "T", "У": "Y", "Х": "X", "Ԁ": "D", "Ӏ": "I",
    "Ԛ": "Q", "Ԝ": "W",
    # Greek lower case
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "γ": "y", "ϲ": "c", "ϳ": "j",
    # Greek upper case
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C",
    # Other look-alikes NFKC leaves alone
    "ı": "i", "ȷ": "j", "ℓ": "l", "ⅼ": "l", "ɑ": "a", "ɩ": "i", "ǀ": "l",
}

_INVISIBLE_TABLE = {ord(c): None for c in INVISIBLE}
_HOMOGLYPH_TABLE = str.maketrans(HOMOGLYPHS)
_SPACES = re.compile(r"\s+")
_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef"
_CJK_GAP = re.compile(rf"(?<=[{_CJK}]) (?=[{_CJK}])")
_SURROGATE = re.compile("[\ud800-\udfff]")


def normalize(text: str) -> str:
    """``text`` folded for rule matching (see the module docstring); ``""`` for None/empty."""
    if not text:
        return ""
    if _SURROGATE.search(text):  # lone surrogates (from JSON escapes) cannot be encoded: pairs joined, the rest U+FFFD
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    out = unicodedata.normalize("NFKC", text)
    out = out.translate(_INVISIBLE_TABLE)
    out = out.translate(_HOMOGLYPH_TABLE)
    out = out.casefold()
    out = _SPACES.sub(" ", out).strip()
    return _CJK_GAP.sub("", out)


# ---- which script a pattern needs: skip it on a text without that script (same matches, less time) ---------
_WIDE_MIN = 0x2E80  # CJK radicals onwards: CJK characters and punctuation, kana, full-width forms
_WIDE = re.compile(f"[{chr(_WIDE_MIN)}-\U0010ffff]")
_LATIN = re.compile("[A-Za-z]")


def _is_wide(code: int) -> bool:
    return code >= _WIDE_MIN


def _is_latin(code: int) -> bool:
    return _LATIN.fullmatch(chr(code)) is not None


def _always_contains(pattern: str, wanted: Callable[[int], bool]) -> bool:
    """True when every match of ``pattern`` contains a character ``wanted`` accepts, from the parse tree of the
    pattern; False whenever that is not certain (case-insensitive patterns, classes with categories or negation,
    optional parts, look-arounds, a parser this Python does not have)."""
    try:
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser as sre  # type: ignore[attr-defined]
        tree = sre.parse(pattern)
    except Exception:  # another Python, or a pattern the parser rejects: no shortcut
        return False
    if tree.state.flags & re.IGNORECASE:
        return False

    def seq(items: Any) -> bool:
        return any(node(op, av) for op, av in items)

    def member(op: Any, av: Any) -> bool:
        if op is c.LITERAL:
            return wanted(av)
        if op is c.RANGE:
            return all(wanted(x) for x in range(av[0], av[1] + 1))
        return False  # NEGATE, CATEGORY, ...

    def node(op: Any, av: Any) -> bool:
        if op is c.LITERAL:
            return wanted(av)
        if op is c.IN:
            return bool(av) and all(member(o, a) for o, a in av)
        if op is c.BRANCH:
            return all(seq(b) for b in av[1])
        if op is c.SUBPATTERN:
            return seq(av[3])
        if op is c.ATOMIC_GROUP:
            return seq(av)
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            return av[0] >= 1 and seq(av[2])
        return False

    return seq(tree)


class ScriptGate:
    """What scripts a text has, for :meth:`search`: a compiled pattern that cannot match without CJK (or without
    Latin letters) is not run on a text that has none. The matches are the same; English texts skip most Chinese
    patterns and the reverse."""

    __slots__ = ("wide", "latin")

    def __init__(self, text: str) -> None:
        self.wide = _WIDE.search(text) is not None
        self.latin = _LATIN.search(text) is not None

    def search(self, pattern: re.Pattern[str], text: str) -> bool:
        need = script_needed(pattern)
        if (need == "wide" and not self.wide) or (need == "latin" and not self.latin):
            return False
        return pattern.search(text) is not None


_NEEDS: dict[tuple[str, int], str | None] = {}


def script_needed(pattern: re.Pattern[str]) -> str | None:
    """``"wide"`` when every match of ``pattern`` contains a CJK / full-width character, ``"latin"`` when every match
    contains an ASCII letter, else None (computed once per pattern)."""
    key = (pattern.pattern, pattern.flags)
    if key not in _NEEDS:
        if pattern.flags & re.IGNORECASE:
            _NEEDS[key] = None
        elif _always_contains(pattern.pattern, _is_wide):
            _NEEDS[key] = "wide"
        elif _always_contains(pattern.pattern, _is_latin):
            _NEEDS[key] = "latin"
        else:
            _NEEDS[key] = None
    return _NEEDS[key]
