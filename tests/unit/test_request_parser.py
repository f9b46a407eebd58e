"""Requirement parser and form completer: the planner's request read by navigo_core.understand (rules,
gazetteer, and the LLM reading via the fake OpenAI server)."""

from __future__ import annotations

from datetime import date

import pytest

from navigo_core.understand import parse_budget, parse_dates, parse_interests, parse_travellers, zh_number
from navigo_core.planner.request import (
    REQUIRED,
    apply_answer,
    apply_defaults,
    missing_fields,
    parse_request,
    questions_for,
)
from navigo_core.providers.places import GazetteerPlaceProvider

pytestmark = pytest.mark.usefixtures("no_internet")

TODAY = date(2026, 3, 10)  # a Tuesday
P = GazetteerPlaceProvider()
D = date


def parse(text, **kw):
    return parse_request(text, today=TODAY, places=P, **kw)


@pytest.mark.parametrize("text,start,end", [
    ("5月1日到5日", D(2026, 5, 1), D(2026, 5, 5)),
    ("5月1日至5月5日", D(2026, 5, 1), D(2026, 5, 5)),
    ("五月一日到五月三日", D(2026, 5, 1), D(2026, 5, 3)),
    ("2026-05-01 to 2026-05-05", D(2026, 5, 1), D(2026, 5, 5)),
    ("May 1-5", D(2026, 5, 1), D(2026, 5, 5)),
    ("from May 1 to May 5", D(2026, 5, 1), D(2026, 5, 5)),
    ("1 May - 3 May", D(2026, 5, 1), D(2026, 5, 3)),
    ("next Friday for 3 days", D(2026, 3, 20), D(2026, 3, 22)),
    ("下周五出发玩3天", D(2026, 3, 20), D(2026, 3, 22)),
    ("下周五出发玩三天", D(2026, 3, 20), D(2026, 3, 22)),
    ("明天", D(2026, 3, 11), None),
    ("明早8点出发", D(2026, 3, 11), None),  # 明早 / 明晚 / 今早: tomorrow morning / evening, this morning
    ("明晚的航班", D(2026, 3, 11), None),
    ("今早到的会议室", D(2026, 3, 10), None),
    ("说明早已提交", None, None),  # 说明 + 早已, 说明 + 晚上, 如今 + 早已: no date
    ("请说明晚上几点到", None, None),
    ("如今早已不同", None, None),
    ("tomorrow for a week", D(2026, 3, 11), D(2026, 3, 17)),
    ("this weekend", D(2026, 3, 14), D(2026, 3, 15)),
    ("这周末", D(2026, 3, 14), D(2026, 3, 15)),
    ("3月1日到3日", D(2027, 3, 1), D(2027, 3, 3)),  # already past this year → next year
    ("Dec 30 to Jan 2", D(2026, 12, 30), D(2027, 1, 2)),
    ("下周一 3天2晚", D(2026, 3, 16), D(2026, 3, 18)),
])
def test_dates(text, start, end):
    r = parse_dates(text, TODAY)
    assert (r.start, r.end) == (start, end)


def test_end_before_start_is_a_note_not_a_swap():
    r = parse("2026-05-05 to 2026-05-01")
    assert r.start_date == D(2026, 5, 5) and r.end_date is None
    assert "request.note.end_before_start" in r.notes and "end_date" in missing_fields(r)


@pytest.mark.parametrize("text,amount,currency,per_person", [
    ("预算6000元", 6000, "CNY", False),
    ("$3,000", 3000, "USD", False),
    ("3k EUR", 3000, "EUR", False),
    ("budget of 5000 yuan", 5000, "CNY", False),
    ("人均2000", 2000, None, True),
    ("预算六千", 6000, None, False),
    ("£800", 800, "GBP", False),
    ("50000円", 50000, "JPY", False),
    ("预算1万元", 10000, "CNY", False),
    ("¥8000", 8000, "CNY", False),
])
def test_budget(text, amount, currency, per_person):
    b = parse_budget(text)
    assert (b.amount, b.currency, b.per_person) == (amount, currency, per_person)


