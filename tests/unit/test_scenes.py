"""The scene gate: each step, their order, the first five scenes, reasons and latency."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

import pytest

from navigo_core.errors import InputError, NavigoError, ProviderTimeout
from navigo_core.providers.weather import DailyWeather
from navigo_core.i18n import catalog, t
from navigo_core.intent.models import IntentItem, IntentResult
from navigo_core.route.models import RouteRequest
from navigo_core.scenes import (
    GATE_STEPS,
    INTENT_CODES,
    ActiveFlow,
    GateContext,
    GateRule,
    SceneDescriptor,
    SceneRegistry,
    SceneRegistryError,
    SceneReply,
    SceneRoute,
    gate_classify,
    get_registry,
    handle_message,
    is_switch,
    make_gate_context,
    text_of,
)
from navigo_core.scenes.trip_planning import trip_slots
from navigo_core.scenes.weather import extract_weather_query
from navigo_core.store import Store
from navigo_core.understand import RouteReading, parse_route, update_route

SCENE_IDS = {"greeting", "off_topic", "route_planning", "weather", "trip_planning"}


# --- helpers -------------------------------------------------------------------

def intent_result(*codes: str, lang: str = "en", source: str = "rule") -> IntentResult:
    items = [IntentItem(intent=c, target_agent="MasterAgent", confidence="high", reason="…") for c in codes]
    return IntentResult(intents=items, primary_intent=codes[0], multi_intent=len(codes) > 1, overall_reason="…",
                        source=source, score=1.0, latency_ms={"L1": 0.1}, lang=lang)  # type: ignore[arg-type]


class StubRouter:
    """Returns a fixed IntentResult (``codes``) and records the texts it was asked about."""

    def __init__(self, *codes: str) -> None:
        self.codes = codes or ("unknown",)
        self.calls: list[str] = []

    def route(self, text: str) -> IntentResult:
        self.calls.append(text)
        return intent_result(*self.codes)


class FailingRouter:
    def route(self, text: str) -> IntentResult:
        raise ProviderTimeout(provider="LLM", seconds=1)


class FakeWeather:
    """The planner's weather protocol (navigo_core.providers.weather): coordinates and dates in, days out."""

    name = "fake-weather"
    estimated = False

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.calls: list[tuple[float, float, date, date]] = []

    def forecast(self, lat: float, lon: float, start: date, end: date, *, today: date) -> list[DailyWeather]:
        self.calls.append((round(lat, 1), round(lon, 1), start, end))
        if self.fail:
            raise ProviderTimeout(provider="Weather", seconds=2)
        return [DailyWeather(date=start, weather_code=0, summary="weather.code.clear", temp_min_c=15, temp_max_c=24,
                             precipitation_probability=10, available=True, provider=self.name)]


def ctx(router: Any = None, **kw: Any) -> GateContext:
    return GateContext(router=router, **kw)


def decide(message: str, router: Any = None, **kw: Any):
    return gate_classify(message, ctx(router, **kw))


# --- registry basics -------------------------------------------------------------

def test_first_scenes_are_registered_with_sane_declarations() -> None:
    reg = get_registry()
    assert SCENE_IDS <= set(reg.ids())
    assert reg.fallback_scene().scene_id == "greeting"
    assert reg.model_scene().scene_id == "trip_planning"
    assert [s.scene_id for s in reg.off_topic_scenes()] == ["off_topic"]
    for scene_id in SCENE_IDS:
        scene = reg.get(scene_id)
        for lang in ("en", "zh"):
            assert scene.label_text(lang) and "scene." not in scene.label_text(lang)
            assert "scene." not in scene.capability_text(lang) and "scene." not in scene.prompt_text(lang)
    assert reg.by_flow("trip_plan").scene_id == "trip_planning"
    assert reg.by_flow("route_plan").scene_id == "route_planning"
    assert "route planning" in reg.prompt_fragments("en").lower()


def test_intent_codes_match_the_routers_taxonomy() -> None:
    taxonomy = pytest.importorskip("navigo_core.intent.taxonomy")
    assert set(INTENT_CODES) == set(taxonomy.INTENT_CODES)


def test_descriptor_validation_and_duplicates() -> None:
    def handler(message: str, context: GateContext) -> SceneReply:
        return SceneReply(scene_id="x", text="x")

    with pytest.raises(ValueError, match="snake_case"):
        SceneDescriptor(scene_id="Bad Id", label="x", handler=handler)
    with pytest.raises(ValueError, match="bad regex"):
        GateRule(patterns=("(unclosed",))
    with pytest.raises(ValueError, match="unknown intent codes"):
        SceneRoute(intents=("flight_serach",))
    with pytest.raises(ValueError, match="flow_id"):
        SceneDescriptor(scene_id="x", label="x", handler=handler, can_resume=True)
    reg = SceneRegistry()
    a = SceneDescriptor(scene_id="dup", label="x", handler=handler)
    reg.register(a, source="a.py")
    assert reg.register(a) is a  # the same descriptor again is a no-op
    with pytest.raises(SceneRegistryError, match=r"duplicate scene id 'dup'.*a\.py.*b\.py"):
        reg.register(SceneDescriptor(scene_id="dup", label="y", handler=handler), source="b.py")
    with pytest.raises(SceneRegistryError, match="unknown scene id"):
        reg.get("nope")


