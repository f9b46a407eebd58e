"""Travel applications: create / submit / modify / cancel / approve / reject, audit, find by description."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest

from navigo_core.business.applications import (
    AmbiguousApplication,
    ApplicationError,
    ApplicationService,
    PolicyExcess,
    card_text,
    extract_number,
)
from navigo_core.providers.places import GazetteerPlaceProvider
from navigo_core.store import Store
from tests.users import BOSS


@pytest.fixture
def svc(store_url: str) -> Iterator[ApplicationService]:
    """On SQLite and on PostgreSQL (``store_url``, tests/conftest.py), a fresh database each test."""
    store = Store.from_url(store_url)
    yield ApplicationService(store)
    store.engine.dispose()


def new(svc: ApplicationService, city: str = "Hangzhou", **kw):  # type: ignore[no-untyped-def]
    base = dict(owner="me", purpose="client meeting", origin="Shanghai", cities=[city], aliases=[city, "杭州"],
                start_date=date(2026, 5, 1), end_date=date(2026, 5, 3), estimated_cost=3000, currency="CNY")
    return svc.create(**{**base, **kw})


def test_create_submit_approve_with_audit(svc: ApplicationService) -> None:
    app = new(svc)
    assert app.number.startswith("TA-") and app.number.endswith("-0001") and app.status == "draft"
    assert new(svc, "Suzhou", aliases=["苏州"]).number.endswith("-0002")
    app = svc.submit(app.number, actor="me")
    assert app.status == "submitted" and [a.number for a in svc.pending(BOSS)] == [app.number]
    app = svc.approve(app.number, approver=BOSS, comment="ok, keep costs low")
    assert (app.status, app.approver, app.decision_comment) == ("approved", "boss", "ok, keep costs low")
    trail = svc.audit(app.number)
    assert [e.action for e in trail] == ["create", "submit", "approve"]
    assert trail[2].actor == "boss" and trail[2].comment == "ok, keep costs low"
    assert {"field": "status", "old": "submitted", "new": "approved"} in [c.model_dump() for c in trail[2].changes]
    assert "TA-" in card_text(app, "en") and "出差申请" in card_text(app, "zh")


def test_modify_cancel_reject_are_audited(svc: ApplicationService) -> None:
    app = svc.submit(new(svc).number, actor="me")
    app = svc.modify(app.number, actor="me", start_date=date(2026, 5, 2), end_date=date(2026, 5, 4), purpose="audit")
    assert app.status == "draft"  # back to draft after a change
    last = svc.audit(app.number)[-1]
    changed = {c.field: (c.old, c.new) for c in last.changes}
    assert last.action == "modify" and changed["purpose"] == ("client meeting", "audit")
    assert changed["start_date"][1] == date(2026, 5, 2) or str(changed["start_date"][1]) == "2026-05-02"
    with pytest.raises(ApplicationError):
        svc.modify(app.number, actor="me", start_date=date(2026, 5, 9), end_date=date(2026, 5, 1))
    svc.submit(app.number, actor="me")
    with pytest.raises(ApplicationError) as exc:
        svc.reject(app.number, approver=BOSS, comment="")
    assert exc.value.code == "application.error.comment_needed"
    app = svc.reject(app.number, approver=BOSS, comment="too expensive")
    assert app.status == "rejected"
    other = svc.cancel(new(svc).number, actor="me", reason="not needed")
    assert other.status == "cancelled" and svc.audit(other.number)[-1].comment == "not needed"
    with pytest.raises(ApplicationError):
        svc.approve(other.number, approver=BOSS)


def test_the_state_machine_allows_only_its_transitions(svc: ApplicationService) -> None:
    """states.can is the one test of a transition: every other (action, status) pair is refused as bad_status."""
    from navigo_core.business.applications.states import ALLOWED_FROM, STATUSES, can

    assert {(a, s) for a in ALLOWED_FROM for s in STATUSES if can(s, a)} == {
        ("submit", "draft"), ("approve", "submitted"), ("reject", "submitted"),
        *(("modify", s) for s in ("draft", "submitted", "approved")),
        *(("cancel", s) for s in ("draft", "submitted", "approved"))}
    draft = new(svc)
    with pytest.raises(ApplicationError) as exc:
        svc.approve(draft.number, approver=BOSS)
    assert exc.value.code == "application.error.bad_status"
    assert exc.value.params == {"number": draft.number, "action": "approve", "status": "draft"}
    cancelled = svc.cancel(draft.number, actor="me")
    for refused in (lambda: svc.submit(cancelled.number, actor="me"), lambda: svc.cancel(cancelled.number, actor="me"),
                    lambda: svc.modify(cancelled.number, actor="me", purpose="x"),
                    lambda: svc.reject(cancelled.number, approver=BOSS, comment="no")):
        with pytest.raises(ApplicationError) as exc:
            refused()
        assert exc.value.code == "application.error.bad_status" and exc.value.params["status"] == "cancelled"


def test_excesses_need_a_justification(svc: ApplicationService) -> None:
    excess = PolicyExcess(rule_id="HOTEL-1", rule="Hotel cap", rule_zh="住宿标准", amount_over=200)
    app = new(svc, excesses=[excess])
    with pytest.raises(ApplicationError) as exc:
        svc.submit(app.number, actor="me")
    assert exc.value.code == "application.error.justification_needed"
    app = svc.submit(app.number, actor="me", justifications="only hotel near the client")
    assert app.status == "submitted" and app.excesses[0].justification == "only hotel near the client"


def test_find_by_number_and_description_with_ambiguity(svc: ApplicationService) -> None:
    a = new(svc)
    b = new(svc, "Beijing", aliases=["北京"])
    assert svc.find(f"cancel {a.number.lower()}", "me").number == a.number
    assert svc.find("my Hangzhou trip", "me").number == a.number
    assert svc.find("我的杭州出差", "me").number == a.number
    assert svc.find("我的北京出差", "me").number == b.number
    c = new(svc)
    with pytest.raises(AmbiguousApplication) as exc:
        svc.find("my Hangzhou trip", "me")
    assert {x.number for x in exc.value.candidates} == {a.number, c.number}
    assert a.number in exc.value.message("en") and c.number in exc.value.message("zh")
    with pytest.raises(AmbiguousApplication):
        svc.find("cancel my trip", "me")  # names nothing: ask, never guess
    with pytest.raises(ApplicationError):
        svc.find("my Hangzhou trip", "someone else")
    assert extract_number("ta-2026-0007 please") == "TA-2026-0007"


def test_create_from_text_with_policy(svc: ApplicationService) -> None:
    from navigo_core.business.policy import load_policy

    policy = load_policy()
    app = svc.create_from_text("申请5月1日到3日从上海去杭州出差，拜访客户，预算3000元", owner="me",
                               places=GazetteerPlaceProvider(), today=date(2026, 4, 28), policy=policy,
                               grade=policy.lowest_grade)
    assert app.status == "draft" and "杭州" in app.cities and app.start_date == date(2026, 5, 1)
    assert app.estimated_cost == 3000 and "拜访客户" in app.purpose
    assert [e.rule_id for e in app.excesses] == ["ADVANCE-1"]  # booked 3 days ahead
    assert svc.find("my Hangzhou trip", "me").number == app.number  # English alias of 杭州