def test_per_person_budget_multiplied_by_travellers():
    r = parse("两个大人一个小孩，人均2000元")
    assert r.budget.amount == 6000 and r.budget.currency == "CNY"
    assert "request.note.per_person" in r.notes


def test_budget_without_currency_uses_language_default():
    assert parse("预算6000").budget.currency == "CNY"
    r = parse("budget 3000")
    assert r.budget.currency == "USD" and "request.note.currency_assumed" in r.notes


@pytest.mark.parametrize("text,adults,children", [
    ("两个大人一个小孩", 2, 1),
    ("2 adults 1 kid", 2, 1),
    ("a family of four (2 adults, 2 kids)", 2, 2),
    ("a family of four", 2, 2),
    ("我们三个人", 3, None),
    ("solo", 1, 0),
    ("一个人", 1, 0),
    ("一家三口", 2, 1),
])
def test_travellers(text, adults, children):
    r = parse_travellers(text)
    assert (r.adults, r.children) == (adults, children)


@pytest.mark.parametrize("text,origin,dest", [
    ("从上海出发去杭州", "Shanghai", "Hangzhou"),
    ("上海出发去杭州", "Shanghai", "Hangzhou"),
    ("从北京到东京", "Beijing", "Tokyo"),
    ("from Shanghai to Hangzhou", "Shanghai", "Hangzhou"),
    ("fly to Tokyo from PVG", "PVG", "Tokyo"),
    ("from PVG to JFK on May 3", "PVG", "JFK"),
    ("去杭州", None, "Hangzhou"),
])
def test_origin_destination(text, origin, dest):
    r = parse(text)
    got_origin = r.origin and (r.origin.ref if r.origin.source == "iata" else r.origin.name)
    got_dest = r.destination and (r.destination.ref if r.destination.source == "iata" else r.destination.name)
    assert (got_origin, got_dest) == (origin, dest)


def test_iata_resolves_airport():
    r = parse("fly from JFK to PVG")
    assert r.origin.source == "iata" and r.origin.country == "US"
    assert r.destination.ref == "PVG" and r.destination.country == "CN"


def test_ambiguous_place_keeps_text_and_asks_which():
    # was "Suzhou" with a note: the gazetteer's Suzhou (Jiangsu) now wins on population; Springfield is ambiguous
    r = parse("I want to go to Springfield")
    assert r.destination is None and r.destination_text == "Springfield"
    assert missing_fields(r)[0] == "destination"
    q = questions_for(r, "en")[0]
    assert q.field == "destination" and "Springfield" in q.text
    assert "Springfield, Illinois, United States" in q.options
    r = apply_answer(r, "Springfield, Illinois, United States", today=TODAY, places=P, expect="destination")
    assert r.destination.name == "Springfield" and r.destination.admin == "Illinois"
    assert r.ambiguity("destination") is None and "destination" not in missing_fields(r)


def test_missing_destination_is_a_question_without_options():
    r = parse("I want to plan a trip, May 1 to May 5, budget $3,000")
    assert missing_fields(r) == ["destination"]
    qs = questions_for(r, "en")
    assert [q.field for q in qs] == ["destination"] and qs[0].options == []
    r = apply_answer(r, "Hangzhou", today=TODAY, places=P, expect="destination")
    assert r.destination.name == "Hangzhou" and missing_fields(r) == [] and questions_for(r) == []


def test_month_only_dates_ask_with_the_months_dates():
    r = parse("Kyoto in April, budget $3,000")
    q = questions_for(r, "en")[0]
    assert q.field == "start_date" and q.options and all("04-" in o for o in q.options)
    r = apply_answer(r, q.options[0], today=TODAY, places=P, expect=q.field)
    assert r.start_date and r.start_date.month == 4 and r.end_date and questions_for(r) == []


def test_interests():
    assert parse_interests("喜欢喝茶和徒步") == ["tea", "hiking"]
    assert parse_interests("we like museums, street food and hiking") == ["museums", "food", "hiking"]
    assert parse_interests("no special plans") == []