def test_every_scene_text_key_exists_in_both_languages() -> None:
    for scene in get_registry().scenes():
        for value in (scene.label, scene.capability, scene.prompt_fragment):
            if isinstance(value, str) and value.startswith("scene."):
                entry = catalog()[value]
                assert entry["en"] and entry["zh"]
    for day in (0, 1, 2):
        assert f"scene.weather.day.{day}" in catalog()
    for slot in ("destination", "origin", "dates", "duration_days", "travellers", "budget"):
        assert f"scene.trip_planning.slot.{slot}" in catalog()
    for ask in ("destination", "when", "travellers", "budget"):
        assert f"scene.trip_planning.ask.{ask}" in catalog()
    assert text_of({"en": "E {x}", "zh": "Z {x}"}, "zh", x=1) == "Z 1"
    assert text_of("plain text", "zh") == "plain text"


# --- step 1: off-topic -------------------------------------------------------------

@pytest.mark.parametrize("message, topic", [
    ("Write a Python function that sorts a list", "coding"),
    ("I get a NullPointerException in my Java code", "coding"),
    ("帮我写一段Python代码，读取CSV文件", "coding"),
    ("我的代码报错了怎么办", "coding"),
    ("Solve the equation 2x + 3 = 7", "maths"),
    ("can you help with my maths homework?", "maths"),
    ("解方程 x^2 - 5x + 6 = 0", "maths"),
    ("这道数学题怎么做：求导 y = x^3", "maths"),
    ("Which stocks should I buy this week?", "finance"),
    ("any stock tips for Tesla?", "finance"),
    ("推荐几只能涨的股票", "finance"),
    ("比特币现在值得买吗", "finance"),
    ("Give me a recipe for mapo tofu", "cooking"),
    ("how do I bake sourdough bread", "cooking"),
    ("红烧肉的做法", "cooking"),
    ("菜谱推荐一下", "cooking"),
])
def test_off_topic_gate_catches_clear_cases_in_both_languages(message: str, topic: str) -> None:
    router = StubRouter("itinerary_planning")
    context = ctx(router)
    decision, reply = handle_message(message, context)
    assert (decision.step, decision.scene_id, decision.route) == ("off_topic", "off_topic", "off_topic")
    assert router.calls == []  # decided before the router
    lang = "zh" if re.search(r"[\u4e00-\u9fff]", message) else "en"
    assert decision.lang == reply.lang == lang
    assert decision.reason == t("scene.reason.off_topic", lang)
    assert t(f"scene.off_topic.topic.{topic}", lang) in reply.text  # says what it can't do …
    assert t("scene.route_planning.capability", lang) in reply.text  # … and what it can
    assert reply.payload["topic"] == topic


@pytest.mark.parametrize("message", [
    "What is the IATA airport code for Pudong?",
    "上海的机场代码是什么",
    "Best restaurants and street food in Chengdu",
    "成都有什么特色美食和小吃",
    "Write a script for my trip: plan a route from Shanghai to Hangzhou via Suzhou",
    "Is the stock market open in Tokyo when I travel there?",
    "I'd like to plan a trip to Paris",
    "从上海出发经过苏州、嘉兴到杭州的路线",
    "hello",
    "weather in Paris",
])
def test_off_topic_gate_is_conservative(message: str) -> None:
    decision = decide(message, StubRouter("unknown"))
    assert decision.scene_id != "off_topic"
    assert decision.trace[0].step == "off_topic" and not decision.trace[0].hit


# --- step 2: resume ------------------------------------------------------------------

def test_resume_continues_an_unfinished_flow_before_rules_and_router() -> None:
    router = StubRouter("hotel_search")
    flow = ActiveFlow(flow_id="trip_plan", scene_id="trip_planning", slots={"destination": "Hangzhou"}, turns=1)
    decision, reply = handle_message("3 people, for 4 days next week", ctx(router, active_flow=flow))
    assert (decision.step, decision.scene_id, decision.flow_id) == ("resume", "trip_planning", "trip_plan")
    assert router.calls == [] and decision.intent is None
    assert decision.reason == t("scene.reason.resume", "en", label=t("scene.trip_planning.label", "en"))
    assert reply.payload["slots"] == {"destination": "Hangzhou", "travellers": 3, "duration_days": 4,
                                      "dates": "next week"}
    assert reply.flow is not None and reply.flow.turns == 2 and reply.payload["missing"] == ["budget"]
    # a bare answer to the last question fills it and completes the flow
    decision, reply = handle_message("预算5000元", ctx(router, active_flow=reply.flow))
    assert decision.step == "resume" and reply.payload["complete"] and reply.flow is None
    assert reply.payload["slots"]["budget"] == "5000元"


