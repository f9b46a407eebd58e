"""One message catalog for every user-visible string, in English and Chinese.

The catalog is the set of ``*.yaml`` files in this folder, merged. Each entry is
``key: {en: "...", zh: "..."}``; templates use ``str.format`` fields. A key that
appears in two files is an error at load time, and a test checks that every
key has both languages.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from pathlib import Path

import yaml

LANGS = ("en", "zh")
_DIR = Path(__file__).parent
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@lru_cache(maxsize=1)
def catalog() -> dict[str, dict[str, str]]:
    merged: dict[str, dict[str, str]] = {}
    for path in sorted(_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for key, entry in data.items():
            if key in merged:
                raise ValueError(f"i18n key {key!r} is defined twice (again in {path.name})")
            merged[key] = entry
    return merged


class _SafeDict(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def t(key: str, lang: str = "en", /, **params: object) -> str:
    """The message ``key`` in ``lang``, formatted with ``params``.

    Unknown keys return the key itself, so a missing entry is visible, not fatal.
    """
    entry = catalog().get(key)
    if entry is None:
        return key
    text = entry.get(lang) or entry.get("en") or key
    if not params:
        return text
    return string.Formatter().vformat(text, (), _SafeDict(params))


def detect_lang(text: str, default: str = "en") -> str:
    """``zh`` when the text holds any CJK ideograph, else ``en`` (or ``default`` for empty text)."""
    if not text or not text.strip():
        return default
    return "zh" if _CJK.search(text) else "en"


def fmt_distance(metres: float, lang: str = "en") -> str:
    """``12.3 km`` / ``850 m`` (same units in both languages)."""
    if abs(metres) < 1000:
        return f"{metres:.0f} m"
    return f"{metres / 1000:,.1f} km"


def fmt_duration(seconds: float, lang: str = "en") -> str:
    """``1 h 05 min`` / ``1 小时 05 分钟``; ``45 min`` below an hour."""
    minutes = int(round(abs(seconds) / 60))
    sign = "-" if seconds < 0 else ""
    h, m = divmod(minutes, 60)
    if lang == "zh":
        return f"{sign}{h} 小时 {m:02d} 分钟" if h else f"{sign}{m} 分钟"
    return f"{sign}{h} h {m:02d} min" if h else f"{sign}{m} min"