def test_zh_numbers():
    assert [zh_number(s) for s in ("三", "十二", "二十", "六千", "一万五", "三千五", "两万")] == [
        3, 12, 20, 6000, 15000, 3500, 20000]


@pytest.mark.parametrize("text,lang", [
    ("上海出发去杭州，5月1日到5日，两个大人，预算6000元，喜欢喝茶和徒步", "zh"),
    ("From Shanghai to Hangzhou, May 1 to May 5, 2 adults, budget 6000 CNY, we like tea and hiking", "en"),
])
def test_acceptance_sentences_complete(text, lang):
    r = parse(text)
    assert r.lang == lang
    assert r.origin.name == "Shanghai" and r.destination.name == "Hangzhou"
    assert (r.start_date, r.end_date) == (D(2026, 5, 1), D(2026, 5, 5))
    assert r.budget.amount == 6000 and r.budget.currency == "CNY"
    assert (r.adults, r.children) == (2, 0)
    assert r.interests == ["tea", "hiking"]
    assert missing_fields(r) == [] and questions_for(r, lang) == []
    assert set(r.sources.values()) == {"rule"} and r.notes == []


def test_defaults():
    r = apply_defaults(parse("去杭州"))
    assert (r.adults, r.children, r.interests) == (1, 0, [])
    assert r.sources["adults"] == r.sources["children"] == r.sources["interests"] == "default"
    kept = apply_defaults(parse("2 adults to Hangzhou"))
    assert kept.adults == 2 and kept.sources["adults"] == "rule"


def test_questions_zh_and_resume():
    r = parse("我想去杭州玩，两个大人")
    assert missing_fields(r) == [f for f in REQUIRED if f != "destination"]
    qs = questions_for(r, "zh")
    assert [q.field for q in qs] == ["start_date", "budget"]
    assert "杭州" in qs[0].text and all(q.options for q in qs)
    assert "预算" in qs[1].text
    r = apply_answer(r, qs[0].options[1], today=TODAY, places=P)  # 下周五出发玩3天
    assert (r.start_date, r.end_date) == (D(2026, 3, 20), D(2026, 3, 22)) and r.sources["start_date"] == "user"
    r = apply_answer(r, "6000", today=TODAY, places=P)
    assert missing_fields(r) == [] and r.budget.amount == 6000 and r.budget.currency == "CNY"
    assert r.destination.name == "Hangzhou" and r.adults == 2


def test_questions_en_and_resume():
    r = parse("Trip to Tokyo")
    qs = questions_for(r, "en")
    assert [q.field for q in qs] == ["start_date", "budget"] and "Tokyo" in qs[0].text
    r = apply_answer(r, "May 1 to May 5, budget $3,000", today=TODAY, places=P)
    assert missing_fields(r) == [] and r.budget.currency == "USD"


def test_only_end_missing_asks_trip_length():
    r = parse("明天出发去杭州，预算5000元")
    qs = questions_for(r)
    assert [q.field for q in qs] == ["end_date"] and "3天" in qs[0].options
    r = apply_answer(r, "3天", today=TODAY, places=P)
    assert r.end_date == D(2026, 3, 13) and missing_fields(r) == []


def test_later_explicit_answer_replaces_earlier_values():
    # the old form completer never overwrote a field; understand's conversation rule is "later wins"
    r = parse("5月1日到5日去杭州")
    r2 = apply_answer(r, "6月1日到3日，预算3000元", today=TODAY, places=P)
    assert (r2.start_date, r2.end_date) == (D(2026, 6, 1), D(2026, 6, 3)) and r2.budget.amount == 3000
    assert r2.destination.name == "Hangzhou"


def test_bare_answer_fills_the_second_question_asked():
    r = parse("我想去杭州玩，两个大人")  # asks the dates and the budget
    r = apply_answer(r, "6000", today=TODAY, places=P, expect=["start_date", "budget"])
    assert r.budget.amount == 6000 and r.budget.currency == "CNY" and r.start_date is None