def test_resume_gives_way_to_a_clear_switch() -> None:
    flow = ActiveFlow(flow_id="trip_plan", scene_id="trip_planning", slots={"destination": "杭州"})
    # another scene's rule gate: a switch
    decision, reply = handle_message("What's the weather in Paris tomorrow?", ctx(active_flow=flow))
    assert (decision.step, decision.scene_id, decision.left_flow) == ("rule", "weather", "trip_plan")
    assert reply.flow is None
    # a switch phrase, in both languages
    for message in ("never mind", "算了，换个话题"):
        decision = decide(message, StubRouter("unknown"), active_flow=flow)
        assert decision.step != "resume" and decision.left_flow == "trip_plan"
    assert is_switch("never mind that") and is_switch("不用了") and not is_switch("杭州，三天")
    # a finished flow, or one no resumable scene owns, is not resumed
    assert decide("3 people", active_flow=flow.model_copy(update={"done": True})).step != "resume"
    assert decide("3 people", active_flow="no_such_flow").step != "resume"


def test_off_topic_beats_resume_and_keeps_the_flow() -> None:
    flow = ActiveFlow(flow_id="trip_plan", scene_id="trip_planning", slots={"destination": "杭州"})
    decision, reply = handle_message("推荐几只股票", ctx(active_flow=flow))
    assert (decision.step, decision.scene_id, decision.left_flow) == ("off_topic", "off_topic", None)
    assert reply.flow == flow  # a digression: the clarification is still open


# --- step 3: rules ------------------------------------------------------------------------

@pytest.mark.parametrize("message, scene_id", [
    ("hi", "greeting"),
    ("Good morning!", "greeting"),
    ("你好，在吗？", "greeting"),
    ("what can you do?", "greeting"),
    ("你能做什么", "greeting"),
    ("plan a route from Shanghai to Hangzhou via Suzhou and Jiaxing", "route_planning"),
    ("从上海出发经过苏州、嘉兴到杭州的路线", "route_planning"),
    ("上海→苏州→嘉兴→杭州", "route_planning"),
    ("visit Suzhou, Wuxi and Hangzhou from Shanghai and back", "route_planning"),
    ("from boston to denver via chicago", "route_planning"),
    ("weather in Hangzhou tomorrow", "weather"),
    ("杭州明天天气怎么样", "weather"),
    ("上海会下雨吗", "weather"),
    ("plan a 3-day trip to Hangzhou", "trip_planning"),
    ("帮我规划杭州三日游", "trip_planning"),
])
def test_rule_gates_pick_the_scene(message: str, scene_id: str) -> None:
    decision = decide(message)
    assert (decision.step, decision.scene_id) == ("rule", scene_id)


def test_rule_gate_beats_the_intent_router() -> None:
    router = StubRouter("itinerary_planning")
    decision = decide("plan a route from Shanghai to Hangzhou via Suzhou", router)
    assert (decision.step, decision.scene_id) == ("rule", "route_planning")
    # the router is not asked; the decision carries the rule's intent
    assert router.calls == [] and decision.intent is not None and decision.intent.source == "rule"
    # "hi, plan a route …" is not swallowed by the greeting rule (anchored)
    assert decide("hi, plan a route from A to B via C").scene_id == "route_planning"


def test_off_topic_beats_rule_gates() -> None:
    def handler(message: str, context: GateContext) -> SceneReply:
        return SceneReply(scene_id="snake", text="🐍")

    reg = SceneRegistry()
    reg.discover()
    reg.register(SceneDescriptor(scene_id="snake", label="snakes", handler=handler, priority=1,
                                 gate=GateRule(patterns=(r"\bpython\b",))), source="test")
    assert gate_classify("tell me about the python in the zoo", ctx(registry=reg)).scene_id == "snake"
    decision = gate_classify("write a python function to sort a list", ctx(registry=reg))
    assert (decision.step, decision.scene_id) == ("off_topic", "off_topic")


# --- step 4: intent router ------------------------------------------------------------------

@pytest.mark.parametrize("message, codes, scene_id", [
    # messages no rule takes: the router's intent picks the scene that declares it
    ("heyyy :)", ("greeting",), "greeting"),
    ("👋👋", ("greeting",), "greeting"),
    ("sort out something nice for us", ("itinerary_planning",), "trip_planning"),
    ("那个早一点的有吗", ("flight_search",), "booking"),
    ("somewhere near the Bund", ("hotel_search",), "booking"),
    ("上周的打车票据", ("reimbursement",), "reimbursement"),
    ("any news, boss?", ("approval_query",), "approval_query"),
    ("Tokyo: the rules, and a bed", ("general_info", "hotel_search"), "booking"),
])
def test_intent_router_maps_intents_to_scenes(message: str, codes: tuple[str, ...], scene_id: str) -> None:
    router = StubRouter(*codes)
    # the store is passed in: the record-keeping scenes (approval_query) read it from the context
    decision, reply = handle_message(message, ctx(router, store=Store.from_url("sqlite:///:memory:"), user="me"))
    assert (decision.step, decision.scene_id) == ("intent", scene_id)
    assert router.calls == [message] and decision.intent is not None
    assert decision.intent.primary_intent == codes[0]
    lang = decision.lang
    assert decision.reason == t("scene.reason.intent", lang, label=get_registry().get(scene_id).label_text(lang))
    assert reply.scene_id == scene_id


