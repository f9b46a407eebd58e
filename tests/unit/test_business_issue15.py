"""Issue 15 "Business flow": an approved exception is not a violation in the claim; an incomplete draft is
neither compliant nor submittable; an application from a plan carries every excess the plan showed; the
audit trail reads as sentences, not Python dicts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone

import pytest

from navigo_core.business.applications import (
    ApplicationError,
    ApplicationService,
    PolicyExcess,
    card_text,
)
from navigo_core.business.expenses import ExpenseItem, check_items, claim_summary
from navigo_core.business.policy import check_trip, load_policy
from navigo_core.config import Settings
from navigo_core.scenes import GateContext, handle_message
from navigo_core.store import Store
from tests.users import BOSS


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """On SQLite and on PostgreSQL (``store_url``, tests/conftest.py), a fresh database each test."""
    s = Store.from_url(store_url)
    yield s
    s.engine.dispose()


def ctx(store: Store, flow=None) -> GateContext:  # type: ignore[no-untyped-def]
    return GateContext(settings=Settings(database_url=str(store.engine.url), employee_grade=""), store=store,
                       user="me", active_flow=flow)


def say(store: Store, text: str, flow=None):  # type: ignore[no-untyped-def]
    return handle_message(text, ctx(store, flow))


def approved_with_hotel_exception(store: Store, start: date, nights: int = 2, rate: float = 900):
    """An approved Beijing trip whose hotel (``rate`` a night, G1: cap 500) was approved as an exception."""
    policy = load_policy()
    found = check_trip(policy, city="北京", grade="G1", nights=nights, hotel_per_night=rate)
    assert [e.rule_id for e in found] == ["HOTEL-1"]
    svc = ApplicationService(store)
    app = svc.create(owner="me", purpose="client visit", origin="上海", cities=["北京"], aliases=["北京", "Beijing"],
                     start_date=start, end_date=start + timedelta(days=nights), estimated_cost=6000,
                     excesses=[PolicyExcess(**{k: v for k, v in e.model_dump().items() if k in PolicyExcess.model_fields})
                               for e in found])
    svc.submit(app.number, actor="me", justifications="the only hotel near the client")
    return svc.approve(app.number, approver=BOSS, comment="ok")


# --- 1. an approved hotel exception is not flagged again in the claim ------------------------------

def test_an_approved_hotel_exception_is_shown_as_approved_not_as_a_violation(store: Store) -> None:
    start = date(2027, 5, 10)
    app = approved_with_hotel_exception(store, start)
    items = [ExpenseItem(date=start, city="北京", category="hotel", amount=900, receipt=True),
             ExpenseItem(date=start + timedelta(days=1), city="北京", category="hotel", amount=900, receipt=True)]
    checked = check_items(items, load_policy(), "G1", app)
    for c in checked:
        assert c.excesses == [] and c.ok  # not a violation …
        assert [e.rule_id for e in c.approved_exceptions] == ["HOTEL-1"]  # … an approved exception
        assert any(f"approved exception (application {app.number})" in f for f in c.flags("en"))
        assert any(f"已批准的例外（申请 {app.number}）" in f for f in c.flags("zh"))
    summary = claim_summary(checked, application=app)
    assert summary.excesses == [] and [e["rule_id"] for e in summary.approved_exceptions] == ["HOTEL-1", "HOTEL-1"]
    assert all(e["application"] == app.number for e in summary.approved_exceptions)


def test_an_exception_covers_only_what_was_approved(store: Store) -> None:
    start = date(2027, 5, 10)
    app = approved_with_hotel_exception(store, start, nights=1, rate=900)  # approved: 400 over for one night
    [c] = check_items([ExpenseItem(date=start, city="北京", category="hotel", amount=1500, receipt=True)],
                      load_policy(), "G1", app)
    assert [e.amount_over for e in c.approved_exceptions] == [400]  # the approved part …
    assert [(e.rule_id, e.amount_over) for e in c.excesses] == [("HOTEL-1", 600)]  # … and the rest is flagged
    # another city, or an application not approved: no exception
    [other] = check_items([ExpenseItem(date=start, city="上海", category="hotel", amount=900, receipt=True)],
                          load_policy(), "G1", app)
    assert other.approved_exceptions == [] and [e.rule_id for e in other.excesses] == ["HOTEL-1"]
    draft = app.model_copy(update={"status": "submitted"})
    [pending] = check_items([ExpenseItem(date=start, city="北京", category="hotel", amount=900, receipt=True)],
                            load_policy(), "G1", draft)
    assert pending.approved_exceptions == [] and [e.rule_id for e in pending.excesses] == ["HOTEL-1"]


def test_the_chat_claim_names_the_approved_exception(store: Store) -> None:
    yesterday = date.today() - timedelta(days=1)
    app = approved_with_hotel_exception(store, yesterday - timedelta(days=1))
    decision, reply = say(store, "报销昨天在北京的酒店费 900 元")
    assert decision.scene_id == "reimbursement"
    assert f"已批准的例外（申请 {app.number}）" in reply.text and "超出标准" not in reply.text, reply.text
    assert reply.payload["excesses"] == [] and reply.payload["approved_exceptions"][0]["rule_id"] == "HOTEL-1"


# --- 2. a draft missing required fields is incomplete, and cannot be submitted as it is ------------

def test_a_draft_missing_fields_is_incomplete_and_submit_is_refused(store: Store) -> None:
    decision, reply = say(store, "申请5月10日到12日去北京出差")
    assert decision.scene_id == "travel_application"
    number = reply.payload["application"]["number"]
    assert "符合差旅标准" not in reply.text  # not "compliant"
    assert "待补充：事由、出发地、预计费用" in reply.text, reply.text
    assert reply.payload["missing"] == ["purpose", "origin", "estimated_cost"]
    svc = ApplicationService(store)
    assert svc.get(number).missing == ["purpose", "origin", "estimated_cost"]
    assert "incomplete: missing purpose, origin, estimated cost" in card_text(svc.get(number), "en")

    _, refused = say(store, "提交", reply.flow)
    assert svc.get(number).status == "draft"
    assert "事由、出发地、预计费用" in refused.text and refused.asks and refused.flow is not None, refused.text

    _, filled = say(store, "从上海出发，拜访客户，预算3000元", refused.flow)  # the page asked for the fields
    app = svc.get(number)
    assert (app.origin, app.estimated_cost) == ("上海", 3000) and "拜访客户" in app.purpose, filled.text
    assert app.missing == [] and filled.flow is not None
    _, done = say(store, "提交", filled.flow)
    assert svc.get(number).status == "submitted", done.text


def test_submit_refuses_an_incomplete_draft_but_keeps_the_justification(store: Store) -> None:
    svc = ApplicationService(store)
    app = svc.create(owner="me", cities=["北京"], start_date=date(2027, 5, 10), end_date=date(2027, 5, 12),
                     excesses=[PolicyExcess(rule_id="HOTEL-1", rule="Hotel cap", amount_over=200)])
    with pytest.raises(ApplicationError) as exc:
        svc.submit(app.number, actor="me", justifications="near the client")
    assert exc.value.code == "application.error.incomplete"
    assert "purpose, origin, estimated cost" in exc.value.message("en")
    assert "事由、出发地、预计费用" in exc.value.message("zh")
    kept = svc.get(app.number)
    assert kept.status == "draft" and kept.excesses[0].justification == "near the client"  # nothing typed is lost
    svc.modify(app.number, actor="me", purpose="client visit", origin="上海", estimated_cost=3000)
    assert svc.submit(app.number, actor="me").status == "submitted"


# --- 3. an application made from a plan carries every excess the plan showed ----------------------

def test_the_application_from_a_plan_carries_the_meal_excess_too(store: Store) -> None:
    from navigo_core.planner.application import draft_from_plan
    from navigo_core.planner.supervisor import make_planner_deps, plan

    settings = Settings(llm_api_key="", employee_grade="G1", _env_file=None)
    deps = make_planner_deps(settings, clock=lambda: datetime(2027, 4, 1, 9, tzinfo=timezone.utc))
    state = plan("Business trip: luxury 5-star hotel from Shanghai to Beijing 2027-05-10 to 2027-05-12, budget 60000 "
                 "CNY, 1 adult, fine dining", deps)
    shown = {e["rule_id"] for e in state.policy_excesses or []}
    assert {"HOTEL-1", "MEAL-1"} <= shown
    app = ApplicationService(store).create(owner="me", purpose="client visit",
                                           **draft_from_plan(state, load_policy(), "G1", today=date(2027, 4, 1)))
    assert shown <= {e.rule_id for e in app.excesses}
    meal = next(e for e in app.excesses if e.rule_id == "MEAL-1")
    assert meal.amount_over and meal.amount_over > 0
    assert meal.rule_text("en") in card_text(app, "en")


# --- 4. the audit trail reads as sentences in the user's language ----------------------------------

def test_audit_lines_are_readable_and_localised(store: Store) -> None:
    from navigo_core.business.applications import audit_lines

    svc = ApplicationService(store)
    app = svc.create(owner="me", purpose="client visit", origin="上海", cities=["北京"], start_date=date(2027, 5, 10),
                     end_date=date(2027, 5, 12), estimated_cost=3000,
                     excesses=[PolicyExcess(rule_id="HOTEL-1", rule="Hotel cap", rule_zh="住宿标准", amount_over=200)])
    svc.submit(app.number, actor="me", justifications="near the *client*")
    svc.modify(app.number, actor="me", purpose="audit")
    trail = svc.audit(app.number)
    en = audit_lines(trail, "en")
    zh = audit_lines(trail, "zh")
    assert len(en) == len(trail) == 4
    for line in en + zh:
        assert "{" not in line and "'rule_id'" not in line and "[" not in line, line
    assert en[0].endswith(" · me · created — status: — → draft"), en[0]
    assert "justification for HOTEL-1 (Hotel cap): “near the *client*”" in en[1]
    assert "purpose: client visit → audit" in en[3] and "status: submitted, awaiting approval → draft" in en[3]
    assert "超标理由 HOTEL-1（住宿标准）：“near the *client*”" in zh[1] and "事由：client visit → audit" in zh[3]
    assert "创建" in zh[0] and "草稿" in zh[0]
    escaped = audit_lines(trail, "en", escape=lambda s: s.replace("*", "\\*"))
    assert "near the \\*client\\*" in escaped[1]  # user text goes through the caller's escaping
