"""policy_query and booking scenes (offline, through the gate)."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest

from navigo_core.config import Settings
from navigo_core.scenes.gate import handle_message, make_gate_context


def _ask(message, *, grade="G3", flow=None):
    settings = Settings(llm_api_key="", employee_grade=grade, _env_file=None)
    return handle_message(message, make_gate_context(settings, router=None, active_flow=flow))


@pytest.mark.parametrize("message, lang, must", [
    ("上海住宿标准是多少", "zh", ["800", "HOTEL-1", "依据规则"]),
    ("what's the meal allowance in Tokyo", "en", ["500", "MEAL-1", "Rule"]),
    ("can I fly business to Beijing", "en", ["No", "Economy", "FLIGHT-4"]),
    ("出差去杭州能坐一等座吗", "zh", ["不可以", "二等座", "TRAIN-4"]),
    ("how far ahead must I book", "en", ["7 days", "ADVANCE-1"]),
])
def test_policy_questions(message, lang, must):
    decision, reply = _ask(message)
    assert decision.scene_id == "policy_query" and reply.lang == lang
    for word in must:
        assert word in reply.text


def test_policy_gate_is_conservative():
    for message in ("帮我报销", "帮我规划上海三日游", "plan a 3-day trip to Tokyo"):
        decision, _ = _ask(message)
        assert decision.scene_id != "policy_query", message


def test_asks_for_grade_once_then_answers():
    decision, reply = _ask("上海住宿标准是多少", grade="")
    assert reply.asks and reply.flow is not None and reply.flow.flow_id == "policy_grade"
    assert "G3" in reply.text and "800" not in reply.text
    decision, reply2 = _ask("经理", grade="", flow=reply.flow)
    assert decision.step == "resume" and "800" in reply2.text and "HOTEL-1" in reply2.text
    assert reply2.flow is not None and reply2.flow.slots["grade"] == "G3"
    # the grade is kept for the thread: a follow-up is answered without asking again
    decision, reply3 = _ask("what's the hotel cap in Tokyo", grade="", flow=reply2.flow)
    assert not reply3.asks and "1,700" in reply3.text


def test_grade_in_english():
    _, reply = _ask("what is the hotel cap in Shanghai", grade="")
    _, reply2 = _ask("G4", grade="", flow=reply.flow)
    assert "1,000" in reply2.text


_CLAIMS = re.compile(r"\bbooked\b|\bconfirm(?:ed|ation)\b|已预订|预订成功|已订好|确认号", re.IGNORECASE)


@pytest.mark.parametrize("message, kinds", [
    ("book me a flight from Shanghai to Beijing on 2026-05-01", {"flight", "train", "hotel"}),
    ("帮我预订上海到北京的高铁票", {"train", "hotel"}),
    ("帮我订杭州的酒店", {"hotel"}),
])
def test_booking_never_claims_a_booking(message, kinds):
    decision, reply = _ask(message)
    assert decision.scene_id == "booking"
    assert not _CLAIMS.search(reply.text)
    assert reply.payload["booked"] is False
    links = reply.payload["links"]
    assert {x["kind"] for x in links} == kinds
    for x in links:
        assert x["url"].startswith("https://") and x["url"] in reply.text


def test_booking_flight_link():
    _, reply = _ask("book me a flight from Shanghai to Beijing on 2026-05-01")
    url = next(x["url"] for x in reply.payload["links"] if x["kind"] == "flight")
    assert url == "https://www.google.com/travel/flights?q=Flights%20from%20Shanghai%20to%20Beijing%20on%202026-05-01"
    assert "openstreetmap.org/search?query=" in reply.text and "12306.cn" in reply.text


@pytest.mark.parametrize("message, expected", [
    ("帮我订明天上海到北京的高铁", {"kinds": ["train"], "origin": "上海", "destination": "北京", "date": 1}),
    ("book me a flight from Shanghai to Beijing on 2026-05-01",
     {"kinds": ["flight"], "origin": "Shanghai", "destination": "Beijing", "date": "2026-05-01"}),
    ("book a hotel in kyoto for tomorrow", {"kinds": ["hotel"], "destination": "kyoto", "date": 1}),
    ("帮我订杭州的酒店", {"kinds": ["hotel"], "destination": "杭州"}),
    ("帮我约个浦东机场的接机", {"kinds": ["car"], "destination": "浦东"}),
    # a sleeper or a seat class is a train ticket, not any ticket
    ("下周一北京到哈尔滨的卧铺帮我订一下", {"kinds": ["train"], "origin": "北京", "destination": "哈尔滨", "date": 7}),
    ("book me a sleeper berth from Beijing to Harbin on 2026-05-01",
     {"kinds": ["train"], "origin": "Beijing", "destination": "Harbin", "date": "2026-05-01"}),
    # a route written with a dash, as on tickets and forms, and a numeric month/day
    ("订票：广州-曼谷 6/3去 6/9回", {"kinds": [], "origin": "广州", "destination": "曼谷", "date": "2026-06-03"}),
    ("book a flight Shanghai-Singapore on 5/18", {"kinds": ["flight"], "origin": "Shanghai", "destination": "Singapore",
                                                   "date": "2026-05-18"}),
    ("TA-2026-0001 的机票帮我订一下，去上海", {"kinds": ["flight"], "destination": "上海"}),  # a number is no route
])
def test_booking_slots_come_from_the_request_parser(message, expected):
    from navigo_core.scenes.booking import extract_booking

    today = date(2026, 4, 20)
    if isinstance(expected.get("date"), int):
        expected = expected | {"date": (today + timedelta(days=expected["date"])).isoformat()}
    assert extract_booking(message, today=today) == expected


def test_booking_link_carries_a_relative_date():
    decision, reply = _ask("帮我预订明天上海到北京的高铁票")  # "帮我订…高铁" alone is a train search (trip planning)
    assert decision.scene_id == "booking"
    tomorrow = (date.today() + timedelta(days=1)).isoformat()
    assert reply.payload["slots"]["date"] == tomorrow
    assert {x["kind"] for x in reply.payload["links"]} == {"train", "hotel"}
    train = next(x for x in reply.payload["links"] if x["kind"] == "train")
    assert train["label"] == f"火车票 上海 → 北京 · {tomorrow}"  # the 12306 page takes no query: the label says the day


@pytest.mark.parametrize("message, note", [("帮我约个浦东机场的接机，明早8点落地", "不代订车辆"),
                                           ("need a car to pick Mr. Osei up at Pudong airport tomorrow", "books no cars")])
def test_a_pickup_gets_car_hire_and_no_flight_or_hotel_links(message: str, note: str) -> None:
    """A pickup or a car with a driver was answered with flight, train and hotel links for the airport's city."""
    decision, reply = _ask(message)
    assert decision.scene_id == "booking"
    assert [x["kind"] for x in reply.payload["links"]] == ["car"]
    assert note in reply.text and "openstreetmap.org/search?query=" in reply.text


def test_scenes_registered_with_intents():
    from navigo_core.scenes.registry import get_registry

    reg = get_registry()
    assert "policy_query" in reg.get("policy_query").route.intents
    assert "booking" in reg.get("booking").route.intents
    assert reg.get("policy_query").priority < reg.get("trip_planning").priority
