"""LLM-mode clarification against a scripted model that misbehaves as small real models do.

Each case of issue 16's "Why" list: an empty or bold marker, narration without a question, an
English reply in a Chinese thread, a summary that drops or invents facts, a failed repair, a summary
JSON without the marker, a dialogue the facts end, a runaway stream, and the CLI keeping the user's
line after an error. ``Turn.checks`` records every check that replaced model text.
"""

from __future__ import annotations

import io
import json
from datetime import date

import pytest

from navigo_core import cli
from navigo_core.clarify import ClarifyAgent, Summary
from navigo_core.clarify.checks import facts_of, summary_problems
from navigo_core.config import Settings
from navigo_core.planner.request import parse_request
from navigo_core.providers.places import GazetteerPlaceProvider
from navigo_core.understand.checks import has_question, language_ok, missing_facts, new_names, new_places
from tests.fakes.openai import FakeOpenAI

pytestmark = pytest.mark.usefixtures("no_internet")

TODAY = date(2026, 3, 10)
P = GazetteerPlaceProvider()
ZH_FULL = "从上海去杭州，5月1日到5日，2个大人，预算6000元"
EN_FULL = "From Shanghai to Hangzhou, May 1 to May 5, 2 adults, budget 6000 CNY"


def agent(llm, **settings) -> ClarifyAgent:
    return ClarifyAgent(Settings(**settings), llm=llm, places=P, today=TODAY)


def one_turn(a: ClarifyAgent, text: str, lang: str | None = None):
    stream = a.stream_turn(a.start("t", text, lang=lang), text)
    deltas = list(stream)
    return stream.turn, stream.state, "".join(deltas)


def summary_json(**kw) -> str:
    return json.dumps({"objective": "", "constraints": [], "assumptions": [], **kw}, ensure_ascii=False)


# --- the marker ----------------------------------------------------------------------------

def test_an_empty_marker_is_never_repaired_and_the_facts_decide(fake_openai: FakeOpenAI, fake_llm) -> None:
    fake_openai.enqueue_stream(["Sounds good. ", "[INTENT_READY]"])
    turn, state, shown = one_turn(agent(fake_llm), "plan a trip to Hangzhou")
    assert len(fake_openai.chat_requests) == 1  # no repair turn quoting an empty block
    assert turn.status == "asking" and "❓" in turn.content and "INTENT" not in shown
    assert "summary:empty_block" in turn.checks
    fake_openai.enqueue_stream(["All set. [INTENT_READY]"])
    turn, state, _ = one_turn(agent(fake_llm), EN_FULL)
    assert turn.status == "done" and turn.summary.objective == "Plan a trip from Shanghai to Hangzhou"
    assert "summary:deterministic" in turn.checks and len(fake_openai.chat_requests) == 2


def test_a_bold_marker_parses_and_leaves_no_stars(fake_openai: FakeOpenAI, fake_llm) -> None:
    block = summary_json(objective="Plan a trip to Hangzhou", constraints=["budget 6000 CNY"])
    fake_openai.enqueue_stream(["Thanks, that is all I need. ", "**[INTENT", "_READY]**\n", block])
    turn, _, shown = one_turn(agent(fake_llm), "Plan a trip to Hangzhou, budget 6000 CNY")
    assert turn.status == "done" and turn.summary.objective == "Plan a trip to Hangzhou"
    assert "*" not in turn.content and "*" not in shown and "{" not in shown
    assert turn.checks == ["summary:model"]


def test_a_summary_json_without_the_marker_is_not_shown_raw(fake_openai: FakeOpenAI, fake_llm) -> None:
    block = summary_json(objective="Plan a trip to Hangzhou", constraints=["budget 6000 CNY"])
    fake_openai.enqueue_stream(["Here is the task:\n```json\n", block, "\n```"])
    turn, _, shown = one_turn(agent(fake_llm), "Plan a trip to Hangzhou, budget 6000 CNY")
    assert turn.status == "done" and turn.summary.constraints == ["budget 6000 CNY"]
    assert "{" not in turn.content and "{" not in shown and "objective" not in shown


def test_a_failed_repair_in_a_middle_round_still_asks(fake_openai: FakeOpenAI, fake_llm) -> None:
    fake_openai.enqueue_stream(["[INTENT_READY] {\"objective\": oops"])
    fake_openai.enqueue("still not json")
    fake_openai.enqueue("nope")
    turn, _, _ = one_turn(agent(fake_llm), "plan a trip to Hangzhou")
    assert turn.status == "asking" and turn.content.strip() and "❓" in turn.content
    assert "summary:repair_failed" in turn.checks and "reply:offline" in turn.checks


