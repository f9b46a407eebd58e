"""The one escaping helper (ui/markdown.py): user text renders as typed, the app's Markdown stays."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from navigo_core.errors import InputError, PlaceResolutionError
from ui.markdown import error_text, escape_markdown, safe_markdown, unescape_markdown

EVIL = "![b](http://127.0.0.1:9999/x)"
# an image or a link forms when "[…](" appears with neither bracket escaped
FORMS = re.compile(r"(?<!\\)\[[^\]\n]*(?<!\\)\]\s*\(")
MARKDOWNISH = st.lists(st.sampled_from(list("![]()<>*_`#-+=.|~$:\\ \nab1") + ["http://x", "![", "]("]),
                       max_size=30).map("".join)


def unescaped_specials(s: str) -> list[int]:
    """Positions of Markdown punctuation not preceded by an escaping backslash."""
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\":
            i += 2
            continue
        if s[i] in "`*_[]<>$~|#!":
            out.append(i)
        i += 1
    return out


def test_the_issue_example_cannot_form_an_image() -> None:
    assert escape_markdown(EVIL) == r"\!\[b\](http://127.0.0.1:9999/x)"
    assert not FORMS.search(escape_markdown(EVIL)) and not FORMS.search(safe_markdown(EVIL))
    assert FORMS.search(EVIL)  # the checker itself sees the raw one


@settings(max_examples=300, deadline=None)
@given(st.one_of(MARKDOWNISH, st.text(max_size=60)))
def test_escaped_text_renders_literally(text: str) -> None:
    escaped = escape_markdown(text)
    assert unescape_markdown(escaped) == text  # CommonMark shows exactly what was typed
    assert unescaped_specials(escaped) == []
    assert not FORMS.search(escaped)
    assert not re.search(r"(?m)^[ \t]{0,3}(?:[-+=]|\d{1,9}[.)])", escaped)  # no list, heading or numbered item


@settings(max_examples=300, deadline=None)
@given(MARKDOWNISH)
def test_safe_markdown_never_lets_an_image_or_a_link_form(text: str) -> None:
    out = safe_markdown(f"**Card**\n- why: {text}")
    assert not FORMS.search(out)
    assert not re.search(r"(?<!\\)<(?:[A-Za-z][A-Za-z0-9+.\-]*:|/?[A-Za-z])", out)  # no autolink, no tag
    assert out.startswith("**Card**\n- why: ")  # the app's own Markdown stays


def test_app_markdown_is_kept() -> None:
    app = "**Travel application TA-2026-0001** (submitted)\n- Traveller: me\n- _note_ `HOTEL-1`"
    assert safe_markdown(app) == app


def test_error_text_escapes_the_users_values_only() -> None:
    exc = PlaceResolutionError("place.unknown", query=EVIL)
    out = error_text(exc, "en")
    assert not FORMS.search(out) and "127.0.0.1:9999/x" in out
    assert error_text(InputError("route.no_stops"), "zh") == InputError("route.no_stops").message("zh")
    long = error_text(PlaceResolutionError("place.unknown", query="x" * 100_000), "en")
    assert len(long) < 600