def test_back_office_intents_reach_their_own_scenes() -> None:
    decision, reply = handle_message("我要报销上周出差的打车费", ctx(StubRouter("reimbursement")))
    assert decision.scene_id == "reimbursement" and reply.payload.get("page") == "reimbursement"
    decision, _ = handle_message("Please rebook my ticket", ctx(StubRouter("booking")))
    assert decision.scene_id != "off_topic"  # bookings have their own scene (not off-topic any more)


def test_general_info_without_weather_words_is_not_weather() -> None:
    decision = decide("what time zone is Tokyo in", StubRouter("general_info"))
    assert decision.scene_id != "weather"
    assert (decision.step, decision.scene_id) == ("model", "trip_planning")


# --- step 5: model route and fallback ------------------------------------------------------------

def test_model_route_takes_unmatched_on_topic_messages() -> None:
    # by a travel signal word, with the router saying unknown
    decision = decide("I'd like a holiday somewhere warm", StubRouter("unknown"))
    assert (decision.step, decision.scene_id, decision.route) == ("model", "trip_planning", "model")
    assert decision.reason == t("scene.reason.model", "en", label=t("scene.trip_planning.label", "en"))
    # by a known intent no scene claims
    decision, reply = handle_message("Tokyo: the things to know", ctx(StubRouter("general_info")))
    assert (decision.step, decision.scene_id) == ("model", "trip_planning")
    assert reply.payload["handoff"] == "plan"


@pytest.mark.parametrize("message, lang", [("asdf qwer", "en"), ("嗯嗯", "zh"), ("hmm, not sure", "en")])
def test_fallback_answers_unclear_messages_with_help(message: str, lang: str) -> None:
    decision, reply = handle_message(message, ctx(StubRouter("unknown")))
    assert (decision.step, decision.scene_id) == ("fallback", "greeting")
    assert decision.reason == t("scene.reason.fallback", lang)
    assert reply.payload["help"] is True and reply.lang == lang
    assert reply.text.startswith(t("scene.greeting.help", lang).split("\n")[0])


def test_empty_message_and_failing_router_fall_back_safely() -> None:
    assert gate_classify("   ", ctx()).step == "fallback"
    decision = decide("a b c", FailingRouter())
    assert decision.step == "fallback" and decision.intent is None
    intent_trace = next(s for s in decision.trace if s.step == "intent")
    assert not intent_trace.hit and "ProviderTimeout" in intent_trace.detail
    # no router at all: step 4 is skipped
    assert next(s for s in decide("a b c").trace if s.step == "intent").detail == "no router"


# --- route planning ----------------------------------------------------------------------------

@pytest.mark.parametrize("message, origin, destination, stops", [
    ("plan a route from Shanghai to Hangzhou via Suzhou and Jiaxing", "Shanghai", "Hangzhou", ["Suzhou", "Jiaxing"]),
    ("from A to B via C, D", "A", "B", ["C", "D"]),
    ("from A to B, then to C and finally to D", "A", "D", ["B", "C"]),
    ("Plan a route to Hangzhou from Shanghai via Suzhou", "Shanghai", "Hangzhou", ["Suzhou"]),
    ("how do I get from Paris to Lyon via Dijon?", "Paris", "Lyon", ["Dijon"]),
    ("start at Berlin, stop at Leipzig and Dresden, end at Munich", "Berlin", "Munich", ["Leipzig", "Dresden"]),
    ("I need to visit Suzhou, Wuxi and Changzhou, starting from Shanghai and ending in Nanjing",
     "Shanghai", "Nanjing", ["Suzhou", "Wuxi", "Changzhou"]),
    ("from Paris, France to Lyon via Dijon, please", "Paris, France", "Lyon", ["Dijon"]),
    ("from Portland to Andorra via Tripoli", "Portland", "Andorra", ["Tripoli"]),
    ("Shanghai -> Suzhou -> Hangzhou", "Shanghai", "Hangzhou", ["Suzhou"]),
    ("A→B→C", "A", "C", ["B"]),
    ("route from 31.23,121.47 to 30.27,120.15 via 31.30,120.58", "31.23,121.47", "30.27,120.15", ["31.30,120.58"]),
    ("from Shanghai via Suzhou and Wuxi and back to Shanghai", "Shanghai", "Shanghai", ["Suzhou", "Wuxi"]),
    ("从上海出发经过苏州、嘉兴到杭州的路线", "上海", "杭州", ["苏州", "嘉兴"]),
    ("从上海出发，经过苏州、嘉兴，到杭州", "上海", "杭州", ["苏州", "嘉兴"]),
    ("从A出发，经过B、C，到D", "A", "D", ["B", "C"]),
    ("从上海到杭州，途经苏州和嘉兴", "上海", "杭州", ["苏州", "嘉兴"]),
    ("上海到杭州，途经苏州和嘉兴", "上海", "杭州", ["苏州", "嘉兴"]),
    ("起点上海，终点杭州，途经苏州、嘉兴", "上海", "杭州", ["苏州", "嘉兴"]),
    ("从上海经苏州、无锡去南京", "上海", "南京", ["苏州", "无锡"]),
    ("帮我规划一条从上海到南京的路线，中途经过苏州、无锡和常州", "上海", "南京", ["苏州", "无锡", "常州"]),
    ("从上海出发经过苏州回到上海", "上海", "上海", ["苏州"]),
    ("上海→苏州→嘉兴→杭州", "上海", "杭州", ["苏州", "嘉兴"]),
    ("我要从和田出发到喀什", "和田", "喀什", []),
])
def test_route_extraction(message: str, origin: str, destination: str, stops: list[str]) -> None:
    found = parse_route(message)
    assert (found.origin, found.destination, found.stops) == (origin, destination, stops)


