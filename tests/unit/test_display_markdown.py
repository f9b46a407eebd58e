"""Issue 15, display: a sentence after a list is its own paragraph, and several clarification questions
are one per line. Checked on the Markdown the app produces, rendered by markdown-it (CommonMark, as
Streamlit's renderer reads lists and lazy continuation lines)."""

from __future__ import annotations

import re
from datetime import date

import pytest
from markdown_it import MarkdownIt

from navigo_core.chat import ChatService
from navigo_core.clarify import ClarifyAgent
from navigo_core.config import Settings
from navigo_core.i18n.markdown import end_lists, question_list
from navigo_core.providers.places import GazetteerPlaceProvider
from navigo_core.scenes import make_gate_context
from navigo_core.store import Store

pytestmark = pytest.mark.usefixtures("no_internet")

TODAY = date(2026, 3, 10)
P = GazetteerPlaceProvider()
MD = MarkdownIt("commonmark")


def last_item_and_after(markdown: str) -> tuple[str, str]:
    """The last list item's HTML and everything the renderer puts after its list."""
    html = MD.render(markdown)
    before, _, after = html.rpartition("</ul>")
    return before.rpartition("<li>")[2], after


def chat(**settings: object) -> tuple[ChatService, str]:
    s = Settings(llm_api_key="", **settings)  # type: ignore[arg-type]
    service = ChatService(Store.from_url("sqlite:///:memory:"), s, gate_context=make_gate_context(s), places=P,
                          today=TODAY)
    return service, service.new_thread("me")


def test_end_lists_puts_a_blank_line_between_a_list_and_the_sentence_after_it() -> None:
    assert end_lists("I can:\n- a\n- b\nTry one.") == "I can:\n- a\n- b\n\nTry one."
    assert end_lists("Two:\n1. a\n2. b\nThen this.") == "Two:\n1. a\n2. b\n\nThen this."
    for unchanged in ("I can:\n- a\n- b\n\nTry one.",     # already a paragraph
                      "- a\n  continued\n- b",             # an item's own (indented) continuation
                      "Plain line\nanother line",          # no list
                      "\\- not a list\nnext",              # escaped user text is no list
                      "```\n- in code\nstill code\n```"):  # fenced code as written
        assert end_lists(unchanged) == unchanged
    once = end_lists("x\n- a\ny\n- b\nz")
    assert once == "x\n- a\n\ny\n- b\n\nz" and end_lists(once) == once


@pytest.mark.parametrize("message, sentence", [
    ("asdf qwer", "Try one of the examples."),  # the help reply: capabilities, then a sentence
    ("不知道", "可以试试上面的例子。"),
    ("what is the hotel cap", "Rule HOTEL-1"),  # the policy table, then the rule it cites
    ("住宿标准是多少", "依据规则 HOTEL-1"),
])
def test_a_chat_reply_sentence_after_bullets_is_its_own_paragraph(message: str, sentence: str) -> None:
    service, tid = chat(employee_grade="G3")
    reply = service.send(tid, message)
    assert re.search(r"(?m)^- ", reply.text), reply.text  # the reply has its list …
    item, after = last_item_and_after(reply.text)
    assert sentence not in item, item  # … and the sentence is not glued into the last bullet …
    assert f"<p>{sentence}" in after, after  # … but a paragraph of its own
    assert f"\n\n{sentence}" in service.history(tid)[-1]["content"]  # stored as shown


def test_question_list_is_one_line_per_question() -> None:
    assert question_list(["Where?"]) == "❓ Where?"
    assert question_list(["Where?", "When?"]) == "1. ❓ Where?\n2. ❓ When?"


@pytest.mark.parametrize("opener, lang", [("plan a trip for me", "en"), ("我想去杭州玩", "zh")])
def test_several_clarification_questions_are_a_numbered_list(opener: str, lang: str) -> None:
    agent = ClarifyAgent(Settings(), places=P, today=TODAY)
    state = agent.start("t", opener)
    turn, state = agent.turn(state, opener)
    assert turn.status == "asking" and state.lang == lang
    lines = turn.content.split("\n")
    questions = [ln for ln in lines if "❓" in ln]
    assert len(questions) == 2, turn.content  # two questions, each on its own line
    assert [q[:5] for q in questions] == ["1. ❓ ", "2. ❓ "]
    assert "❓" not in lines[0]  # the lead ("A few quick questions first") is a line of its own
    html = MD.render(turn.content)
    assert html.count("<li>") == 2 and "<ol>" in html, html


def test_a_model_reply_without_a_question_gets_the_questions_on_their_own_lines(fake_openai, fake_llm) -> None:  # type: ignore[no-untyped-def]
    fake_openai.enqueue_stream(["Hangzhou is a lovely choice for a spring trip."])
    agent = ClarifyAgent(Settings(), llm=fake_llm, places=P, today=TODAY)
    text = "plan a trip to Hangzhou"
    stream = agent.stream_turn(agent.start("t", text), text)
    list(stream)
    content = stream.turn.content
    assert content.startswith("Hangzhou is a lovely choice for a spring trip.\n\n"), content
    assert all(re.match(r"(?:\d\. )?❓ ", ln) for ln in content.split("\n\n", 1)[1].split("\n")), content


def test_every_catalog_message_renders_its_bold_text_without_literal_asterisks() -> None:
    """``**行程：**上海`` stays literal in CommonMark (a closing ``**`` after punctuation needs a space or
    punctuation after it): the page showed "**行程：**上海，中国 → 杭州"."""
    from navigo_core.i18n import catalog

    literal = []
    for key, texts in catalog().items():
        for lang, text in texts.items():
            sample = re.sub(r"\{\w+\}", "上海" if lang == "zh" else "Shanghai", text)
            if "**" in sample and "**" in MD.render(sample):
                literal.append((key, lang, text))
    assert literal == []
