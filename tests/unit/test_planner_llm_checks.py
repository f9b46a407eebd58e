"""The planner's LLM paths against a scripted model that misbehaves as small real models do.

The plan summary that drops dates, calls the estimated total the budget, adds the Great Wall to
Hangzhou or answers in English for a Chinese plan; rationales in the wrong language or naming
another city; the injection scan's false positives on ordinary plans (advisory, logged); a block
by the LLM alone that accuses nobody; the server's parallel slots; a bound named in the log.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any

import pytest

from navigo_core.config import Settings
from navigo_core.i18n import t
from navigo_core.llm import LLMClient
from navigo_core.planner.supervisor import make_planner_deps, plan
from tests.fakes.openai import FakeOpenAI

pytestmark = pytest.mark.usefixtures("no_internet")

ZH = "上海出发去杭州，5月1日到5日，两个大人，预算6000元，喜欢喝茶和徒步"
EN = "From Shanghai to Hangzhou, May 1 to May 5, 2 adults, budget 6000 CNY, we like tea and hiking"
RAIN = "Ignore the rain, we go anyway: from Shanghai to Hangzhou, May 1 to May 5, 2 adults, budget 6000 CNY"
NOW = datetime(2027, 4, 1, 9, 0, tzinfo=timezone.utc)


def clock() -> datetime:
    return NOW


@pytest.fixture(autouse=True)
def _detector(pin_injection_detector) -> None:
    """The learned detector pinned at what it gives these plain requests (these tests are about the LLM)."""
    pin_injection_detector(0.02)


@pytest.fixture(scope="module")
def settings() -> Settings:
    return Settings(_env_file=None, flights_provider="offline", weather_provider="offline", places_provider="gazetteer")


def responder(*, summary: Any = None, rationales: Any = None, scan: dict | None = None):
    """A fake model: ``summary`` / ``rationales`` are texts or functions of the request's user message."""
    def answer(body: dict) -> str:
        schema = json.dumps(body.get("response_format") or body.get("messages"))
        user = body["messages"][-1]["content"]
        if "travel_style" in schema:
            return json.dumps({"travel_style": "relaxed", "prioritized_interests": ["tea"], "preferred_pace": "slow",
                               "accommodation_preference": "mid"})
        if "rationales" in schema:
            value = rationales(user) if callable(rationales) else rationales
            return json.dumps({"rationales": value if value is not None else ["Hangzhou suits a tea lover."]},
                              ensure_ascii=False)
        if "is_injection" in schema:
            return json.dumps(scan or {"is_injection": False, "confidence": 0.9, "reason": ""})
        value = summary(user) if callable(summary) else summary
        return json.dumps({"summary": value if value is not None else user}, ensure_ascii=False)

    return answer


def run(fake_openai: FakeOpenAI, fake_llm_settings, settings: Settings, text: str, **llm_settings: Any):
    with LLMClient(fake_llm_settings(**llm_settings)) as llm:
        return plan(text, make_planner_deps(settings, clock=clock, llm=llm))


def log_of(state, agent: str):
    return next(e for e in state.decision_log if e.agent == agent)


# --- the plan summary ----------------------------------------------------------------------

@pytest.mark.parametrize("text,rewrite,problem", [
    (EN, lambda u: "A calm five days of tea and hills in Hangzhou.", "missing date"),
    (EN, lambda u: re.sub(r"estimated total ([\d,]+)", r"a budget of \1", u), "called the budget"),
    (EN, lambda u: u + " Walk the Great Wall on day 2.", "new name Great Wall"),
    (EN, lambda u: u + " Finish in Beijing.", "new place Beijing"),
    (ZH, lambda u: "A five-day trip to Hangzhou, 2027-05-01 to 2027-05-05, about 5,510 CNY, within budget.",
     "language"),
])
def test_an_unfaithful_summary_keeps_the_template(fake_openai: FakeOpenAI, fake_llm_settings, settings, text,
                                                  rewrite, problem) -> None:
    fake_openai.responder = responder(summary=rewrite)
    state = run(fake_openai, fake_llm_settings, settings, text)
    entry = log_of(state, "synthesizer")
    assert state.status == "done" and state.final_plan.source == "rules" and entry.mode == "llm_fallback"
    assert any("LLM summary rejected" in ev and problem in ev for ev in entry.evidence), entry.evidence
    assert state.final_plan.summary == entry.output_summary
    assert "2027-05-01" in state.final_plan.summary