def test_a_repair_is_validated_like_the_first_answer(fake_openai: FakeOpenAI, fake_llm) -> None:
    fake_openai.enqueue_stream(["Done. [INTENT_READY] {\"objective\": oops"])
    fake_openai.enqueue_json({"objective": "Error: invalid JSON: Expecting value", "constraints": [],
                              "assumptions": []})  # the model echoes the error
    turn, _, _ = one_turn(agent(fake_llm), EN_FULL)
    assert turn.status == "done" and "JSON" not in turn.summary.objective
    assert turn.summary.objective == "Plan a trip from Shanghai to Hangzhou"
    assert "summary:repaired" in turn.checks and "summary:error_echo" in turn.checks


# --- the reply ------------------------------------------------------------------------------

def test_narration_without_a_question_is_replaced(fake_openai: FakeOpenAI, fake_llm) -> None:
    fake_openai.enqueue_stream(["The user wants ", "to travel to Hangzhou ", "and has not said when."])
    turn, _, shown = one_turn(agent(fake_llm), "plan a trip to Hangzhou")
    assert turn.status == "asking" and "❓" in turn.content and has_question(turn.content)
    assert "The user" not in turn.content and "The user" not in shown  # held back, never shown
    assert "reply:narration" in turn.checks


def test_an_english_reply_in_a_chinese_thread_is_replaced(fake_openai: FakeOpenAI, fake_llm) -> None:
    fake_openai.enqueue_stream(["When would you ", "like to travel, and ", "what is your budget?"])
    turn, state, shown = one_turn(agent(fake_llm), "我想去杭州玩")
    assert state.lang == "zh" and turn.status == "asking"
    assert language_ok(turn.content, "zh") and "When" not in turn.content and "When" not in shown
    assert "reply:language" in turn.checks and "？" in turn.content


def test_a_reply_without_a_question_gets_the_offline_question(fake_openai: FakeOpenAI, fake_llm) -> None:
    fake_openai.enqueue_stream(["Hangzhou is a lovely choice for a spring trip."])
    turn, _, _ = one_turn(agent(fake_llm), "plan a trip to Hangzhou")
    assert turn.status == "asking" and turn.content.startswith("Hangzhou is a lovely choice")
    assert "❓" in turn.content and "reply:no_question" in turn.checks and turn.quick_replies


def test_a_good_question_is_kept_as_is(fake_openai: FakeOpenAI, fake_llm) -> None:
    fake_openai.enqueue_stream(["您打算哪天出发，", "一共几位出行？"])
    turn, _, shown = one_turn(agent(fake_llm), "我想去杭州玩")
    assert turn.content == "您打算哪天出发，一共几位出行？" == shown and turn.checks == []


# --- the summary ----------------------------------------------------------------------------

@pytest.mark.parametrize("bad,problem", [
    (summary_json(objective="规划从上海到杭州的行程", constraints=["日期：2026-05-01 至 2026-05-05", "成人：2 位",
                                                            "总预算：5000 CNY"]), "missing:number:6000"),
    (summary_json(objective="规划从上海到杭州的行程", constraints=["成人：2 位", "总预算：6000 CNY"]),
     "missing:date:2026-05-01"),
    (summary_json(objective="规划从上海到杭州和北京的行程", constraints=["日期：2026-05-01 至 2026-05-05", "成人：2 位",
                                                              "总预算：6000 CNY"]), "new_place:北京"),
    (summary_json(objective="Plan a trip from Shanghai to Hangzhou", constraints=["May 1 to May 5", "2 adults",
                                                                               "budget 6000 CNY"]), "language"),
])
def test_an_altered_summary_gives_way_to_the_deterministic_one(fake_openai: FakeOpenAI, fake_llm, bad, problem) -> None:
    fake_openai.enqueue_stream(["好的，信息已经足够。[INTENT_READY]\n", bad])
    turn, _, shown = one_turn(agent(fake_llm), ZH_FULL)
    assert turn.status == "done" and f"summary:{problem}" in turn.checks
    assert turn.summary.objective == "规划从上海到杭州的行程"
    joined = " ".join(turn.summary.constraints)
    assert "2026-05-01" in joined and "6,000 CNY" in joined and "北京" not in joined
    assert "summary:deterministic" in turn.checks