@pytest.mark.parametrize("message, origin, destination, stops, round_trip", [
    ("from boston to denver via chicago", "boston", "denver", ["chicago"], False),
    ("plan a drive from boston to denver via chicago tomorrow please", "boston", "denver", ["chicago"], False),
    ("visit Suzhou, Wuxi and Hangzhou from Shanghai and back", "Shanghai", "Shanghai", ["Suzhou", "Wuxi", "Hangzhou"],
     True),
    ("visit suzhou, wuxi and hangzhou from shanghai and back", "shanghai", "shanghai", ["suzhou", "wuxi", "hangzhou"],
     True),
    ("上海→苏州→无锡→杭州", "上海", "杭州", ["苏州", "无锡"], False),
    ("从上海出发经过苏州和无锡然后回来", "上海", "上海", ["苏州", "无锡"], True),
    ("plan a route from chicago to st. louis via springfield, illinois and peoria", "chicago", "st. louis",
     ["springfield, illinois", "peoria"], False),
    ("from Austin to Denver via Dallas, TX, Texas, Oklahoma", "Austin", "Denver", ["Dallas, TX", "Texas", "Oklahoma"],
     False),
])
def test_parse_route_any_case_round_trips_and_chains(message: str, origin: str, destination: str, stops: list[str],
                                                     round_trip: bool) -> None:
    found = parse_route(message)
    assert (found.origin, found.destination, found.stops, found.round_trip) == (origin, destination, stops, round_trip)
    assert found.request() == {"origin": origin, "destination": destination, "stops": stops}


def test_parse_route_strategy_is_not_a_stop_and_bare_answers_fill_the_ends() -> None:
    found = parse_route("Route: Shanghai to Hangzhou via Suzhou, fastest")
    assert (found.stops, found.strategy) == (["Suzhou"], "fastest")
    previous = parse_route("plan a route from Shanghai, stopping at Suzhou")
    assert (previous.origin, previous.destination, previous.stops) == ("Shanghai", "", ["Suzhou"])
    merged = update_route(previous, "hangzhou")
    assert (merged.origin, merged.destination, merged.stops) == ("Shanghai", "hangzhou", ["Suzhou"])
    merged = update_route(RouteReading(), "上海，无锡，杭州")
    assert (merged.origin, merged.destination, merged.stops) == ("上海", "杭州", ["无锡"])


def test_route_reply_payload_is_a_route_request() -> None:
    decision, reply = handle_message("从北京到天津的最短路线，途经廊坊", ctx())
    assert decision.scene_id == "route_planning" and not reply.asks and reply.flow is None
    assert reply.payload["handoff"] == "route"
    req = RouteRequest(**reply.payload["route_request"])
    assert (req.origin, req.destination, req.stops, req.strategy) == ("北京", "天津", ["廊坊"], "shortest")
    assert reply.text.startswith(t("scene.route_planning.summary", "zh", origin="北京", destination="天津", stops="廊坊"))
    _, reply = handle_message("fastest route: Shanghai -> Suzhou -> Wuxi", ctx())
    assert RouteRequest(**reply.payload["route_request"]).strategy == "fastest"
    _, reply = handle_message("从上海到杭州怎么走", ctx())  # no stops: the reply says to add one
    assert reply.payload["route_request"]["stops"] == [] and t("scene.route_planning.add_stops", "zh") in reply.text


def test_route_planning_asks_for_what_is_missing_and_resumes() -> None:
    decision, reply = handle_message("plan a route", ctx())
    assert decision.scene_id == "route_planning" and reply.asks
    assert reply.text == t("scene.route_planning.ask_both", "en")
    assert reply.payload["missing"] == ["origin", "destination"] and reply.flow.flow_id == "route_plan"
    decision, reply = handle_message("from Shanghai to Hangzhou via Suzhou", ctx(active_flow=reply.flow))
    assert decision.step == "resume" and reply.flow is None
    assert reply.payload["route_request"] == {"origin": "Shanghai", "destination": "Hangzhou", "stops": ["Suzhou"]}

    # origin and a stop first, then a bare destination
    _, reply = handle_message("plan a route from Shanghai, stopping at Suzhou", ctx())
    assert reply.payload["missing"] == ["destination"]
    assert reply.text.startswith(t("scene.route_planning.ask_destination", "en", origin="Shanghai"))
    decision, reply = handle_message("Hangzhou", ctx(active_flow=reply.flow))
    assert decision.step == "resume"
    assert reply.payload["route_request"] == {"origin": "Shanghai", "destination": "Hangzhou", "stops": ["Suzhou"]}

    # Chinese: nothing, then "上海，杭州"
    _, reply = handle_message("帮我规划一条路线", ctx())
    assert reply.text == t("scene.route_planning.ask_both", "zh")
    _, reply = handle_message("上海，杭州", ctx(active_flow=reply.flow))
    assert reply.payload["route_request"] == {"origin": "上海", "destination": "杭州", "stops": []}


