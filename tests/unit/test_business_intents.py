"""Business-travel intents on their own labelled set (tests/data/business_intents.jsonl), offline router.

The set holds ≥ 30 utterances (half Chinese, half English) for each of the eight business intents
(travel_application, travel_cancel, travel_modify, approval_query, travel_order_query, booking,
reimbursement, policy_query) plus hard negatives from the neighbouring intents (hotel_search,
itinerary_planning, flight/train search …). Routing runs L1 + L2 with offline L3 (= unknown).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from navigo_core.intent import IntentRouter
from navigo_core.intent.evaluate import decide, format_report, load_labelled, report_from, run_layers
from navigo_core.intent.router import offline_index
from navigo_core.intent.rules import default_rules

pytestmark = pytest.mark.usefixtures("no_internet")

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "business_intents.jsonl"
BUSINESS = ("travel_application", "travel_cancel", "travel_modify", "approval_query", "travel_order_query",
            "booking", "reimbursement", "policy_query")
MIN_OVERALL = 0.95
MIN_PER_INTENT = 0.90


@pytest.fixture(scope="module")
def decisions():  # type: ignore[no-untyped-def]
    router = IntentRouter(default_rules(), offline_index())
    rows = load_labelled(DATA)
    return decide(run_layers(router, rows), router.l2.thresholds if router.l2 is not None else None)


def test_set_has_30_rows_per_business_intent_half_chinese_half_english() -> None:
    rows = load_labelled(DATA)
    counts = Counter((r.intent, r.lang) for r in rows)
    for code in BUSINESS:
        zh, en = counts[(code, "zh")], counts[(code, "en")]
        assert zh + en >= 30 and zh >= 15 and en >= 15, (code, zh, en)
    assert len({r.text for r in rows}) == len(rows), "duplicate utterances"
    negatives = {r.intent for r in rows} - set(BUSINESS)
    assert {"hotel_search", "itinerary_planning"} <= negatives  # hard negatives from the neighbours


def test_business_intent_accuracy(decisions, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    rep = report_from(decisions)
    per_intent: dict[str, tuple[int, int]] = {}
    for code in sorted({d.row.intent for d in decisions}):
        mine = [d for d in decisions if d.row.intent == code]
        per_intent[code] = (sum(d.correct for d in mine), len(mine))
    wrong = [f"  {d.row.intent} -> {d.pred} ({d.layer}): {d.row.text}" for d in decisions if not d.correct]
    with capsys.disabled():
        print("\n" + format_report(rep, title="Business-travel intents (offline L1+L2)"))
        print("\n| intent | correct | rows | accuracy |\n|---|---:|---:|---:|")
        for code, (ok, n) in per_intent.items():
            print(f"| {code} | {ok} | {n} | {ok / n:.1%} |")
        if wrong:
            print("misrouted:\n" + "\n".join(wrong))
    assert rep.accuracy >= MIN_OVERALL, (rep.accuracy, wrong)
    for code in BUSINESS:
        ok, n = per_intent[code]
        assert ok / n >= MIN_PER_INTENT, (code, ok, n, wrong)


@pytest.mark.parametrize(("text", "intent"), [
    ("报销政策是什么", "policy_query"),
    ("帮我报销", "reimbursement"),
    ("what's my hotel cap in Shanghai", "policy_query"),
    ("find hotels in Shanghai", "hotel_search"),
    ("取消我的杭州出差申请", "travel_cancel"),
    ("我的杭州出差审批到哪了", "approval_query"),
    ("查一下我的出差单", "travel_order_query"),
    ("把出差日期改到下周", "travel_modify"),
    ("申请下周去北京出差", "travel_application"),
    ("规划下周去北京的行程", "itinerary_planning"),
])
def test_hard_negative_pairs(text: str, intent: str) -> None:
    router = IntentRouter(default_rules(), offline_index())
    assert router.route(text).primary_intent == intent