def test_a_faithful_summary_is_used_and_the_check_logged(fake_openai: FakeOpenAI, fake_llm_settings, settings) -> None:
    fake_openai.responder = responder(summary=lambda u: "五天的杭州之旅，慢慢喝茶：" + u)
    state = run(fake_openai, fake_llm_settings, settings, ZH)
    entry = log_of(state, "synthesizer")
    assert state.final_plan.source == "llm", entry.evidence
    assert state.final_plan.source == "llm" and state.final_plan.summary.startswith("五天的杭州之旅")
    assert any("checked" in ev for ev in entry.evidence)


# --- destination rationales -------------------------------------------------------------------

@pytest.mark.parametrize("rationale,problem", [
    ("Xi'an is famous for hot pot.", "language"),
    ("杭州和成都一样适合喝茶。", "names 成都"),
])
def test_a_bad_rationale_keeps_the_template(fake_openai: FakeOpenAI, fake_llm_settings, settings, rationale,
                                           problem) -> None:
    fake_openai.responder = responder(rationales=[rationale])
    state = run(fake_openai, fake_llm_settings, settings, ZH)
    entry = log_of(state, "destination")
    assert state.destination_candidates[0].rationale.startswith(t("planner.dest.user_choice", "zh", city="杭州"))
    assert entry.mode == "llm_fallback" and any(problem in ev for ev in entry.evidence), entry.evidence


# --- the injection scan is advisory ------------------------------------------------------------

@pytest.mark.parametrize("text", [EN, RAIN])
def test_the_scan_alone_does_not_refuse_an_ordinary_plan(fake_openai: FakeOpenAI, fake_llm_settings, settings,
                                                         text, pin_injection_detector) -> None:
    pin_injection_detector(0.02)  # what the shipped detector gives these texts (about 0.01–0.02)
    fake_openai.responder = responder(scan={"is_injection": True, "confidence": 0.97, "reason": "says ignore"})
    state = run(fake_openai, fake_llm_settings, settings, text)
    assert state.status == "done" and not state.safety_flags
    entry = log_of(state, "risk_guard_llm")
    assert "advisory" in entry.output_summary and any("advisory" in ev for ev in entry.evidence)


def test_a_block_by_the_scan_alone_accuses_nobody(fake_openai: FakeOpenAI, fake_llm_settings, settings,
                                                  pin_injection_detector) -> None:
    pin_injection_detector(0.02)
    fake_openai.responder = responder(scan={"is_injection": True, "confidence": 0.97, "reason": "odd"})
    state = run(fake_openai, fake_llm_settings, settings, EN, llm_scan_block_confidence=0.95)
    assert state.status == "refused" and state.safety_flags == ["BLOCKED_PROMPT_INJECTION:llm"]
    assert state.final_plan.summary == t("planner.refusal.llm_scan", "en")
    assert "instructions" not in state.final_plan.summary
    assert any("confidence 0.97" in ev for ev in log_of(state, "risk_guard_llm").evidence)


# --- bounds and slots -------------------------------------------------------------------------

def test_the_planner_sends_no_more_calls_than_the_server_has_slots(fake_openai: FakeOpenAI, fake_llm_settings,
                                                                   settings) -> None:
    fake_openai.responder = responder()
    fake_openai.compute_s = 0.05
    state = run(fake_openai, fake_llm_settings, settings, EN, llm_parallel=1, llm_deadline_s=30)
    assert state.status == "done" and len(fake_openai.chat_requests) >= 4
    assert fake_openai.max_in_flight == 1


def test_a_bound_is_named_in_the_decision_log(fake_openai: FakeOpenAI, fake_llm_settings, settings) -> None:
    fake_openai.responder = responder()
    fake_openai.compute_s = 2.0  # every answer is slower than the deadline
    state = run(fake_openai, fake_llm_settings, settings, EN, llm_deadline_s=0.3, llm_timeout_s=5)
    assert state.status == "done" and state.final_plan.source == "rules"
    for agent in ("preference", "destination", "synthesizer"):
        entry = log_of(state, agent)
        assert entry.mode == "llm_fallback"
        assert any("deadline: total bound of 0.3 s" in ev for ev in entry.evidence), entry.evidence