def test_a_faithful_model_summary_is_used(fake_openai: FakeOpenAI, fake_llm) -> None:
    good = summary_json(objective="上海到杭州的五日游", constraints=["5月1日至5日", "两位成人", "预算六千元"])
    fake_openai.enqueue_stream(["好的，信息已经足够。[INTENT_READY]\n", good])
    turn, _, _ = one_turn(agent(fake_llm), ZH_FULL)
    assert turn.status == "done" and turn.summary.objective == "上海到杭州的五日游" and turn.checks == ["summary:model"]


def test_the_facts_end_the_dialogue_without_the_marker(fake_openai: FakeOpenAI, fake_llm) -> None:
    fake_openai.enqueue_stream(["Great! Do you have any favourite foods?"])  # the model goes on asking
    turn, state, _ = one_turn(agent(fake_llm), EN_FULL)
    assert turn.status == "done" and state.status == "done" and "?" not in turn.content
    assert turn.summary.objective == "Plan a trip from Shanghai to Hangzhou"
    assert "summary:deterministic" in turn.checks
    last = fake_openai.chat_requests[-1]["messages"][-1]
    assert last["role"] == "system" and "do not ask" in last["content"]


def test_the_last_round_does_not_mix_languages(fake_openai: FakeOpenAI, fake_llm) -> None:
    a = ClarifyAgent(Settings(clarify_max_rounds=1), llm=fake_llm, places=P, today=TODAY)
    fake_openai.enqueue_stream(["OK, I will plan a trip to Hangzhou for you."])
    turn, _, _ = one_turn(a, "我想去杭州玩")
    assert turn.status == "done" and language_ok(turn.content, "zh") and "OK" not in turn.content


# --- bounds ---------------------------------------------------------------------------------

def test_a_runaway_clarification_stream_is_cut(fake_openai: FakeOpenAI, fake_llm_settings) -> None:
    from navigo_core.llm import LLMClient

    with LLMClient(fake_llm_settings(llm_max_tokens_stream=40)) as llm:
        fake_openai.enqueue_stream(["Where would you like to go? ", "And "], forever=True)
        turn, state, _ = one_turn(agent(llm), "plan a trip for me")
    assert turn.status == "error" and turn.error and any(c.startswith("llm_failed:token cap") for c in turn.checks)
    assert state.rounds == 0  # unchanged: retry, or continue offline


def test_the_cli_answers_the_line_after_an_error_offline(fake_openai: FakeOpenAI, fake_llm_settings,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    settings = fake_llm_settings(llm_timeout_s=0.3)
    for name in ("llm_base_url", "llm_api_key", "llm_timeout_s", "llm_max_retries"):
        monkeypatch.setenv(name.upper(), str(getattr(settings, name)))
    monkeypatch.setenv("PLACES_PROVIDER", "gazetteer")
    monkeypatch.setattr(ClarifyAgent, "today", property(lambda self: TODAY))
    fake_openai.set_fault(status=500)
    monkeypatch.setattr("sys.stdin", io.StringIO("plan a trip to Hangzhou\n2026-05-01 to 2026-05-05\n"))
    assert cli.main(["clarify"]) == 0
    frames = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [f["status"] for f in frames[:2]] == ["error", "asking"]
    assert "Hangzhou" in frames[1]["content"]  # the line that failed was answered, not dropped
    assert len(frames) == 3 and "2026-05-01" in frames[2]["content"]  # and the dialogue went on offline


# --- the checks on their own ----------------------------------------------------------------

def test_understand_checks() -> None:
    req = parse_request(ZH_FULL, today=TODAY, places=P)
    assert summary_problems(Summary(objective="上海到杭州", constraints=["5月1日-5日", "2人", "6千元"]), req, "zh",
                            [ZH_FULL]) == []
    assert missing_facts("5-day trip to Hangzhou, estimated total 5,400 CNY", facts_of(req)) == [
        "place:上海", "date:2026-05-01", "date:2026-05-05", "number:2", "number:6000"]
    assert new_places("Visit Hangzhou, then Beijing", ["Hangzhou"]) == ["Beijing"]
    assert new_names("Enjoy the Great Wall in Hangzhou and the Kinkakuji River.", ["Hangzhou"]) == [
        "Great Wall", "Kinkakuji River"]
    assert new_names("杭州5日游，可以去长城和金阁寺，爬山喝茶。", ["杭州"]) == ["长城", "金阁寺"]
    assert new_names("Your trip to Hangzhou runs from May 1 to May 5.", ["Hangzhou"]) == []