# --- weather ------------------------------------------------------------------------------------

@pytest.mark.parametrize("message, place, day", [
    ("weather in Paris tomorrow", "Paris", 1),
    ("will it rain in New York tomorrow?", "New York", 1),
    ("Paris weather", "Paris", 0),
    ("How's the weather looking?", "", 0),
    ("明天杭州的天气", "杭州", 1),
    ("请问上海后天下雨吗", "上海", 2),
    ("天气怎么样", "", 0),
    ("what's the weather in kyoto tomorrow", "kyoto", 1),
    ("will it snow in paris the day after tomorrow?", "paris", 2),
    ("三亚现在温度多少", "三亚", 0),
])
def test_weather_query_extraction(message: str, place: str, day: int) -> None:
    assert extract_weather_query(message) == (place, day)


def test_weather_offline_reply_in_both_languages() -> None:
    decision, reply = handle_message("What's the weather in Paris tomorrow?", ctx())
    assert decision.scene_id == "weather" and reply.lang == "en"
    assert reply.text == t("scene.weather.offline_place", "en", place="Paris")
    assert reply.payload == {"place": "Paris", "day": 1, "provider": None}
    _, reply = handle_message("杭州明天天气怎么样", ctx())
    assert reply.lang == "zh" and reply.text == t("scene.weather.offline_place", "zh", place="杭州")
    _, reply = handle_message("天气怎么样", ctx())
    assert reply.text == t("scene.weather.offline", "zh") and not reply.asks


def test_weather_with_a_provider() -> None:
    weather = FakeWeather()
    tomorrow = date.today() + timedelta(days=1)
    _, reply = handle_message("上海明天天气怎么样", ctx(weather=weather))
    assert len(weather.calls) == 1 and weather.calls[0][2:] == (tomorrow, tomorrow)  # tomorrow only
    assert weather.calls[0][:2] == pytest.approx((31.2, 121.5), abs=0.2)  # Shanghai
    assert "上海" in reply.text and "晴" in reply.text and "24" in reply.text and "10%" in reply.text
    assert reply.payload["provider"] == "fake-weather" and reply.payload["report"]["temp_max_c"] == 24
    # no place: ask, then the next message is the place
    _, reply = handle_message("how will the weather be tomorrow?", ctx(weather=weather))
    assert reply.asks and reply.flow.flow_id == "weather"
    decision, reply = handle_message("Lisbon", ctx(weather=weather, active_flow=reply.flow))
    assert decision.step == "resume" and weather.calls[-1][2] == tomorrow and "Lisbon" in reply.text
    assert weather.calls[-1][:2] == pytest.approx((38.7, -9.1), abs=0.2)  # Lisbon
    # an ambiguous name is not replaced by one of its places: it is asked about, with the candidates
    _, reply = handle_message("weather forecast for Springfield tomorrow", ctx(weather=weather))
    assert reply.asks and "Springfield" in reply.text and len(reply.payload["candidates"]) >= 2
    assert len(weather.calls) == 2
    # provider errors become a message in the user's language
    _, reply = handle_message("weather in Oslo", ctx(weather=FakeWeather(fail=True)))
    assert reply.error and reply.text == ProviderTimeout(provider="Weather", seconds=2).message("en")


# --- greeting, trip planning ------------------------------------------------------------------------

@pytest.mark.parametrize("message, lang", [("hello", "en"), ("你好", "zh"), ("Good evening, NaviGo!", "en"),
                                           ("您好，请问你能做什么？", "zh")])
def test_greeting_reply_is_in_the_users_language_and_lists_capabilities(message: str, lang: str) -> None:
    _, reply = handle_message(message, ctx())
    assert reply.scene_id == "greeting" and reply.lang == lang and not reply.payload["help"]
    assert reply.text.startswith(t("scene.greeting.hello", lang).split("\n")[0])
    for scene_id in ("route_planning", "trip_planning", "weather"):
        assert t(f"scene.{scene_id}.capability", lang) in reply.text


def test_language_can_be_fixed_by_the_context() -> None:
    decision, reply = handle_message("hi", ctx(lang="zh"))
    assert decision.lang == reply.lang == "zh" and reply.text.startswith("你好")


@pytest.mark.parametrize("message, expected", [
    ("plan a 3-day trip to Hangzhou for 2 people with a budget of 5000 yuan",
     {"duration_days": 3, "travellers": 2, "budget": "5000 yuan", "destination": "Hangzhou"}),
    ("帮我规划杭州三日游", {"duration_days": 3, "destination": "杭州"}),
    ("下周我们两个人去成都玩五天，预算一万",
     {"duration_days": 5, "travellers": 2, "budget": "一万", "dates": "下周", "destination": "成都"}),
    ("从上海出发去三亚度假", {"origin": "上海", "destination": "三亚"}),
    ("family of 4 to Paris in July", {"travellers": 4, "dates": "in July", "destination": "Paris"}),
])
def test_trip_slot_extraction(message: str, expected: dict[str, Any]) -> None:
    assert trip_slots(message) == expected


