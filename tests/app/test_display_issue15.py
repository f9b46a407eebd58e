"""Issue 15, display, on the Chat page (AppTest): what the page hands to st.markdown keeps several
clarification questions one per line and a sentence after a list out of its last bullet."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from markdown_it import MarkdownIt

from tests.app.test_chat_page import assistant_texts, chat, say

MD = MarkdownIt("commonmark")


@pytest.fixture
def chat_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'chat.db'}")
    for var in ("LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    yield tmp_path
    st.cache_resource.clear()


@pytest.mark.parametrize("opener, first, second", [
    ("plan a trip for me", "Where would you like to go", "When would you like to travel"),
    ("帮我规划一次旅行", "您想去哪里", "什么时候出发"),
])
def test_clarification_questions_are_one_per_line_on_the_chat_page(chat_env: Path, opener: str, first: str,
                                                                   second: str) -> None:
    at = say(chat(), opener)
    html = MD.render(assistant_texts(at)[-1])  # the Markdown exactly as the page renders it
    items = html.split("<ol>", 1)[-1].split("</ol>", 1)[0].split("<li>")[1:]
    assert len(items) == 2, html  # a numbered list: one question per item, one per line
    assert first in items[0] and second in items[1], html
    assert second not in items[0], html


def test_the_sentence_after_the_help_list_is_its_own_paragraph_on_the_chat_page(chat_env: Path) -> None:
    at = say(chat(), "asdf qwer")
    html = MD.render(assistant_texts(at)[-1])
    last_item = html.rpartition("</ul>")[0].rpartition("<li>")[2]
    assert "Try one of the examples." not in last_item, html
    assert "<p>Try one of the examples.</p>" in html.rpartition("</ul>")[2], html
