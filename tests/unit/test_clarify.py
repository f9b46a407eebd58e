"""The clarification agent: offline slot filling, limits, LLM mode against the fake OpenAI server, CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from navigo_core.clarify import ClarifyAgent, Summary, is_stop, parse_reply, request_text
from navigo_core.config import Settings
from navigo_core.planner.request import missing_fields, parse_request
from navigo_core.providers.places import GazetteerPlaceProvider

pytestmark = pytest.mark.usefixtures("no_internet")

TODAY = date(2026, 3, 10)
P = GazetteerPlaceProvider()
ROOT = Path(__file__).resolve().parents[2]
SUMMARY = {"objective": "Plan a trip to Hangzhou", "constraints": ["budget 6000 CNY"], "assumptions": ["1 adult"]}


def agent(llm=None, **settings) -> ClarifyAgent:
    return ClarifyAgent(Settings(**settings), llm=llm, places=P, today=TODAY)


def run(a: ClarifyAgent, lines: list[str]):
    state = a.start("t1", lines[0])
    turns = []
    for line in lines:
        turn, state = a.turn(state, line)
        turns.append(turn)
        if turn.status == "done":
            break
    return turns, state


# --- offline ------------------------------------------------------------------------------

@pytest.mark.parametrize("lines,objective,facts", [
    (["帮我规划一次出差", "从上海到杭州", "下周五出发玩3天", "2个人", "6000元"], "规划从上海到杭州的行程",
     ["2026-03-20", "2026-03-22", "6,000 CNY", "2"]),
    (["plan a trip for me", "Hangzhou, from Shanghai", "next Friday for 3 days", "2 adults", "$3,000"],
     "Plan a trip from Shanghai to Hangzhou", ["2026-03-20", "2026-03-22", "3,000 USD", "Adults: 2"]),
])
def test_offline_vague_opener_reaches_done(lines, objective, facts) -> None:
    turns, state = run(agent(), lines)
    assert turns[-1].status == "done" and len(turns) <= 5
    assert all(t.status == "asking" and t.quick_replies and "❓" in t.content for t in turns[:-1])
    summary = turns[-1].summary
    assert summary.objective == objective
    joined = " ".join(summary.constraints)
    assert all(f in joined for f in facts)
    assert state.status == "done" and state.rounds == len(turns)
    req = parse_request(request_text(state.slots, state.lang), today=TODAY, places=P)
    assert missing_fields(req) == [] and req.destination_text and req.adults == 2


def test_offline_asks_in_the_users_language_with_quick_replies() -> None:
    a = agent()
    turn, state = a.turn(a.start("t", "帮我规划一次出差"), "帮我规划一次出差")
    assert turn.status == "asking" and "哪里" in turn.content and "这个周末" in turn.quick_replies
    turn, _ = a.turn(state, "去杭州，下周五出发玩3天")
    assert "2个大人" in turn.quick_replies and "6000元" in turn.quick_replies


def test_max_rounds_stop_lists_assumptions() -> None:
    a = agent(clarify_max_rounds=2)
    turns, state = run(a, ["plan a trip for me", "I don't know yet", "still thinking", "hmm"])
    assert [t.status for t in turns] == ["asking", "done"]
    assert state.rounds == 2
    assumptions = turns[-1].summary.assumptions
    assert "Dates are open (to be decided)" in assumptions and "1 adult" in assumptions


@pytest.mark.parametrize("stop", ["可以了", "that's enough", "just start", "go ahead", "直接开始", "就这样", "Enough!"])
def test_stop_phrases_end_with_assumptions(stop) -> None:
    assert is_stop(stop)
    turns, _ = run(agent(), ["去杭州玩3天", stop])
    assert turns[-1].status == "done" and len(turns) == 2
    assert turns[-1].summary.assumptions


def test_not_a_stop_phrase() -> None:
    assert not is_stop("not enough money for a flight") and not is_stop("go ahead and book Paris")


# --- parsing --------------------------------------------------------------------------------

JS = json.dumps(SUMMARY, ensure_ascii=False)


@pytest.mark.parametrize("reply", [
    f"Great, here is the task. [INTENT_READY]\n```json\n{JS}\n```",
    f"Great, here is the task. [INTENT_READY] {JS}",
    f"Great, here is the task.\n[INTENT_READY]\n```json\n{JS}\n```\nTell me if anything is wrong.",
    f"Great, here is the task.\n\n[INTENT_READY]\n{json.dumps(dict(reversed(list(SUMMARY.items()))))}",
])
def test_parse_reply_variants(reply) -> None:
    parsed = parse_reply(reply)
    assert parsed.ready and parsed.summary == Summary(**SUMMARY)
    assert parsed.content.startswith("Great, here is the task.")
    assert "INTENT_READY" not in parsed.content and "{" not in parsed.content and "```" not in parsed.content


def test_parse_reply_trailing_text_kept_and_invalid_json() -> None:
    assert parse_reply(f"A [INTENT_READY] {JS} B").content == "A\n\nB"
    bad = parse_reply('Done [INTENT_READY] {"objective": "x", constraints: [}')
    assert bad.ready and bad.summary is None and bad.error and bad.content == "Done"
    assert parse_reply("Where to?").ready is False


# --- LLM mode -------------------------------------------------------------------------------

def test_llm_streams_deltas_in_order_and_asks(fake_openai, fake_llm) -> None:
    fake_openai.enqueue_stream(["Where ", "would you ", "like to go? ", "What is your budget?"])
    a = agent(fake_llm)
    state = a.start("t", "plan a trip for me")
    assert state.mode == "llm"
    stream = a.stream_turn(state, "plan a trip for me")
    deltas = list(stream)
    # the first words are held back until their language is checked, then the deltas flow as they come
    assert deltas == ["Where would you like to go? ", "What is your budget?"]
    assert stream.turn.status == "asking" and "$3,000" in stream.turn.quick_replies
    assert stream.state.rounds == 1 and len(stream.state.history) == 2
    body = fake_openai.chat_requests[0]
    assert body["stream"] is True and body["messages"][0]["role"] == "system"
    assert "[INTENT_READY]" in body["messages"][0]["content"]


@pytest.mark.parametrize("chunks", [
    ["Thanks! ", "Summary below.", "\n[INTENT", "_READY]\n```json\n", JS, "\n```"],
    ["Thanks! Summary below. [INTENT_READY] ", JS],
    ["Thanks! Summary below.\n[INTENT_READY]\n", JS, "\nAnything to fix?"],
])
def test_llm_intent_ready_variants_done(fake_openai, fake_llm, chunks) -> None:
    fake_openai.enqueue_stream(chunks)
    a = agent(fake_llm)
    stream = a.stream_turn(a.start("t", "x"), "Plan a trip to Hangzhou, budget 6000 CNY")
    text = "".join(stream)
    assert "INTENT" not in text and "{" not in text
    assert stream.turn.status == "done" and stream.turn.summary == Summary(**SUMMARY)
    assert text.startswith("Thanks! Summary below.")
    assert stream.state.status == "done"


def test_llm_invalid_json_is_repaired(fake_openai, fake_llm) -> None:
    fake_openai.enqueue_stream(["OK. [INTENT_READY] ", '{"objective": "Trip to Hangzhou", constraints: ["x"]}'])
    fake_openai.enqueue_json(SUMMARY)
    a = agent(fake_llm)
    stream = a.stream_turn(a.start("t", "x"), "trip to Hangzhou")
    list(stream)
    assert stream.turn.status == "done" and stream.turn.summary.objective == "Plan a trip to Hangzhou"
    assert len(fake_openai.chat_requests) == 2
    repair = json.dumps(fake_openai.chat_requests[1]["messages"], ensure_ascii=False)
    assert "not valid" in repair and 'constraints: [\\"x\\"]' in repair


def test_llm_repair_failure_stays_asking(fake_openai, fake_llm) -> None:
    fake_openai.enqueue_stream(["OK. [INTENT_READY] {bad json"])
    fake_openai.enqueue("still not json")
    fake_openai.enqueue("nope")
    a = agent(fake_llm)
    stream = a.stream_turn(a.start("t", "x"), "trip to Hangzhou")
    list(stream)
    assert stream.turn.status == "asking" and stream.turn.summary is None
    assert stream.state.status == "asking"


def test_llm_timeout_is_an_error_then_retry_succeeds(fake_openai, fake_llm_settings) -> None:
    from navigo_core.llm import LLMClient

    with LLMClient(fake_llm_settings(llm_timeout_s=0.3)) as llm:
        a = agent(llm)
        state = a.start("t", "plan a trip for me")
        fake_openai.set_fault(hang=True, times=1)
        stream = a.stream_turn(state, "plan a trip for me")
        assert list(stream) == []
        assert stream.turn.status == "error" and stream.turn.error
        assert stream.state == state  # unchanged
        fake_openai.reset()
        fake_openai.enqueue_stream(["Where to?"])
        turn, new = a.turn(state, "plan a trip for me")
        assert turn.status == "asking" and turn.content == "Where to?" and new.rounds == 1


def test_llm_round_limit_forces_done(fake_openai, fake_llm) -> None:
    a = ClarifyAgent(Settings(clarify_max_rounds=2), llm=fake_llm, places=P, today=TODAY)
    fake_openai.enqueue_stream(["Where to?"])
    fake_openai.enqueue_stream(["And your budget?"])
    turns, state = run(a, ["plan a trip for me", "Hangzhou"])
    assert [t.status for t in turns] == ["asking", "done"]
    assert turns[-1].summary.objective == "Plan a trip to Hangzhou" and turns[-1].summary.assumptions
    last = fake_openai.chat_requests[-1]["messages"]
    assert last[-1]["role"] == "system" and "last round" in last[-1]["content"]
    assert [m["role"] for m in last[1:-1]] == ["user", "assistant", "user"]


# --- CLI ----------------------------------------------------------------------------------------

def test_cli_prints_one_frame_per_turn() -> None:
    env = {**os.environ, "LLM_API_KEY": "", "OPENAI_API_KEY": "", "PYTHONIOENCODING": "utf-8"}
    out = subprocess.run([sys.executable, "-m", "navigo_core", "clarify"], cwd=ROOT, env=env, capture_output=True,
                         input="帮我规划一次出差\n从上海到杭州\n下周五出发玩3天\n2个人\n6000元\n", text=True,
                         encoding="utf-8", timeout=60, check=True).stdout
    frames = [json.loads(line) for line in out.splitlines()]
    assert [f["status"] for f in frames] == ["asking"] * 4 + ["done"]
    assert "summary" not in frames[0] and frames[-1]["summary"]["objective"] == "规划从上海到杭州的行程"
    assert all(set(f) == {"status", "content"} for f in frames[:-1]) and set(frames[-1]) == {"status", "content", "summary"}
    assert "杭州" in out  # ensure_ascii=False