@pytest.mark.parametrize("message, expected", [
    ("trip to kyoto from osaka 2027-04-02 to 2027-04-05, 3 adults, budget $3,000",
     {"destination": "kyoto", "origin": "osaka", "dates": "2027-04-02 to 2027-04-05", "duration_days": 4,
      "travellers": 3, "budget": "$3,000"}),
    ("五一和老婆去成都玩三天，人均3000", {"destination": "成都", "dates": "五一", "duration_days": 3, "travellers": 2,
                               "budget": "3000"}),
])
def test_trip_slots_come_from_the_request_parser(message: str, expected: dict[str, Any]) -> None:
    assert trip_slots(message, today=date(2026, 4, 20)) == expected


def test_trip_planning_bare_answers_fill_the_slot_asked_for() -> None:
    _, reply = handle_message("帮我规划一次旅行", ctx())
    assert reply.flow is not None and reply.payload["missing"][0] == "destination"
    _, other = handle_message("三个人", ctx(active_flow=reply.flow))  # says something itself: not a place
    assert other.payload["slots"] == {"travellers": 3}
    _, reply = handle_message("杭州", ctx(active_flow=reply.flow))
    assert reply.payload["slots"] == {"destination": "杭州"} and reply.payload["missing"][0] == "when"
    _, reply = handle_message("3", ctx(active_flow=reply.flow))
    assert reply.payload["slots"]["duration_days"] == 3 and reply.payload["missing"][0] == "travellers"
    _, reply = handle_message("两个人", ctx(active_flow=reply.flow))
    assert reply.payload["slots"]["travellers"] == 2 and reply.payload["missing"] == ["budget"]
    _, reply = handle_message("6000", ctx(active_flow=reply.flow))
    assert reply.payload["complete"] and reply.payload["slots"]["budget"] == "6000"


def test_trip_planning_reply_starts_a_clarification() -> None:
    decision, reply = handle_message("帮我规划杭州三日游", ctx())
    assert decision.scene_id == "trip_planning" and reply.lang == "zh" and reply.asks
    assert reply.text.startswith(t("scene.trip_planning.start", "zh"))
    assert "杭州" in reply.text and reply.text.endswith(t("scene.trip_planning.ask.travellers", "zh"))
    assert reply.payload["handoff"] == "plan" and reply.payload["slots"] == {"destination": "杭州", "duration_days": 3}
    assert reply.flow is not None and reply.flow.flow_id == "trip_plan"


# --- reasons, trace, latency ---------------------------------------------------------------------------

REASON_CASES: list[tuple[str, dict[str, Any]]] = [
    ("hello", {}), ("你好", {}), ("write a python script", {}), ("推荐几只股票", {}),
    ("plan a route from A to B via C", {}), ("从上海出发经过苏州到杭州", {}), ("weather in Paris", {}),
    ("3 people", {"active_flow": ActiveFlow(flow_id="trip_plan")}), ("三个人", {"active_flow": "trip_plan"}),
    ("how humid is Singapore", {"router": StubRouter("general_info")}),
    ("我要报销", {"router": StubRouter("reimbursement")}),
    ("那个早一点的有吗", {"router": StubRouter("flight_search")}), ("any news, boss?", {"router": StubRouter("approval_query")}),
    ("I want a holiday", {"router": StubRouter("unknown")}), ("asdf", {"router": StubRouter("unknown")}),
    ("嗯", {}), ("", {}),
]


def test_reasons_never_contain_internal_identifiers() -> None:
    # ids and codes are snake_case (single-word ones such as "weather" are plain words in a label)
    forbidden = {w for w in (*get_registry().ids(), *INTENT_CODES) if "_" in w} | {"trip_plan", "route_plan", "scene."}
    assert {"route_planning", "off_topic", "itinerary_planning"} <= forbidden
    steps = set()
    for message, kw in REASON_CASES:
        decision = decide(message, **kw)
        steps.add(decision.step)
        assert decision.reason and "_" not in decision.reason and "{" not in decision.reason, decision.reason
        assert not any(word in decision.reason for word in forbidden), decision.reason
        lang = "zh" if re.search(r"[\u4e00-\u9fff]", message) else "en"
        assert bool(re.search(r"[\u4e00-\u9fff]", decision.reason)) == (lang == "zh"), (message, decision.reason)
    assert steps == set(GATE_STEPS)  # every step was exercised


def test_trace_follows_the_step_order_and_latency_is_recorded() -> None:
    router = StubRouter("unknown")
    decision = decide("asdf", router)
    assert [s.step for s in decision.trace] == ["off_topic", "resume", "rule", "intent", "model", "fallback"]
    order = {s: i for i, s in enumerate(GATE_STEPS)}
    latencies = []
    for message, kw in REASON_CASES * 5:
        decision = decide(message, **kw)
        positions = [order[s.step] for s in decision.trace]
        assert positions == sorted(positions) and decision.trace[-1].step == decision.step
        assert decision.latency_ms >= 0 and all(s.latency_ms >= 0 for s in decision.trace)
        latencies.append(decision.latency_ms)
    assert max(latencies) > 0  # measured, not left at zero (timings themselves: benchmarks/bench_intent.py)
    assert decision.model_dump(mode="json")["latency_ms"] == decision.latency_ms