# --- LLM reading (fake OpenAI server): the planner passes the client to navigo_core.understand ------

def _schema_name(body):
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"]
    return body["messages"][0]["content"]


LLM_READING = {"origin": None, "destination": "杭州", "start_date": "2026-05-01", "end_date": "2026-05-05", "days": 5,
               "adults": 2, "children": None, "budget_amount": 6000, "budget_currency": "CNY", "interests": []}


def test_llm_reading_goes_through_understand(fake_openai, fake_llm):
    from navigo_core.planner.request import TravelRequest
    from navigo_core.understand import parse_request as understand

    text = "去杭州，两个大人，预算6000元，劳动节假期"
    fake_openai.enqueue_json(LLM_READING)
    r = parse(text, llm=fake_llm)
    assert len(fake_openai.chat_requests) == 1 and "LLMRequestFields" in _schema_name(fake_openai.chat_requests[0])
    fake_openai.enqueue_json(LLM_READING)
    same = TravelRequest.from_parsed(understand(text, today=TODAY, places=P, llm=fake_llm), raw_text=text)
    assert r == same
    assert (r.start_date, r.end_date) == (D(2026, 5, 1), D(2026, 5, 5)) and r.destination.name == "Hangzhou"
    assert missing_fields(r) == []


def test_llm_values_are_validated(fake_openai, fake_llm):
    fake_openai.enqueue_json({**LLM_READING, "start_date": "not a date", "end_date": None, "days": None,
                              "origin": "Narnia Atlantis"})
    r = parse("去杭州，两个大人，预算6000元", llm=fake_llm)
    assert r.start_date is None and r.origin is None and not r.origin_text
    assert "request.note.llm_rejected" in r.notes


def test_llm_agreeing_with_complete_rules_changes_nothing(fake_openai, fake_llm):
    # the old fill-in skipped the LLM when the rules were complete; understand always lets it check the reading
    text = "上海出发去杭州，5月1日到5日，两个大人，预算6000元，喜欢喝茶和徒步"
    fake_openai.enqueue_json({**LLM_READING, "origin": "上海", "children": 0, "interests": ["tea", "hiking"]})
    r = parse(text, llm=fake_llm)
    rules = parse(text)
    assert len(fake_openai.chat_requests) == 1
    assert r.model_dump(exclude={"sources", "notes"}) == rules.model_dump(exclude={"sources", "notes"})


def test_llm_failure_keeps_rule_result(fake_openai, fake_llm):
    fake_openai.set_fault(status=500)
    r = parse("去杭州，预算6000元", llm=fake_llm)
    assert r.destination.name == "Hangzhou" and r.budget.amount == 6000
    assert "request.note.llm_failed" in r.notes and r.start_date is None


@pytest.mark.parametrize("text, origin, dest", [
    ("帮我规划杭州之旅，从上海出发，5月1日到5日", "上海", "杭州"),
    ("杭州三日游", "", "杭州"),
    ("规划一次北京自由行", "", "北京"),
    ("帮我规划一次出差", "", ""),
])
def test_destination_from_trip_nouns(text: str, origin: str, dest: str) -> None:
    r = parse(text)
    assert (r.origin_text, r.destination_text) == (origin, dest)


def test_saved_plan_requests_still_load():
    from navigo_core.planner.request import TravelRequest

    old = {"raw_text": "去杭州", "lang": "zh", "origin": None, "destination": None, "origin_text": "",
           "destination_text": "杭州", "start_date": "2026-05-01", "end_date": "2026-05-05",
           "budget": {"amount": 6000.0, "currency": "CNY"}, "adults": 2, "children": 0, "interests": ["tea"],
           "sources": {"budget": "rule"}, "notes": []}
    r = TravelRequest.model_validate(old)
    assert r.budget.amount == 6000 and r.ambiguities == [] and r.vague == [] and r.days is None
    assert TravelRequest.model_validate(r.model_dump(mode="json")) == r
