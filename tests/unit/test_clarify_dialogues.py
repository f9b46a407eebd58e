"""Clarification dialogues through the CLI (``python -m navigo_core clarify``, one user turn per stdin line, one JSON
frame per turn), offline: one request kept across the turns by navigo_core.understand.

A dialogue ends with a stop phrase ("that's enough", "可以了") where it would go on asking, so the last frame's
summary shows what the agent understood.
"""

from __future__ import annotations

import io
import json
from datetime import date

import pytest

from navigo_core import cli
from navigo_core.clarify import ClarifyAgent
from navigo_core.config import Settings
from navigo_core.providers.places import GazetteerPlaceProvider
from navigo_core.understand import interest_label, parse_dates

pytestmark = pytest.mark.usefixtures("no_internet")

TODAY = date(2026, 12, 1)
P = GazetteerPlaceProvider()


@pytest.fixture
def clarify_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``clarify_cli(lines) -> frames``: the CLI's main with ``lines`` on stdin, today fixed, gazetteer places."""
    monkeypatch.setenv("LLM_API_KEY", "")
    monkeypatch.setenv("OPENAI_API_KEY", "")
    monkeypatch.setenv("PLACES_PROVIDER", "gazetteer")
    monkeypatch.setattr(ClarifyAgent, "today", property(lambda self: TODAY))

    def run(lines: list[str]) -> list[dict]:
        monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
        assert cli.main(["clarify", "--offline"]) == 0
        return [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    return run


def summary_of(frames: list[dict]) -> str:
    assert frames[-1]["status"] == "done", frames
    s = frames[-1]["summary"]
    return " | ".join([s["objective"], *s["constraints"]])


def agent() -> ClarifyAgent:
    return ClarifyAgent(Settings(llm_api_key=""), places=P, today=TODAY)


# (a) an explicit answer replaces vague dates -------------------------------------------------

@pytest.mark.parametrize("lines,dates", [
    (["I'd like a long weekend in Kyoto", "2027-04-02 to 2027-04-05", "that's enough"],
     "Dates: 2027-04-02 to 2027-04-05 (4 days)"),
    (["我想去京都过个长周末", "2027-04-02到2027-04-05", "可以了"], "日期：2027-04-02 至 2027-04-05（4 天）"),
])
def test_a_explicit_dates_replace_a_long_weekend(clarify_cli, lines, dates) -> None:
    frames = clarify_cli(lines)
    assert [f["status"] for f in frames] == ["asking", "asking", "done"]
    text = summary_of(frames)
    assert dates in text and ("Kyoto" in text or "京都" in text)


# (b) a correction of the return day ----------------------------------------------------------

@pytest.mark.parametrize("lines", [
    ["我想去杭州，5月3号出发，玩三天", "不对，5号回来", "可以了"],
    ["我想去杭州，5月3号出发，玩五天", "不对，5号回来", "可以了"],  # the correction shortens the trip
])
def test_b_zh_correction_of_the_return_day(clarify_cli, lines) -> None:
    text = summary_of(clarify_cli(lines))
    assert "日期：2027-05-03 至 2027-05-05（3 天）" in text and "杭州" in text


@pytest.mark.parametrize("correction", ["no, back on the 5th", "actually, back on May 5"])
def test_b_en_correction_of_the_return_day(clarify_cli, correction) -> None:
    text = summary_of(clarify_cli(["I want to go to Hangzhou, leaving May 3 for five days", correction,
                                   "that's enough"]))
    assert "Dates: 2027-05-03 to 2027-05-05 (3 days)" in text


# (c) a correction of the party -----------------------------------------------------------------

@pytest.mark.parametrize("lines,adults", [
    (["plan a trip for 2 people to Kyoto", "actually 3 people", "that's enough"], "Adults: 3"),
    (["我们两个人想去京都", "不对，3个人", "可以了"], "成人：3 位"),
])
def test_c_correction_of_the_party(clarify_cli, lines, adults) -> None:
    frames = clarify_cli(lines)
    assert "3" in frames[1]["content"]  # the budget question counts the corrected party
    assert adults in summary_of(frames)


# (d) one answer fills three fields, and is not asked again ---------------------------------------

@pytest.mark.parametrize("lines,facts", [
    (["I want to plan a trip", "Hangzhou, 12 people, 2027-04-20 to 2027-04-22", "$3,000"],
     ["Plan a trip to Hangzhou", "Adults: 12", "Dates: 2027-04-20 to 2027-04-22 (3 days)", "3,000 USD"]),
    (["我想规划一次旅行", "杭州，12个人，2027-04-20到2027-04-22", "6000元"],
     ["规划去杭州的行程", "成人：12 位", "日期：2027-04-20 至 2027-04-22（3 天）", "6,000 CNY"]),
])
def test_d_one_answer_fills_destination_party_and_dates(clarify_cli, lines, facts) -> None:
    frames = clarify_cli(lines)
    assert [f["status"] for f in frames] == ["asking", "asking", "done"]
    second = frames[1]["content"]
    assert "12" in second and not any(w in second for w in ("Where", "When", "哪里", "什么时候", "How many", "几位"))
    text = summary_of(frames)
    assert all(f in text for f in facts), text


# (e) a holiday: its real span ----------------------------------------------------------------------

@pytest.mark.parametrize("lines,objective,holiday", [
    (["我想五一去成都玩", "可以了"], "规划去成都的行程", "五一"),
    (["I want to visit Chengdu over May Day", "that's enough"], "Plan a trip to Chengdu", "May Day"),
])
def test_e_holiday_dates_and_destination(clarify_cli, lines, objective, holiday) -> None:
    span = parse_dates(holiday, TODAY)
    assert span.start == date(2027, 5, 1) and span.end and (span.end - span.start).days >= 2
    text = summary_of(clarify_cli(lines))
    assert text.startswith(objective)
    assert f"{span.start.isoformat()} {'至' if lines[0][0] == '我' else 'to'} {span.end.isoformat()}" in text


# (f) a month only: a question about dates with that month's dates --------------------------------

@pytest.mark.parametrize("first,asked,pick,dates", [
    ("Kyoto in April", "Which dates in", "2027-04-09 to 2027-04-11", "Dates: 2027-04-09 to 2027-04-11 (3 days)"),
    ("四月去京都", "四月的哪几天", "2027-04-09 到 2027-04-11", "日期：2027-04-09 至 2027-04-11（3 天）"),
])
def test_f_month_only_asks_for_dates_in_that_month(clarify_cli, first, asked, pick, dates) -> None:
    frames = clarify_cli([first, pick, "that's enough" if first[0] == "K" else "可以了"])
    assert frames[0]["status"] == "asking" and asked in frames[0]["content"]
    assert dates in summary_of(frames)
    # the quick replies (not in the CLI's frame) are the month's dates, and the pick is one of them
    a = agent()
    turn, _ = a.turn(a.start("t", first), first)
    april = [q for q in turn.quick_replies if q.startswith("2027-04-")]
    assert len(april) >= 2 and pick in april


# ambiguous destination: the candidates are the quick replies; picking one resolves it ----------

@pytest.mark.parametrize("lines,pick", [
    (["From Paris to Springfield"], "Springfield, Illinois, United States"),
    (["plan a trip for me", "Springfield"], "Springfield, Illinois, United States"),
    (["从巴黎去斯普林菲尔德"], "斯普林菲尔德，Illinois，美国"),
])
def test_ambiguous_destination_quick_replies_resolve(lines, pick) -> None:
    a = agent()
    state = a.start("t", lines[0])
    for line in lines:
        turn, state = a.turn(state, line)
    assert turn.status == "asking" and ("matches several places" in turn.content or "对应多个地点" in turn.content)
    assert pick in turn.quick_replies
    turn, state = a.turn(state, pick)
    assert state.slots["destination"]["admin"] == "Illinois"
    assert not any(x["field"] == "destination" for x in state.slots["ambiguities"])
    assert "matches several places" not in turn.content and "对应多个地点" not in turn.content
    assert not any(q.startswith(("Springfield", "斯普林菲尔德")) for q in turn.quick_replies)


def test_interests_are_listed_in_the_users_language(clarify_cli) -> None:
    text = summary_of(clarify_cli(["我想去杭州喝茶和徒步", "可以了"]))
    assert "兴趣：喝茶、徒步" in text
    text = summary_of(clarify_cli(["a trip to Hangzhou for tea and hiking", "that's enough"]))
    assert f"Interests: tea, {interest_label('hiking', 'en')}" in text  # the lexicon's English word
