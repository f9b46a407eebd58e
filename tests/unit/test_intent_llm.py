"""L3 (one structured LLM call) and the embeddings encoder, through real HTTP against the fake OpenAI server."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from navigo_core.config import Settings
from navigo_core.i18n import t
from navigo_core.intent import INTENT_CODES, IntentRouter, make_router
from navigo_core.intent.encoders import EmbeddingsEncoder
from navigo_core.intent.llm_layer import LLMIntentLayer, leaks_identifier
from navigo_core.intent.router import offline_index
from navigo_core.intent.rules import default_rules
from tests.unit.test_intent import l2_sentence
from navigo_core.intent.taxonomy import TAXONOMY
from navigo_core.intent.vector import EncoderThresholds, VectorIndex, load_seeds
from navigo_core.llm import LLMClient
from tests.fakes.openai import FakeOpenAI

pytestmark = pytest.mark.usefixtures("no_internet")
CJK = re.compile(r"[\u4e00-\u9fff]")
NONSENSE = "zxq blorp fnord"  # misses L1 and L2


def reply(*items: tuple[str, str, str, str], primary: str, multi: bool = False, overall: str = "") -> dict[str, Any]:
    return {"intents": [{"intent": i, "target_agent": a, "confidence": c, "reason": r} for i, a, c, r in items],
            "primary_intent": primary, "multi_intent": multi, "overall_reason": overall}


@pytest.fixture
def l3(fake_llm: LLMClient) -> LLMIntentLayer:
    return LLMIntentLayer(fake_llm)


def test_valid_reply_is_used_and_the_prompt_lists_the_taxonomy(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    fake_openai.enqueue_json(reply(("flight_search", "ItineraryPlanAgent", "high", "You want flights to Oslo."),
                                   primary="flight_search", overall="You want flights to Oslo."))
    res = IntentRouter(default_rules(), offline_index(), llm=fake_llm).route(NONSENSE)
    assert res.source == "llm" and res.primary_intent == "flight_search" and res.multi_intent is False
    assert res.intents[0].target_agent == "ItineraryPlanAgent" and res.intents[0].confidence == "high"
    assert [tr.layer for tr in res.trace] == ["L1", "L2", "L3"] and res.trace[2].hit
    assert set(res.latency_ms) == {"L1", "L2", "L3"}
    body = fake_openai.chat_requests[-1]
    system = body["messages"][0]["content"]
    assert body["messages"][0]["role"] == "system" and body["messages"][-1]["content"] == NONSENSE
    for cat in TAXONOMY:
        assert f"`{cat.code}`" in system and cat.target_agent in system
    assert "English" in system and len(fake_openai.chat_requests) == 1  # one call


def test_l1_and_l2_hits_never_call_the_llm(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    router = IntentRouter(default_rules(), offline_index(), llm=fake_llm)
    assert router.route("帮我订一张明天去北京的机票").source == "rule"
    assert router.route(l2_sentence()).source == "vector"
    assert fake_openai.chat_requests == []


def test_multi_intent_keeps_dependency_order_and_primary(fake_openai: FakeOpenAI, l3: LLMIntentLayer) -> None:
    fake_openai.enqueue_json(reply(
        ("travel_application", "itineraryManageAgent", "high", "您要先提交去上海的出差申请。"),
        ("itinerary_planning", "ItineraryPlanAgent", "medium", "审批后规划行程。"),
        ("hotel_search", "infoAgent", "high", "还需要找酒店。"),
        primary="travel_application", multi=False, overall="您有三个需求：申请、规划和住宿。"))
    ans = l3.classify("下周去上海，先申请出差，批了以后规划行程再找酒店", "zh")
    assert [i.intent for i in ans.intents] == ["travel_application", "itinerary_planning", "hotel_search"]
    assert ans.primary_intent == "travel_application" and ans.multi_intent is True  # derived from the items
    assert [i.target_agent for i in ans.intents] == ["ItineraryManageAgent", "ItineraryPlanAgent", "ItineraryPlanAgent"]
    assert ans.intents[1].confidence == "medium" and ans.overall_reason == "您有三个需求：申请、规划和住宿。"


def test_unknown_codes_map_to_unknown(fake_openai: FakeOpenAI, l3: LLMIntentLayer) -> None:
    fake_openai.enqueue_json(reply(("visa_help", "VisaAgent", "very high", "You asked about something."),
                                   primary="visa_help", overall="You asked about something."))
    ans = l3.classify("something odd", "en")
    assert ans.primary_intent == "unknown" and ans.intents[0].intent == "unknown"
    assert ans.intents[0].target_agent == "MasterAgent" and ans.intents[0].confidence == "low"


def test_primary_outside_the_list_falls_back_to_the_first_item(fake_openai: FakeOpenAI, l3: LLMIntentLayer) -> None:
    fake_openai.enqueue_json(reply(("booking", "BookingAgent", "high", "Book it."), ("hotel_search", "x", "low", "Hotel."),
                                   primary="reimbursement", multi=True, overall="Two things."))
    ans = l3.classify("book it and a hotel", "en")
    assert ans.primary_intent == "booking"


def test_reasons_leaking_identifiers_or_in_the_wrong_language_are_replaced(fake_openai: FakeOpenAI,
                                                                         l3: LLMIntentLayer) -> None:
    fake_openai.enqueue_json(reply(("flight_search", "ItineraryPlanAgent", "high", "Routed to ItineraryPlanAgent as flight_search"),
                                   primary="flight_search", overall="intent=flight_search"))
    ans = l3.classify("飞去奥斯陆", "zh")
    for reason in [ans.overall_reason, ans.intents[0].reason]:
        assert not leaks_identifier(reason) and CJK.search(reason) and "ItineraryPlanAgent" not in reason
    assert ans.intents[0].reason == t("intent.reason.llm_default", "zh", label=TAXONOMY[6].label("zh"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_invalid_output_gives_a_graceful_unknown(fake_openai: FakeOpenAI, l3: LLMIntentLayer, lang: str) -> None:
    fake_openai.enqueue("this is not JSON")
    fake_openai.enqueue("{\"still\": \"wrong\"}")  # the one repair turn fails too
    ans = l3.classify("嗯嗯那个" if lang == "zh" else "hmm that thing", lang)
    assert ans.primary_intent == "unknown" and not ans.hit
    assert ans.overall_reason == t("intent.reason.llm_failed", lang)
    assert "LLMInvalidOutput" in ans.detail and len(fake_openai.chat_requests) == 2


def test_timeout_gives_a_graceful_unknown_and_the_trace_records_it(fake_openai: FakeOpenAI,
                                                                    fake_llm_settings: Callable[..., Settings]) -> None:
    fake_openai.set_fault(latency_s=2.0)
    with LLMClient(fake_llm_settings(llm_timeout_s=0.3)) as client:
        res = IntentRouter(default_rules(), offline_index(), llm=client).route(NONSENSE)
    assert res.primary_intent == "unknown" and res.source == "llm"
    assert res.overall_reason == t("intent.reason.llm_failed", "en")
    assert "LLMTimeout" in res.trace[-1].detail and not res.trace[-1].hit
    assert "LLMTimeout" not in res.overall_reason


def test_http_error_gives_a_graceful_unknown(fake_openai: FakeOpenAI, l3: LLMIntentLayer) -> None:
    fake_openai.set_fault(status=500)
    ans = l3.classify("hmm", "en")
    assert ans.primary_intent == "unknown" and "LLMHTTPError" in ans.detail


@pytest.mark.parametrize(("lang", "needle"), [("zh", "城市"), ("en", "city")])
def test_offline_l3_answers_unknown_with_a_hint_in_the_users_language(lang: str, needle: str) -> None:
    ans = LLMIntentLayer(None).classify("随便" if lang == "zh" else "whatever", lang)
    assert ans.primary_intent == "unknown" and not ans.hit and ans.detail.startswith("offline")
    assert ans.overall_reason == t("intent.reason.offline", lang) and needle in ans.overall_reason
    assert bool(CJK.search(ans.overall_reason)) == (lang == "zh")


def test_json_object_strategy_also_works(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    fake_openai.enqueue("```json\n" + __import__("json").dumps(
        reply(("greeting", "MasterAgent", "high", "你在打招呼。"), primary="greeting", overall="你在打招呼。"),
        ensure_ascii=False) + "\n```")
    ans = LLMIntentLayer(fake_llm, strategy="json_object").classify("哈哈哈嘿", "zh")
    assert ans.primary_intent == "greeting"
    assert fake_openai.chat_requests[-1]["response_format"] == {"type": "json_object"}


# --- embeddings encoder -----------------------------------------------------------------

def test_embeddings_encoder_matches_the_nearest_seed(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    seeds = load_seeds()[:40]
    index = VectorIndex.build(EmbeddingsEncoder(fake_llm, "fake-embed", batch_size=16), seeds,
                              EncoderThresholds(threshold=0.9, high=0.95, medium=0.9))
    assert len(fake_openai.embedding_requests) == 3  # 40 seeds in batches of 16, embedded once
    m = index.nearest(seeds[7].text)
    assert m.seed_index == 7 and m.score == pytest.approx(1.0) and m.hit and m.confidence == "high"
    sims = index.encoder.scores([seeds[0].text, seeds[1].text])
    assert sims.shape == (2, 40) and np.allclose(np.diag(sims[:, :2]), 1.0)
    assert fake_openai.embedding_requests[-1]["model"] == "fake-embed"


def test_make_router_uses_embeddings_when_configured(fake_openai: FakeOpenAI, fake_llm: LLMClient,
                                                     fake_llm_settings: Callable[..., Settings],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # a few hundred seeds are enough to show which index is built (all 13k took the fake server 16 s to embed)
    import navigo_core.intent.router as router_module

    monkeypatch.setattr(router_module, "load_seeds", lambda: load_seeds()[::40])
    monkeypatch.setattr(router_module, "_embedding_indexes", {})  # the small index is not kept for other tests
    router = make_router(fake_llm_settings(intent_encoder="embeddings"), llm=fake_llm)
    assert router.l2 is not None and router.l2.encoder_name == "embeddings" and router.llm.online
    assert router.l2.thresholds.threshold == pytest.approx(0.75)  # the embeddings entry, not TF-IDF's


def test_embedding_errors_at_query_time_are_an_l2_miss(fake_openai: FakeOpenAI, fake_llm: LLMClient) -> None:
    index = VectorIndex.build(EmbeddingsEncoder(fake_llm, "fake-embed"), load_seeds()[:10],
                              EncoderThresholds(threshold=0.1, high=0.9, medium=0.1))
    fake_openai.set_fault(status=503)
    res = IntentRouter(default_rules(), index, llm=fake_llm).route(NONSENSE)
    l2 = res.trace[1]
    assert l2.layer == "L2" and not l2.hit and "error" in l2.detail
    assert res.source == "llm" and res.primary_intent == "unknown"  # L3 failed too, gracefully


def test_embedding_errors_at_build_time_fall_back_to_tfidf(fake_openai: FakeOpenAI,
                                                           fake_llm_settings: Callable[..., Settings]) -> None:
    fake_openai.set_fault(status=500)
    settings = fake_llm_settings(intent_encoder="embeddings", llm_embedding_model="broken-model")
    with LLMClient(settings) as client:
        router = make_router(settings, llm=client)
    assert router.l2 is not None and router.l2.encoder_name == "tfidf-lr"


def test_codes_in_the_prompt_match_the_taxonomy() -> None:
    from navigo_core.intent.llm_layer import system_prompt

    listed = re.findall(r"^- `([a-z_]+)`", system_prompt("zh"), flags=re.M)
    assert listed == list(INTENT_CODES) and "Simplified Chinese" in system_prompt("zh")
