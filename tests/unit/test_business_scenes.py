"""Business-travel scenes in English and Chinese: application (draft → submit), modify, cancel (with
ambiguity), approval / order queries, reimbursement."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta

import pytest

from navigo_core.business.applications import ApplicationService
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
    return GateContext(settings=Settings(database_url=str(store.engine.url)), store=store, user="me", active_flow=flow)


def say(store: Store, text: str, flow=None):  # type: ignore[no-untyped-def]
    return handle_message(text, ctx(store, flow))


def app_for(store: Store, city: str, aliases: list[str], status: str = "draft"):  # type: ignore[no-untyped-def]
    svc = ApplicationService(store)
    start = date.today() + timedelta(days=20)
    app = svc.create(owner="me", cities=[city], aliases=aliases, start_date=start, end_date=start + timedelta(days=2),
                     purpose="client meeting", origin="上海", estimated_cost=3000)  # complete: it can be submitted
    if status in ("submitted", "approved"):
        app = svc.submit(app.number, actor="me")
    if status == "approved":
        app = svc.approve(app.number, approver=BOSS, comment="ok")
    return app


@pytest.mark.parametrize("text, submit, word", [
    ("申请{m}月{d}日到{d2}日从上海去杭州出差，拜访客户，预算3000元", "提交", "出差申请"),
    ("New travel application: from Shanghai to Hangzhou, {month} {d} to {d2}, client meeting, budget 3000 CNY",
     "submit", "Travel application"),
])
def test_application_drafts_then_submits(store: Store, text: str, submit: str, word: str) -> None:
    # a trip five weeks ahead, whatever today is (booked later than the policy's advance rule asks, it would need
    # a justification before it is submitted)
    d1 = date.today() + timedelta(days=35)
    d1 = d1 - timedelta(days=2) if d1.day > 26 else d1
    decision, reply = say(store, text.format(m=d1.month, month=d1.strftime("%B"), d=d1.day, d2=d1.day + 2))
    assert decision.scene_id == "travel_application", decision
    assert word in reply.text and reply.asks and reply.flow is not None and reply.payload["card"]
    number = reply.payload["application"]["number"]
    assert ApplicationService(store).get(number).status == "draft"
    decision, reply = say(store, submit, reply.flow)
    assert (decision.step, decision.scene_id) == ("resume", "travel_application")
    assert number in reply.text and reply.flow is None
    assert ApplicationService(store).get(number).status == "submitted"


def test_application_asks_for_the_destination(store: Store) -> None:
    _, reply = say(store, "我要申请出差")
    assert reply.asks and "去哪里" in reply.text and reply.flow is not None
    _, reply = say(store, "杭州，下周一到周三，拜访客户", reply.flow)
    assert reply.payload["application"]["cities"] == ["杭州"]


@pytest.mark.parametrize("text, city_aliases", [
    ("取消我的杭州出差", ["杭州", "Hangzhou"]), ("cancel my Hangzhou trip", ["Hangzhou", "杭州"])])
def test_cancel_by_description(store: Store, text: str, city_aliases: list[str]) -> None:
    app = app_for(store, city_aliases[0], city_aliases)
    other = app_for(store, "北京", ["北京", "Beijing"])
    decision, reply = say(store, text)
    assert decision.scene_id == "travel_cancel" and app.number in reply.text
    svc = ApplicationService(store)
    assert svc.get(app.number).status == "cancelled" and svc.get(other.number).status == "draft"
    assert svc.audit(app.number)[-1].action == "cancel"


@pytest.mark.parametrize("text, answer", [("取消我的杭州出差", "第二个：{n}"), ("cancel my Hangzhou trip", "{n}")])
def test_cancel_ambiguity_asks_never_guesses(store: Store, text: str, answer: str) -> None:
    a, b = app_for(store, "杭州", ["杭州", "Hangzhou"]), app_for(store, "杭州", ["杭州", "Hangzhou"])
    decision, reply = say(store, text)
    assert decision.scene_id == "travel_cancel" and reply.asks and not reply.error
    assert a.number in reply.text and b.number in reply.text
    svc = ApplicationService(store)
    assert svc.get(a.number).status == svc.get(b.number).status == "draft"  # nothing done yet
    decision, reply = say(store, answer.format(n=b.number), reply.flow)
    assert decision.scene_id == "travel_cancel"
    assert svc.get(b.number).status == "cancelled" and svc.get(a.number).status == "draft"


@pytest.mark.parametrize("text", ["把我的杭州出差改到{d1}到{d2}", "change my Hangzhou trip to {d1} - {d2}"])
def test_modify_dates(store: Store, text: str) -> None:
    app = app_for(store, "杭州", ["杭州", "Hangzhou"], status="submitted")
    d1 = date.today() + timedelta(days=40)
    d2 = d1 + timedelta(days=3)
    decision, reply = say(store, text.format(d1=d1.isoformat(), d2=d2.isoformat()))
    assert decision.scene_id == "travel_modify", decision
    got = ApplicationService(store).get(app.number)
    assert (got.start_date, got.end_date, got.status) == (d1, d2, "draft")
    assert app.number in reply.text
    fields = {c.field for c in ApplicationService(store).audit(app.number)[-1].changes}
    assert {"start_date", "end_date", "status"} <= fields


@pytest.mark.parametrize("text, head", [("我的出差申请批了吗", "待审批"), ("Has my trip application been approved yet?", "awaiting")])
def test_approval_query(store: Store, text: str, head: str) -> None:
    app = app_for(store, "杭州", ["杭州", "Hangzhou"], status="approved")
    pending = app_for(store, "北京", ["北京", "Beijing"], status="submitted")
    decision, reply = say(store, text)
    assert decision.scene_id == "approval_query", decision
    assert head in reply.text and app.number in reply.text and pending.number in reply.text


@pytest.mark.parametrize("text, word", [("查看我的出差申请", "出差申请"), ("show my travel applications", "travel applications")])
def test_order_query(store: Store, text: str, word: str) -> None:
    decision, reply = say(store, text)
    assert decision.scene_id == "travel_order_query" and "no travel" in reply.text.lower() or "还没有" in reply.text
    app = app_for(store, "杭州", ["杭州", "Hangzhou"])
    decision, reply = say(store, text)
    assert word in reply.text and app.number in reply.text


@pytest.mark.parametrize("text, where", [
    ("What's the status of the refund for my Chengdu flight?", "where they were booked"),
    ("我的机票出票了吗", "预订渠道"),
    ("Is my hotel in Qingdao confirmed?", "where they were booked"),
])
def test_order_query_about_a_ticket_says_no_booking_system(store: Store, text: str, where: str) -> None:
    """NaviGo cannot see tickets, orders or refunds: it says so and where to look, not only the applications."""
    app = app_for(store, "杭州", ["杭州", "Hangzhou"])
    decision, reply = say(store, text)
    assert decision.scene_id == "travel_order_query", decision
    assert where in reply.text and reply.payload["orders_note"] is True
    assert app.number in reply.text  # the applications still follow


@pytest.mark.parametrize("text, where", [
    ("帮我驳回老周去厦门的出差申请", "「出差审批」页面"),
    ("approve Priya's Denver trip request", "Approvals page"),
])
def test_an_approvers_decision_is_sent_to_the_approvals_page(store: Store, text: str, where: str) -> None:
    """Nothing is approved or rejected from a chat message, and the user's own applications are not listed."""
    app = app_for(store, "杭州", ["杭州", "Hangzhou"], status="submitted")
    decision, reply = say(store, text)
    assert (decision.scene_id, decision.detail) == ("approval_query", "approval.act"), decision
    assert where in reply.text and reply.payload["approver_act"] is True and app.number not in reply.text
    assert ApplicationService(store).get(app.number).status == "submitted"
    _, reply = say(store, "我的出差申请批了吗")  # a status question still lists the applications
    assert app.number in reply.text and "approver_act" not in reply.payload


