"""The one escaping helper: user text rendered through Streamlit's Markdown shows as typed.

Streamlit renders Markdown in ``st.markdown``, ``st.caption``, ``st.error``/``warning``/``info``/
``success``, titles, expanders and widget labels (labels render images too). A justification
``![b](http://127.0.0.1:9999/x)`` must not make the browser fetch anything, so:

* :func:`escape_markdown` — for user text (a message, a justification, a city typed in a CSV, a
  thread title): every character Markdown or Streamlit gives a meaning (``\\ ` * _ [ ] < > $ ~ | # !``
  and list or quote markers at a line start) is backslash-escaped, so it renders literally
  (CommonMark lets any ASCII punctuation be escaped; :func:`unescape_markdown` is its inverse).
* :func:`safe_markdown` — for Markdown the app wrote that carries user values inside (a chat
  reply, an application card, an error message): the app's emphasis and lists stay, but no image,
  link or autolink can form (the app itself writes none).
* :func:`error_text` — an error's message with its parameters (the user's values) escaped.
"""

from __future__ import annotations

import re
from typing import Any

from navigo_core.errors import NavigoError, clip
from navigo_core.i18n import t
from navigo_core.redact import redact

__all__ = ["error_text", "escape_markdown", "safe_markdown", "unescape_markdown"]

_SPECIAL = re.compile(r"([\\`*_\[\]<>$~|#!])")
_LINE_START = re.compile(r"(?m)^([ \t]{0,3})([-+=]|\d{1,9}(?=[.)]))")
_UNESCAPE = re.compile(r"\\([\\`*_\[\]<>$~|#!\-+=.)])")


def escape_markdown(text: Any) -> str:
    """``text`` as it must be written in Markdown to render literally (see the module docstring)."""
    s = _SPECIAL.sub(r"\\\1", "" if text is None else str(text))
    # "- x", "+ x", "1. x", "1) x", "===" at a line start would become a list or a heading
    return _LINE_START.sub(_mark, s)


def _mark(m: re.Match[str]) -> str:
    lead, mark = m.group(1), m.group(2)
    return lead + (mark + "\\" if mark[0].isdigit() else "\\" + mark)


def unescape_markdown(text: str) -> str:
    """The inverse of :func:`escape_markdown` (what a CommonMark renderer shows)."""
    out = re.sub(r"(?m)^([ \t]{0,3})(\d{1,9})\\([.)])", r"\1\2\3", text)
    return _UNESCAPE.sub(r"\1", out)


_IMAGE = re.compile(r"!(?=\[)")
_LINK_TARGET = re.compile(r"\]\s*(?=[(\[])")
_REF_DEF = re.compile(r"(?m)^([ \t]{0,3})\[(?=[^\]\n]*\]:)")
_AUTOLINK = re.compile(r"<(?=[A-Za-z][A-Za-z0-9+.\-]{1,31}:|[^<>\s@]+@)")
_HTML = re.compile(r"(?<!\\)<(?=/?[A-Za-z!?])")


def safe_markdown(text: Any) -> str:
    """Markdown the app wrote, with any image, link, reference definition, autolink or HTML tag that a
    user value could bring neutralised; bold, italics, lists and code stay."""
    s = "" if text is None else str(text)
    s = _IMAGE.sub(r"!\\", s)              # "![" → "!\[": never an image
    s = _LINK_TARGET.sub(lambda m: m.group(0) + "\\", s)  # "](" / "][" → "]\(": never a link target
    s = _REF_DEF.sub(r"\1\\[", s)          # "[r]: http://…" → literal
    s = _AUTOLINK.sub(r"\\<", s)           # "<http://…>" → literal
    return _HTML.sub(r"\\<", s)            # "<img …>" → literal (Streamlit escapes HTML anyway)


def error_text(exc: NavigoError, lang: str) -> str:
    """The message of ``exc`` in ``lang`` for Markdown: the catalog text stays, its parameters (the
    user's values, each cut to 200 characters) are escaped. An error with its own ``message`` is
    made safe as a whole. Credentials are masked (as :meth:`NavigoError.message` does) before the escaping,
    which would otherwise split a key with ``_`` or ``*`` in it so that no mask finds it."""
    if type(exc).message is NavigoError.message:
        params = {k: escape_markdown(clip(redact(v))) if isinstance(v, str) else v for k, v in exc.params.items()}
        return safe_markdown(redact(t(exc.code, lang, **params)))
    return safe_markdown(exc.message(lang))
