"""What a message says about an application: its number (``TA-2026-0001``) and the trip's purpose."""

from __future__ import annotations

import re
import unicodedata

NUMBER_RE = re.compile(r"(?<![A-Za-z0-9])TA-?\s?(\d{4})-?(\d{4})(?!\d)", re.IGNORECASE)


def extract_number(text: str) -> str | None:
    """``TA-2026-0001`` named in ``text`` (``ta 2026 0001``-ish spellings too), else None."""
    m = NUMBER_RE.search(unicodedata.normalize("NFKC", text or ""))
    return f"TA-{m.group(1)}-{m.group(2)}" if m else None


_PURPOSE = (
    re.compile(r"(?:\b(?:for|purpose(?: is)?:?|to)\s+|(?:^|[,;])\s*)(?P<p>(?:a |an |the )?(?:client|customer|meeting|conference|"
               r"training|visit|audit|sales|project|workshop|trade show|expo|interview)[^,.;]*)", re.IGNORECASE),
    re.compile(r"(?:目的是|事由[是:：]?|为了|(?:^|[，,。；;]))\s*(?P<p>[^，,。；;]{0,60}?(?:拜访|会议|开会|培训|考察|审计|谈判|展会|项目|面试|调研|客户)[^，,。；;]{0,60})"),
)


def extract_purpose(text: str) -> str:
    """The trip purpose named in ``text`` ("for a client meeting" / "拜访客户"), else ""."""
    norm = unicodedata.normalize("NFKC", text or "")
    for rx in _PURPOSE:
        m = rx.search(norm)
        if m:
            return m.group("p").strip(" ，,。")[:200]
    return ""
