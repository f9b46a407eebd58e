"""The one request parser (navigo_core.understand): fields in both languages, conversation updates,
context-resolved places, and the LLM reconciliation against the fake OpenAI server."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from navigo_core.understand import parse_amount, parse_dates, parse_request, update_request, zh_number
from navigo_core.understand.holidays import holiday_span

TODAY = date(2026, 12, 1)  # a Tuesday


def p(text: str, today: date = TODAY):
    return parse_request(text, today=today)


# --- dates ---------------------------------------------------------------------------

@pytest.mark.parametrize("text,start,end", [
    ("广州到西安，2027年10月1日到10月7日", "2027-10-01", "2027-10-07"),
    ("2027年1月20日到22日", "2027-01-20", "2027-01-22"),
    ("2027-04-02 to 2027-04-05", "2027-04-02", "2027-04-05"),
    ("June 10 to June 14", "2027-06-10", "2027-06-14"),
    ("from March 16th to March 18th, 2027", "2027-03-16", "2027-03-18"),
    ("from the 8th to the 10th of March, 2027", "2027-03-08", "2027-03-10"),
    ("from 3/5/2027 to 3/9/2027", "2027-03-05", "2027-03-09"),
    ("下周五出发玩3天", "2026-12-11", "2026-12-13"),
    ("next friday for 3 days", "2026-12-11", "2026-12-13"),
    ("3号出发5号回来", "2026-12-03", "2026-12-05"),
    ("下周二去武汉出差，周四回来", "2026-12-08", "2026-12-10"),
    ("周六去天津，当天来回", "2026-12-05", "2026-12-05"),
    ("for a week from may 3", "2027-05-03", "2027-05-09"),
    ("from june sixteenth to june twenty first", "2027-06-16", "2027-06-21"),
    # numeric month/day without a year (tickets, forms): the next such day; a second one is the end
    ("订个往返 6/18去6/22回", "2027-06-18", "2027-06-22"),
    ("4/3-4/9 in Lisbon", "2027-04-03", "2027-04-09"),
    ("12/28-1/3 in Harbin", "2026-12-28", "2027-01-03"),
])
def test_dates(text: str, start: str, end: str) -> None:
    r = p(text)
    assert (r.start_date, r.end_date) == (date.fromisoformat(start), date.fromisoformat(end))
    assert r.days == (r.end_date - r.start_date).days + 1


@pytest.mark.parametrize("text,holiday", [
    ("我想五一去成都玩", "labour_day"), ("国庆去西安", "national_day"), ("春节回长沙", "spring_festival"),
    ("端午节去苏州", "dragon_boat"), ("中秋去杭州", "mid_autumn"), ("清明去南京", "qingming"),
    ("Christmas in Vienna", "christmas"), ("Easter in Rome", "easter"), ("Thanksgiving in New York", "thanksgiving"),
    ("Golden Week in Tokyo", "golden_week"),
])
def test_holidays_have_their_real_dates(text: str, holiday: str) -> None:
    span = holiday_span(holiday, today=TODAY)
    assert span is not None
    r = p(text)
    assert r.start_date == span[0] and r.end_date == span[1]
    assert r.start_date >= TODAY


def test_holiday_dates_for_known_years() -> None:
    assert holiday_span("spring_festival", today=TODAY, year=2027)[0] == date(2027, 2, 5)  # 除夕
    assert holiday_span("mid_autumn", today=TODAY, year=2027)[0] == date(2027, 9, 15)
    assert holiday_span("dragon_boat", today=TODAY, year=2027)[0] == date(2027, 6, 9)
    assert holiday_span("easter", today=TODAY, year=2027)[0] == date(2027, 3, 28)
    assert holiday_span("thanksgiving", today=TODAY, year=2027)[0] == date(2027, 11, 25)
    assert holiday_span("national_day", today=TODAY, year=2026) == (date(2026, 10, 1), date(2026, 10, 7))


def test_holiday_with_duration() -> None:
    r = p("五一去成都玩三天")
    assert (r.start_date, r.end_date, r.days) == (date(2027, 5, 1), date(2027, 5, 3), 3)


@pytest.mark.parametrize("text,first,last", [
    ("Kyoto in April", date(2027, 4, 1), date(2027, 4, 30)),
    ("下个月想和老婆从北京去成都", date(2027, 1, 1), date(2027, 1, 31)),
    ("明年秋天去云南", date(2027, 9, 1), date(2027, 11, 30)),
])
def test_month_or_season_alone_is_a_question_with_dates_inside(text: str, first: date, last: date) -> None:
    r = p(text)
    assert r.start_date is None and r.end_date is None
    amb = r.ambiguity("dates")
    assert amb is not None and amb.candidates
    for option in amb.candidates:  # every quick reply parses back to dates inside the period
        back = p(option)
        assert back.start_date is not None and first <= back.start_date <= last


@pytest.mark.parametrize("text,today,start,end", [
    # the month is counted from today, across a year's end
    ("申请下个月10日到12日从上海去杭州出差", date(2026, 12, 6), date(2027, 1, 10), date(2027, 1, 12)),
    ("申请下个月10日到12日从上海去杭州出差", date(2026, 11, 15), date(2026, 12, 10), date(2026, 12, 12)),
    ("下月3号到5号去成都", date(2026, 12, 6), date(2027, 1, 3), date(2027, 1, 5)),
    ("本月20号到22号去厦门", date(2026, 12, 6), date(2026, 12, 20), date(2026, 12, 22)),
    ("下个月10号出发去西安", date(2027, 3, 30), date(2027, 4, 10), None),
    ("the 10th to the 12th of next month in Lisbon", date(2026, 12, 6), date(2027, 1, 10), date(2027, 1, 12)),
    ("Lisbon next month, 3rd-5th", date(2027, 1, 31), date(2027, 2, 3), date(2027, 2, 5)),
])
def test_days_of_this_or_next_month(text: str, today: date, start: date, end: date | None) -> None:
    r = parse_dates(text, today)
    assert (r.start, r.end) == (start, end)


@pytest.mark.parametrize("text,days", [("下个月10天", 10), ("本月去三天", 3), ("next month for 4 days", 4)])
def test_a_duration_after_next_month_is_no_date(text: str, days: int) -> None:
    r = parse_dates(text, date(2026, 12, 6))
    assert (r.start, r.duration_days) == (None, days) and r.period is not None


_EN_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December"]


@settings(max_examples=150, deadline=None)
@given(st.dates(min_value=TODAY, max_value=TODAY + timedelta(days=700)), st.integers(0, 5))
def test_any_date_written_in_a_supported_form_parses_back(d: date, form: int) -> None:
    text = [
        d.isoformat(),
        f"{d.year}年{d.month}月{d.day}日",
        f"{_EN_MONTHS[d.month - 1]} {d.day}, {d.year}",
        f"{d.day} {_EN_MONTHS[d.month - 1]} {d.year}",
        f"{d.month}/{d.day}/{d.year}",
        f"{d.year}/{d.month}/{d.day}",
    ][form]
    assert parse_dates(f"出发 {text}" if form == 1 else f"leaving {text}", TODAY).start == d


@settings(max_examples=100, deadline=None)
@given(st.dates(min_value=TODAY, max_value=TODAY + timedelta(days=360)))
def test_month_day_without_year_is_the_next_occurrence(d: date) -> None:
    assert parse_dates(f"{d.month}月{d.day}日出发", TODAY).start == d
    assert parse_dates(f"on {_EN_MONTHS[d.month - 1]} {d.day}", TODAY).start == d


# --- numbers and budgets ---------------------------------------------------------

_DIG = "零一二三四五六七八九"


def _zh(n: int) -> str:
    """A standard Chinese reading of 1 ≤ n < 100000000 (test oracle)."""
    def below_10k(x: int) -> str:
        out, zero = "", False
        for value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
            digit = x // value % 10
            if digit:
                if zero and out:
                    out += "零"
                out += _DIG[digit] + unit
                zero = False
            else:
                zero = True
        return out
    if n >= 10000:
        high, low = divmod(n, 10000)
        text = below_10k(high) + "万"
        if low:
            text += ("零" if low < 1000 else "") + below_10k(low)
        return text
    text = below_10k(n)
    return text[1:] if text.startswith("一十") else text


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 99_999_999))
def test_chinese_numerals_read_back(n: int) -> None:
    assert zh_number(_zh(n)) == n


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 99), st.integers(1, 9))
def test_colloquial_wan_forms(a: int, b: int) -> None:
    assert parse_amount(f"{a}万{b}") == a * 10_000 + b * 1000      # 1万5 = 15000
    assert parse_amount(f"{a}.{b}万") == a * 10_000 + b * 1000     # 1.5万 = 15000
    assert parse_amount(f"{a}万{b}千") == a * 10_000 + b * 1000    # 2万5千 = 25000
    assert parse_amount(f"{a}k") == a * 1000                       # 15k = 15000


@pytest.mark.parametrize("text,amount,currency", [
    ("总预算一万五", 15000, "CNY"), ("预算1万5", 15000, "CNY"), ("预算2万5千元", 25000, "CNY"),
    ("预算1.5万", 15000, "CNY"), ("budget 15k", 15000, "USD"), ("with a budget of $1,700", 1700, "USD"),
    ("budget 3000 EUR", 3000, "EUR"), ("3k EUR", 3000, "EUR"), ("预算八千块", 8000, "CNY"),
    ("under 800 pounds", 800, "GBP"), ("我们3个人，人均3000", 9000, "CNY"),
    ("for 4 people, including children under 10, our budget is $11,300", 11300, "USD"),
])
def test_budgets(text: str, amount: float, currency: str) -> None:
    r = p(text)
    assert r.budget is not None and (r.budget.amount, r.budget.currency) == (amount, currency)


# --- travellers --------------------------------------------------------------------

@pytest.mark.parametrize("text,adults,children", [
    ("with my wife", 2, 0), ("我和老婆", 2, 0), ("带父母去北京", 3, 0), ("一家三口", 2, 1), ("两大一小", 2, 1),
    ("12 people", 12, None), ("a group of 5", 5, None), ("a duo heading to Rome", 2, None),
    ("two of us", 2, None), ("for two", 2, None), ("solo", 1, 0), ("2 adults 1 kid", 2, 1),
    ("me, my husband and our daughter", 2, 1), ("with 3 friends", 4, 0), ("我和两个朋友", 3, 0),
    ("two adults and a 4 year old", 2, 1), ("for a party of 5", 5, None),
])
def test_travellers(text: str, adults: int, children: int | None) -> None:
    r = p(text)
    assert (r.adults, r.children) == (adults, children)


# --- places ------------------------------------------------------------------------

@pytest.mark.parametrize("text,origin,destination", [
    ("i want to fly from boston to denver", "boston", "denver"),
    ("cheapest flights atlanta to dallas", "atlanta", "dallas"),
    ("show me flights between pittsburgh and baltimore", "pittsburgh", "baltimore"),
    ("flights from sfo to seattle", "sfo", "seattle"),
    ("a 3-day trip for two, starting in Sacramento and heading to Atlanta", "Sacramento", "Atlanta"),
    ("leaving from Killeen and visiting 2 cities in Texas", "Killeen", "Texas"),
    ("下个月想和老婆从北京去成都吃火锅看熊猫", "北京", "成都"),
    ("去成都吃火锅", None, "成都"),
    ("许昌到中山的汽车", "许昌", "中山"),
    ("广州至南宁航班", "广州", "南宁"),
    ("北京飞合肥的机票", "北京", "合肥"),
    ("从上海回杭州", "上海", "杭州"),
    ("杭州之旅", None, "杭州"),
    ("Hangzhou, 12 people, 2027-04-20 to 2027-04-22", None, "Hangzhou"),
    # one arrow between two places: origin and destination ("need tix shanghai>shenzhen" was read as Shanghai)
    ("need tix shanghai>shenzhen fri pm", "shanghai", "shenzhen"),
    ("Chengdu → Lhasa, 2 adults", "Chengdu", "Lhasa"),
    ("new york -> boston tomorrow", "new york", "boston"),
    ("帮我订上海→北京的高铁", "上海", "北京"),
    ("武汉>长沙 周五的票", "武汉", "长沙"),
])
def test_place_words_in_any_case(text: str, origin: str | None, destination: str) -> None:
    r = p(text)
    assert (r.origin_text, r.destination_text) == (origin, destination)
    assert r.destination is not None
    assert not [a for a in r.ambiguities if a.field in ("origin", "destination")]


@pytest.mark.parametrize("text", [
    "budget > 5000 for a trip to Tokyo",   # not a place on both sides
    "3 days in Kyoto > 2 days in Osaka",
    "Shanghai → Suzhou → Hangzhou",        # several arrows: a route's stops (the route parser's), not one leg
])
def test_an_arrow_without_one_place_on_each_side_gives_no_origin(text: str) -> None:
    assert p(text).origin_text is None


def test_context_decides_namesakes() -> None:
    r = p("From Berlin to Rome, June 10 to June 14, 2 adults, budget 3000 EUR")
    assert r.destination is not None and r.destination.country == "IT" and r.destination.name == "Rome"
    assert r.origin is not None and r.origin.country == "DE" and not r.ambiguities
    r = p("plan a trip from St. Petersburg to Rockford")  # the other place is in the US
    assert r.origin is not None and (r.origin.country, r.origin.admin) == ("US", "Florida")
    r = p("from Shanghai to Suzhou")  # the nearer Suzhou
    assert r.destination is not None and r.destination.admin == "Jiangsu"


def test_an_unclear_name_is_a_question_never_another_place() -> None:
    r = p("From Paris to Springfield")
    assert r.destination is None and r.destination_text == "Springfield"
    amb = r.ambiguity("destination")
    assert amb is not None and len(amb.candidates) >= 3
    assert any("Illinois" in c for c in amb.candidates)
    picked = next(c for c in amb.candidates if "Illinois" in c)
    again = update_request(r, picked, today=TODAY, expect="destination")
    assert again.destination is not None and again.destination.admin == "Illinois"
    assert again.ambiguity("destination") is None
    unknown = p("我想去瑞昌玩")
    assert unknown.destination is None and unknown.destination_text == "瑞昌"
    assert unknown.ambiguity("destination").reason == "understand.amb.place_unknown"


# --- conversation ------------------------------------------------------------------

def test_explicit_dates_replace_a_vague_long_weekend() -> None:
    r = p("I'd like a long weekend in Kyoto")
    assert "start_date" in r.vague
    r = update_request(r, "2027-04-02 to 2027-04-05", today=TODAY)
    assert (r.start_date, r.end_date) == (date(2027, 4, 2), date(2027, 4, 5)) and not r.vague
    r = update_request(r, "this weekend", today=TODAY)  # vague never replaces explicit
    assert r.start_date == date(2027, 4, 2)


@pytest.mark.parametrize("first, remark, change", [
    ("I want to go to Kyoto in April", "my sister lives in Osaka", "actually make it Osaka"),
    ("我想五一去成都玩", "我朋友在重庆，顺便见一下", "还是去重庆吧"),
])
def test_another_city_in_a_later_message_is_a_question_not_a_new_destination(first, remark, change) -> None:
    """A name the user typed is never silently replaced: a later message naming another city keeps the
    destination and asks which; a message that says it is a change, or answers the question, settles it."""
    r = p(first)
    kept = r.destination.name
    asked = update_request(r, remark, today=TODAY)
    amb = asked.ambiguity("destination")
    assert asked.destination.name == kept and amb is not None and amb.reason == "understand.amb.destination_switch"
    assert len(amb.candidates) == 2 and amb.places[1].name == kept and amb.text in amb.candidates[0]
    from navigo_core.i18n import t

    question = t(amb.reason, r.lang, text=amb.text, **amb.params)
    assert amb.places[1].display_name(r.lang) in question and amb.candidates[1] not in question  # short names
    stay = update_request(asked, amb.candidates[1], today=TODAY, expect="destination")
    assert stay.destination.name == kept and stay.ambiguity("destination") is None
    go = update_request(asked, amb.candidates[0], today=TODAY, expect="destination")
    assert go.destination.name != kept and go.ambiguity("destination") is None
    changed = update_request(r, change, today=TODAY)
    assert changed.destination.name == go.destination.name and changed.ambiguity("destination") is None


def test_corrections() -> None:
    r = p("plan a trip for 2 people to Kyoto")
    r = update_request(r, "actually 3 people", today=TODAY)
    assert r.adults == 3
    r = p("我想去杭州，5月3号出发，玩三天")
    assert (r.start_date, r.end_date) == (date(2027, 5, 3), date(2027, 5, 5))
    r = update_request(r, "不对，6号回来", today=TODAY)
    assert (r.start_date, r.end_date, r.days) == (date(2027, 5, 3), date(2027, 5, 6), 4)


def test_one_answer_fills_several_fields() -> None:
    r = p("I want to plan a trip")
    r = update_request(r, "Hangzhou, 12 people, 2027-04-20 to 2027-04-22", today=TODAY, expect="destination")
    assert r.destination is not None and r.destination.name == "Hangzhou"
    assert (r.adults, r.start_date, r.end_date) == (12, date(2027, 4, 20), date(2027, 4, 22))


@pytest.mark.parametrize("expect,answer,field,value", [
    ("travellers", "3", "adults", 3), ("days", "4", "days", 4), ("destination", "杭州", "destination_text", "杭州"),
])
def test_bare_answers_fill_the_field_asked(expect: str, answer: str, field: str, value: object) -> None:
    r = update_request(p("我想出去玩"), answer, today=TODAY, expect=expect)
    assert getattr(r, field) == value


def test_bare_amount_answers_the_budget_question() -> None:
    r = update_request(p("去杭州玩"), "6000", today=TODAY, expect="budget")
    assert r.budget is not None and (r.budget.amount, r.budget.currency) == (6000, "CNY")


# --- with an LLM (fake OpenAI server) ----------------------------------------------------

def test_llm_corrects_a_rule_misreading(fake_openai, fake_llm) -> None:
    # the rules read "the friday after next" as this Friday; the model reads it right
    fake_openai.enqueue_json({"destination": "Kyoto", "start_date": "2026-12-11", "end_date": "2026-12-13",
                              "days": 3, "adults": 2})
    r = parse_request("the friday after next, 3 days in Kyoto for 2 adults", today=TODAY, llm=fake_llm)
    assert (r.start_date, r.end_date) == (date(2026, 12, 11), date(2026, 12, 13))
    assert r.sources["start_date"] == "llm" and r.destination is not None and r.destination.name == "Kyoto"
    sent = fake_openai.chat_requests[-1]["messages"]
    assert "rule-based parser read it as" in sent[0]["content"]  # the model sees the rules' reading


def test_llm_answer_the_text_does_not_support_is_rejected(fake_openai, fake_llm) -> None:
    fake_openai.enqueue_json({"origin": "Berlin", "destination": "Paris", "adults": 5, "budget_amount": 9999,
                              "budget_currency": "EUR"})
    r = parse_request("From Berlin to Rome, June 10 to June 14, 2 adults, budget 3000 EUR", today=TODAY, llm=fake_llm)
    assert r.destination is not None and r.destination.name == "Rome"
    assert r.adults == 2 and r.budget is not None and r.budget.amount == 3000
    assert "request.note.llm_rejected" in r.notes


def test_a_conflict_both_texts_back_becomes_a_question(fake_openai, fake_llm) -> None:
    fake_openai.enqueue_json({"destination": "上海"})
    r = parse_request("我本来想去北京，后来决定去上海", today=TODAY, llm=fake_llm)
    assert r.ambiguity("destination") is not None
    assert set(r.ambiguity("destination").candidates) == {"北京", "上海"}


def test_llm_failure_keeps_the_rules(fake_openai, fake_llm) -> None:
    fake_openai.set_fault(status=500)
    r = parse_request("去杭州玩三天，预算6000", today=TODAY, llm=fake_llm)
    assert r.destination_text == "杭州" and r.budget is not None and "request.note.llm_failed" in r.notes


def test_a_country_asks_which_city() -> None:
    r = p("我想去日本玩")
    amb = r.ambiguity("destination")
    assert r.destination is None and amb is not None and amb.reason == "understand.amb.country"
    assert amb.candidates[0].startswith("东京")
    picked = update_request(r, amb.candidates[2], today=TODAY, expect="destination")
    assert picked.destination is not None and picked.destination.name == "Osaka"


def test_a_chinese_quick_reply_with_qualifiers_parses_back() -> None:
    r = p("从巴黎去斯普林菲尔德")
    amb = r.ambiguity("destination")
    assert amb is not None
    for option, place in zip(amb.candidates, amb.places):
        back = update_request(r, option, today=TODAY, expect="destination")
        assert back.destination is not None and back.destination.admin == place.admin


@pytest.mark.parametrize("answer", ["I don't know yet", "随便", "not sure, you pick"])
def test_a_non_answer_is_not_a_place(answer: str) -> None:
    r = update_request(p("I want a holiday"), answer, today=TODAY, expect="destination")
    assert r.destination_text is None


def test_period_text_names_the_month() -> None:
    assert p("Kyoto in April").ambiguity("dates").text == "April"


@pytest.mark.parametrize("first,answer,amount", [
    ("我们3个人去杭州", "人均3000", 9000), ("3 of us to Kyoto", "about $1000 per person", 3000)])
def test_a_per_person_answer_counts_the_known_party_once(first: str, answer: str, amount: float) -> None:
    r = update_request(p(first), answer, today=TODAY, expect="budget")
    assert r.budget is not None and r.budget.amount == amount


@pytest.mark.parametrize("text", ["2/3的人都去", "1/2 day in Rome", "24/7 support", "50/50 split", "3/4 of the budget"])
def test_a_fraction_is_no_date(text: str) -> None:
    assert p(text).start_date is None