def test_order_query_about_applications_has_no_booking_note(store: Store) -> None:
    app_for(store, "杭州", ["杭州", "Hangzhou"])
    _, reply = say(store, "show my travel applications")
    assert reply.payload["orders_note"] is False and "booking system" not in reply.text


def test_order_query_details_with_audit(store: Store) -> None:
    app = app_for(store, "杭州", ["杭州", "Hangzhou"], status="approved")
    _, reply = say(store, f"查看{app.number}")
    assert "变更记录" in reply.text and "批准" in reply.text


@pytest.mark.parametrize("text, expected", [
    ("报销昨天在上海的出租车费 85 元", "符合差旅标准"),
    ("reimburse a hotel in Shanghai yesterday, 900 CNY", "Over the policy"),
])
def test_reimbursement_checks_one_item(store: Store, text: str, expected: str) -> None:
    decision, reply = say(store, text)
    assert decision.scene_id == "reimbursement"
    assert expected in reply.text and reply.payload["page"] == "reimbursement"
    assert reply.payload["grade"] == "G1"  # no grade set: the lowest, and the reply says so
    assert "G1" in reply.text


def test_reimbursement_covered_by_approved_application(store: Store) -> None:
    svc = ApplicationService(store)
    y = date.today() - timedelta(days=1)
    app = svc.create(owner="me", cities=["上海"], aliases=["上海", "Shanghai"], start_date=y - timedelta(days=1), end_date=y,
                     purpose="client meeting", origin="北京", estimated_cost=3000)
    svc.approve(svc.submit(app.number, actor="me").number, approver=BOSS)
    _, reply = say(store, "报销昨天在上海的出租车费 85 元")
    assert app.number in reply.text and reply.payload["application"] == app.number
    _, reply = say(store, "我要报销")
    assert "费用报销" in reply.text and "item" not in reply.payload


@pytest.mark.parametrize("text", ["submit {n}", "提交 {n}", "{n} 送审"])
def test_submit_a_draft_by_number(store: Store, text: str) -> None:
    app = app_for(store, "杭州", ["Hangzhou"])
    decision, reply = say(store, text.format(n=app.number))
    assert decision.scene_id == "travel_application"
    assert ApplicationService(store).get(app.number).status == "submitted"
    assert app.number in reply.text
