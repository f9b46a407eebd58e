"""The gate's use of the learned layer (L2) where the rules are not sure:

* a rule yields to L2's business intent or booking (``OVERRIDE_TARGETS``) from ``OVERRIDE``; a *topic* rule (a flight
  or a hotel is named: ``flight.search``) already from ``TOPIC_OVERRIDE``, also to an ordinary travel intent;
* when nothing decided, L2's best business-travel guess (probability ≥ ``GUESS``) answers instead of
  the trip dialogue, and the caption says it is a guess;
* a message with no on-topic sign at all gets a guess only from ``UNSIGNALLED_GUESS`` on, else the help;
* an ordinary travel intent (a trip wish, sights, a flight, train or hotel search) is taken from ``TRAVEL_GUESS`` on,
  when the message is on-topic or names a place.

The L2 layer here is a stub with fixed probabilities, so each case tests the gate alone.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from navigo_core.intent.classifier import (
    GUESS,
    OVERRIDABLE,
    TRAVEL_GUESS,
    TRAVEL_INTENTS,
    OVERRIDE,
    OVERRIDE_TARGETS,
    TOPIC_OVERRIDE,
    UNSIGNALLED_GUESS,
    UNSIGNALLED_INTENTS,
)
from navigo_core.intent.models import IntentItem, IntentResult, LayerTrace
from navigo_core.scenes import gate_classify
from navigo_core.scenes.defaults import gate_context


class StubL2:
    overridable = OVERRIDABLE
    override_targets = OVERRIDE_TARGETS
    override = OVERRIDE
    topic_override = TOPIC_OVERRIDE
    guess = GUESS
    unsignalled_guess = UNSIGNALLED_GUESS
    unsignalled_intents = UNSIGNALLED_INTENTS
    travel_guess = TRAVEL_GUESS
    travel_intents = TRAVEL_INTENTS

    def __init__(self, probs: dict[str, float]) -> None:
        self.probs = probs

    def probabilities(self, text: str) -> dict[str, float]:
        return dict(self.probs)


class UnsureRouter:
    """A router whose every layer missed (as the offline router below its thresholds)."""

    def __init__(self, probs: dict[str, float]) -> None:
        self.l2 = StubL2(probs)

    def route(self, text: str) -> IntentResult:
        # what the offline router answers when L2 is below its thresholds: the offline L3's "unknown"
        item = IntentItem(intent="unknown", target_agent="InfoAgent", confidence="low", reason="…")
        return IntentResult(intents=[item], primary_intent="unknown", overall_reason="…", source="llm", score=0.0,
                            trace=[LayerTrace(layer="L2", hit=False, intent="itinerary_planning", score=0.3, latency_ms=0.1),
                                   LayerTrace(layer="L3", hit=False, intent="unknown", latency_ms=0.0)])


def decide(text: str, probs: dict[str, float], lang: str = "en"):
    context = replace(gate_context(), router=UnsureRouter(probs), lang=lang, active_flow=None)
    d = gate_classify(text, context)
    assert not any("router failed" in s.detail for s in d.trace), d.trace  # the stub is a valid router
    return d


def test_a_sure_business_intent_overrules_a_topic_rule() -> None:
    # "flight" makes flight.search (a topic rule) match; L2 is sure it is a question about the order
    text = "the flight Anna is on, was it the one I told you about"
    low = decide(text, {"travel_order_query": TOPIC_OVERRIDE - 0.1, "flight_search": 0.05})
    assert (low.scene_id, low.detail) == ("booking", "flight.search")
    sure = decide(text, {"travel_order_query": TOPIC_OVERRIDE + 0.1, "flight_search": 0.05})
    assert sure.scene_id == "travel_order_query"
    assert sure.detail == "flight.search>l2"


def test_an_action_rule_yields_only_to_a_surer_answer() -> None:
    # 订机票 is book.flight, an action rule: it yields to L2 only from OVERRIDE, a topic rule already from TOPIC_OVERRIDE
    assert TOPIC_OVERRIDE < OVERRIDE
    text = "帮我订一张周五去成都的机票"
    d = decide(text, {"travel_order_query": OVERRIDE - 0.05, "flight_search": 0.01}, lang="zh")
    assert (d.scene_id, d.step, d.detail) == ("booking", "rule", "book.flight")
    d = decide(text, {"travel_order_query": OVERRIDE + 0.05, "flight_search": 0.01}, lang="zh")
    assert (d.scene_id, d.detail) == ("travel_order_query", "book.flight>l2")


def test_only_a_business_intent_or_booking_overrules_a_rule() -> None:
    # an approval rule; L2 sure of a weather question: the rule stands (the rules are better on the public intents)
    assert "general_info" not in OVERRIDE_TARGETS and "booking" in OVERRIDE_TARGETS
    text = "has my Hangzhou travel request been approved yet"
    d = decide(text, {"general_info": 0.95, "approval_query": 0.01})
    assert (d.scene_id, d.step) == ("approval_query", "rule")
    d = decide(text, {"booking": OVERRIDE + 0.05, "approval_query": 0.01})
    assert d.scene_id == "booking" and d.detail.endswith(">l2")


@pytest.mark.parametrize("prob, scene", [(GUESS + 0.05, "reimbursement"), (GUESS - 0.05, "trip_planning")])
def test_the_best_guess_answers_when_nothing_decided(prob: float, scene: str) -> None:
    # no rule matches; "trip" is a travel signal, so without a guess the trip dialogue would take it
    text = "about the Porto trip, the thing with the dinner receipts, what now"
    d = decide(text, {"reimbursement": prob, "policy_query": 0.1})
    assert d.scene_id == scene
    if scene == "reimbursement":
        assert (d.step, d.detail) == ("intent", "guess reimbursement")
        assert d.reason.startswith("Probably about")
    else:
        assert d.step == "model"


def test_a_guess_needs_a_business_or_travel_intent_and_a_travel_message() -> None:
    # a confident guess of another intent (weather, directions) is not taken: the trip dialogue asks instead
    travel = "about the Porto trip, the thing with the dinner receipts, what now"
    assert decide(travel, {"general_info": 0.9}).step == "model"
    # a message with no travel signal and no topical intent gets the help reply below UNSIGNALLED_GUESS
    assert UNSIGNALLED_GUESS is not None and GUESS < UNSIGNALLED_GUESS < 1
    d = decide("what vaccines does a kitten need", {"policy_query": UNSIGNALLED_GUESS - 0.05})
    assert (d.scene_id, d.step) == ("greeting", "fallback")
    # and at a non-business intent however sure
    d = decide("what vaccines does a kitten need", {"weather_query": 0.95})
    assert (d.scene_id, d.step) == ("greeting", "fallback")


@pytest.mark.parametrize("text, lang, intent", [
    ("when do i get repaid", "en", "reimbursement"),
    ("改TA事由", "zh", "travel_modify"),
    ("下周一北京到哈尔滨的卧铺帮我订一下", "zh", "booking"),
])
def test_a_sure_guess_answers_a_message_without_a_travel_sign(text: str, lang: str, intent: str) -> None:
    # no rule, no signal keyword, the router undecided: L2's probability >= UNSIGNALLED_GUESS decides
    assert UNSIGNALLED_GUESS is not None and intent in UNSIGNALLED_INTENTS
    d = decide(text, {intent: UNSIGNALLED_GUESS + 0.05, "policy_query": 0.05}, lang=lang)
    assert (d.scene_id, d.step, d.detail) == (intent, "intent", f"guess {intent}")


def test_the_guess_caption_is_in_the_message_language() -> None:
    d = decide("关于波尔图那趟出差，晚饭那些票据，现在怎么办", {"reimbursement": GUESS + 0.1}, lang="zh")
    assert d.scene_id == "reimbursement"
    assert d.reason.startswith("看起来是关于")


def test_the_chat_caption_data_of_a_guess_names_the_guess() -> None:
    from navigo_core.chat import decision_info

    d = decide("about the Porto trip, the thing with the dinner receipts, what now", {"reimbursement": GUESS + 0.05})
    info = decision_info(d)
    assert info is not None
    assert (info["by"], info["intent"], info["scene"]) == ("guess", "reimbursement", "reimbursement")
    low = decision_info(decide("about the Porto trip, the thing with the dinner receipts, what now",
                               {"reimbursement": GUESS - 0.05}))
    assert low is not None and (low["by"], low["intent"]) == ("none", None)


@pytest.mark.parametrize("text, lang, intent, scene", [
    ("Lisbon with my sister, seafood and sunsets, ideas?", "en", "itinerary_planning", "trip_planning"),
    ("西安除了城墙还能去哪转转，带着老人", "zh", "attractions_query", "trip_planning"),
    ("anything nonstop out of Denver to Honolulu on the weekend", "en", "flight_search", "booking"),
])
def test_a_travel_guess_with_a_place_answers_instead_of_the_help(text: str, lang: str, intent: str, scene: str) -> None:
    # no rule matches; the parser finds a place; L2's travel intent >= TRAVEL_GUESS takes the message to its scene
    assert TRAVEL_GUESS is not None and intent in TRAVEL_INTENTS
    d = decide(text, {intent: TRAVEL_GUESS + 0.05, "unknown": TRAVEL_GUESS - 0.1}, lang=lang)
    assert (d.scene_id, d.step, d.detail) == (scene, "intent", f"guess {intent}")
    assert d.reason.startswith("Probably about" if lang == "en" else "看起来是关于")
    below = decide(text, {intent: TRAVEL_GUESS - 0.05, "unknown": TRAVEL_GUESS - 0.1}, lang=lang)
    assert below.step != "intent"


@pytest.mark.parametrize("text", ["which of his paintings are the most famous ones", "哪种钢琴适合弹古典"])
def test_a_travel_guess_needs_a_place_or_a_travel_word(text: str) -> None:
    # L2 may read "most famous" or "适合" as sights; without a place or a travel word the help answers
    d = decide(text, {"attractions_query": 0.9, "unknown": 0.05}, lang="zh" if "钢琴" in text else "en")
    assert (d.scene_id, d.step) == ("greeting", "fallback")


@pytest.mark.parametrize("text, lang", [("a week in Lisbon in May with my wife, flying out of Boston", "en"),
                                        ("春节带爸妈去三亚五天，从北京飞过去，帮忙排一下", "zh")])
def test_a_trip_wish_that_names_its_flight_overrules_the_topic_rule(text: str, lang: str) -> None:
    # flight.search only says a flight is named: L2 sure enough of a trip to plan takes it to the trip dialogue
    sure = decide(text, {"itinerary_planning": TOPIC_OVERRIDE + 0.1, "flight_search": 0.2}, lang=lang)
    assert (sure.scene_id, sure.step, sure.detail) == ("trip_planning", "rule", "flight.search>l2")
    unsure = decide(text, {"itinerary_planning": TOPIC_OVERRIDE - 0.1, "flight_search": 0.3}, lang=lang)
    assert (unsure.scene_id, unsure.detail) == ("booking", "flight.search")