@pytest.mark.parametrize("exc, failed", [(InputError("route.no_stops"), False),
                                         (ProviderTimeout(provider="Weather", seconds=2), True)])
def test_handler_errors_with_a_user_message_become_replies_failed_only_when_not_about_the_input(
        exc: NavigoError, failed: bool) -> None:
    def handler(message: str, context: GateContext) -> SceneReply:
        raise exc

    reg = SceneRegistry()
    reg.discover()
    reg.register(SceneDescriptor(scene_id="broken", label="x", handler=handler, priority=1,
                                 gate=GateRule(patterns=(r"\bbroken\b",))))
    decision, reply = handle_message("this is broken", GateContext(registry=reg))
    assert decision.scene_id == "broken" and reply.error is failed and reply.text == exc.message("en")


# --- defaults and the real offline router ------------------------------------------------------------

def test_make_gate_context_builds_offline_defaults() -> None:
    from navigo_core.config import get_settings

    context = make_gate_context(get_settings(llm_api_key=""))
    assert context.weather is not None and context.weather.name == "offline"  # the planner's provider too
    assert context.lang is None and context.active_flow is None
    assert context.llm is None
    assert context.router is not None and context.router.rules is not None and context.router.l2 is not None
    flow_context = make_gate_context(get_settings(llm_api_key=""), router=StubRouter(), active_flow="trip_plan")
    assert flow_context.active_flow == ActiveFlow(flow_id="trip_plan")


def test_with_weather_online_the_chat_answers_from_the_planners_provider(fake_open_meteo) -> None:
    """Issue 12: with WEATHER_ONLINE=true the planner got Open-Meteo but the chat said no weather service was
    configured (two WeatherProvider protocols). One protocol now; the gate context gets the same provider."""
    from navigo_core.config import Settings

    tomorrow = date.today() + timedelta(days=1)
    fake_open_meteo.days = {tomorrow: {"weather_code": 61, "temperature_2m_max": 19.0, "temperature_2m_min": 12.0,
                                       "precipitation_probability_max": 70}}
    settings = Settings(llm_api_key="", weather_online=True, open_meteo_url=fake_open_meteo.url)
    context = make_gate_context(settings)
    _, reply = handle_message("杭州明天天气怎么样", context)
    assert reply.scene_id == "weather" and not reply.error
    assert "杭州" in reply.text and "小雨" in reply.text and "19" in reply.text and "70%" in reply.text
    assert len(fake_open_meteo.requests) == 1
    offline = make_gate_context(Settings(llm_api_key=""))
    _, reply = handle_message("杭州明天天气怎么样", offline)
    assert reply.text == t("scene.weather.offline_place", "zh", place="杭州")
    assert len(fake_open_meteo.requests) == 1  # offline sends nothing


def _real_router_or_skip():
    from navigo_core.config import get_settings

    return make_gate_context(get_settings(llm_api_key="", llm_embedding_model="", intent_encoder="tfidf"))


@pytest.mark.usefixtures("no_internet")
@pytest.mark.parametrize("message, allowed", [
    ("你好", {"greeting"}),
    ("hello there", {"greeting"}),
    ("帮我查一下下周去北京的机票", {"booking"}),
    ("I need a hotel in Shanghai for two nights", {"booking"}),
    ("我要报销上周出差的打车费", {"reimbursement"}),
    ("从上海出发经过苏州、嘉兴到杭州的路线", {"route_planning"}),
    ("Write a Python function that sorts a list", {"off_topic"}),
])
def test_gate_with_the_real_offline_router(message: str, allowed: set[str]) -> None:
    context = _real_router_or_skip()
    assert context.router is not None
    decision, reply = handle_message(message, context)
    assert decision.scene_id in allowed, (decision.step, decision.scene_id, decision.detail)
    assert reply.text and decision.reason


def test_dates_are_not_mistaken_for_a_route_destination() -> None:
    """"从上海出发，5月1日到5日" is a trip with dates, not a route to "5日"."""
    assert decide("帮我规划杭州之旅，从上海出发，5月1日到5日，两个大人，预算6000元").scene_id == "trip_planning"
    assert decide("从上海出发经过苏州、嘉兴到杭州的路线").scene_id == "route_planning"


def test_public_classify_is_the_chats_first_message_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 10's public API: ``navigo_core.scenes.classify(text, *, lang=None)`` returns the GateDecision
    the chat would act on, with a fresh default context (offline here: no LLM configured)."""
    import inspect

    from navigo_core import scenes
    from navigo_core.scenes import GateDecision, defaults

    params = inspect.signature(scenes.classify).parameters
    assert list(params) == ["text", "lang"] and params["lang"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["lang"].default is None
    monkeypatch.setenv("LLM_API_KEY", "")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    defaults.reset()
    try:
        decision = scenes.classify("I want to go to Kyoto in April")
        assert isinstance(decision, GateDecision) and decision.scene_id == "trip_planning"
        assert scenes.classify("帮我订明天上海到北京的高铁", lang="zh").scene_id == "booking"
        assert decision.step == "rule" and defaults.gate_context().llm is None
    finally:
        defaults.reset()
