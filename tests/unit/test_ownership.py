"""Who owns what, on SQLite and PostgreSQL: every record has an owner (a user id) and is listed and opened for that
owner only; another's answers like a missing one. Approvals: only an approver whose scope holds the owner decides,
never on their own application, and the audit trail records the approver's user id. Chat scenes that act on an
application by number act only for its owner."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from navigo_core.auth import default_roles, demo_user
from navigo_core.auth.models import User
from navigo_core.business.applications import Application, ApplicationError, ApplicationService, user_of
from navigo_core.config import Settings
from navigo_core.scenes import GateContext, handle_message
from navigo_core.store import Store

pytestmark = pytest.mark.usefixtures("no_internet")


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    url = f"sqlite:///{tmp_path / 'own.db'}" if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))
    s = Store.from_url(url)
    yield s  # type: ignore[misc]
    s.engine.dispose()


def user(user_id: str) -> User:
    found = demo_user(default_roles(), user_id)
    assert found is not None
    return found


ALICE, BOB, CAROL, DAVE, ERIN = (user(u) for u in ("alice", "bob", "carol", "dave", "erin"))


def submitted(svc: ApplicationService, who: User, city: str = "Hangzhou") -> Application:
    start = date.today() + timedelta(days=20)
    app = svc.create(owner=who.id, owner_department=who.department, cities=[city], start_date=start,
                     end_date=start + timedelta(days=2), purpose="client meeting", origin="Shanghai",
                     estimated_cost=3000)
    return svc.submit(app.number, actor=who.id)


# --- repositories -------------------------------------------------------------------------------------------

def test_every_repository_lists_and_opens_records_for_their_owner_only(store: Store) -> None:
    r = store.routes.save("A → B", {"stops": []}, {"km": 1}, owner="alice")
    assert [x["id"] for x in store.routes.list("alice")] == [r] and store.routes.list("bob") == []
    assert store.routes.get(r, owner="bob") is None and store.routes.get(r, owner="alice")["owner"] == "alice"  # type: ignore[index]

    p, v = store.plans.save(None, "Rome", {}, owner="alice")
    assert [x["id"] for x in store.plans.list("alice")] == [p] and store.plans.list("bob") == []
    assert store.plans.get(p, owner="bob") is None and store.plans.versions(p, "bob") == []
    assert store.plans.save(p, "Rome again", {}, owner="alice") == (p, v + 1)
    bob_plan, bob_version = store.plans.save(p, "not alice's", {}, owner="bob")  # never a version of alice's plan
    assert bob_plan != p and bob_version == 1 and len(store.plans.versions(p)) == 2

    t = store.threads.new_id()
    store.threads.add_message(t, "user", "hello", owner="alice")
    assert [x["id"] for x in store.threads.list("alice")] == [t] and store.threads.list("bob") == []
    assert store.threads.get(t, owner="bob") is None and store.threads.get("no-such-id", owner="bob") is None
    with pytest.raises(KeyError):
        store.threads.add_message(t, "user", "let me in", owner="bob")

    c = store.claims.save("alice", [], {"total": 1.0})
    assert [x["id"] for x in store.claims.list("alice")] == [c] and store.claims.list("bob") == []
    assert store.claims.get(c, owner="bob") is None and store.claims.get(c, owner="alice") is not None

    svc = ApplicationService(store)
    a = svc.create(owner="alice", owner_department="sales", cities=["Hangzhou"])
    assert [x.number for x in svc.list("alice")] == [a.number] and svc.list("bob") == []
    assert a.owner_department == "sales"
    with pytest.raises(ApplicationError) as foreign:
        svc.get(a.number, owner="bob")
    with pytest.raises(ApplicationError) as missing:
        svc.get("TA-1999-0001", owner="bob")
    assert foreign.value.code == missing.value.code == "application.error.not_found"


def test_only_the_owner_changes_an_application_anyone_else_gets_not_found(store: Store) -> None:
    svc = ApplicationService(store)
    app = svc.create(owner="alice", cities=["Hangzhou"], start_date=date.today() + timedelta(days=9),
                     end_date=date.today() + timedelta(days=10), purpose="visit", origin="Shanghai",
                     estimated_cost=100)
    for act in (lambda: svc.submit(app.number, actor="bob"), lambda: svc.cancel(app.number, actor="bob"),
                lambda: svc.modify(app.number, actor="bob", purpose="mine now"),
                lambda: svc.justify(app.number, "because", actor="bob")):
        with pytest.raises(ApplicationError) as exc:
            act()
        assert exc.value.code == "application.error.not_found" and exc.value.params == {"number": app.number}
    assert svc.get(app.number).status == "draft" and svc.get(app.number).purpose == "visit"


# --- approvals ----------------------------------------------------------------------------------------------

def test_an_approver_decides_only_in_scope_never_their_own_and_is_recorded(store: Store) -> None:
    svc = ApplicationService(store)
    alice, bob, carol, dave = (submitted(svc, u, c) for u, c in ((ALICE, "Hangzhou"), (BOB, "Suzhou"),
                                                                 (CAROL, "Beijing"), (DAVE, "Xi'an")))
    # carol approves sales and engineering: alice's and bob's, not her own (finance) nor dave's (it)
    assert {a.number for a in svc.pending(CAROL)} == {alice.number, bob.number}
    assert {a.number for a in svc.in_scope(CAROL)} == {alice.number, bob.number}
    # erin approves finance and dave (a person): carol's and dave's
    assert {a.number for a in svc.pending(ERIN)} == {carol.number, dave.number}
    assert svc.pending(ALICE) == []  # a traveller decides nothing

    with pytest.raises(ApplicationError) as own:
        svc.approve(carol.number, approver=CAROL)
    assert own.value.code == "application.error.own_approval"
    assert "your own travel application" in own.value.message("en")
    with pytest.raises(ApplicationError) as out:
        svc.reject(dave.number, approver=CAROL, comment="no")
    assert out.value.code == "application.error.not_in_scope"
    with pytest.raises(ApplicationError) as traveller:
        svc.approve(bob.number, approver=ALICE)
    assert traveller.value.code in {"application.error.not_in_scope"}
    assert {svc.get(n).status for n in (carol.number, dave.number, bob.number)} == {"submitted"}

    approved = svc.approve(alice.number, approver=CAROL, comment="ok")
    rejected = svc.reject(carol.number, approver=ERIN, comment="too far")
    assert (approved.status, approved.approver) == ("approved", "carol")
    assert (rejected.status, rejected.approver) == ("rejected", "erin")
    assert [(e.action, e.actor) for e in svc.audit(alice.number)] == [("create", "alice"), ("submit", "alice"),
                                                                      ("approve", "carol")]
    assert svc.audit(carol.number)[-1].actor == "erin"


def test_the_scenes_need_a_user_there_is_no_default() -> None:
    with pytest.raises(ValueError, match="GateContext.user"):
        user_of(GateContext())
    assert user_of(GateContext(user="alice")) == "alice"


# --- chat scenes --------------------------------------------------------------------------------------------

def test_a_chat_scene_acts_on_a_number_only_for_its_owner(store: Store) -> None:
    svc = ApplicationService(store)
    start = date.today() + timedelta(days=20)
    app = svc.create(owner="alice", cities=["Hangzhou"], start_date=start, end_date=start + timedelta(days=2),
                     purpose="client meeting", origin="Shanghai", estimated_cost=3000)
    settings = Settings(llm_api_key="")  # no database URL: a PostgreSQL password would be registered as a secret

    def say(who: str, text: str) -> str:
        return handle_message(text, GateContext(settings=settings, store=store, user=who))[1].text

    missing = "TA-1999-0042"
    for text in ("提交 {n}", "取消 {n}", "{n} 审批到哪一步了"):
        as_bob = say("bob", text.format(n=app.number))
        wrong = say("bob", text.format(n=missing))
        assert as_bob.replace(app.number, missing) == wrong, (text, as_bob, wrong)
    assert svc.get(app.number).status == "draft"
    assert "submitted" in say("alice", f"submit {app.number}").lower() or svc.get(app.number).status == "submitted"
