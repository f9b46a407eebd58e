"""Profile memory: what a user says once (grade, language, home city) is kept for them only, on SQLite and
PostgreSQL, and used by the chat (the grade in a later conversation) and by applications (the home city as origin)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from navigo_core.business.applications import ApplicationService
from navigo_core.chat import ChatService
from navigo_core.config import Settings
from navigo_core.providers.places.gazetteer import GazetteerPlaceProvider
from navigo_core.scenes import make_gate_context
from navigo_core.store import Store

pytestmark = pytest.mark.usefixtures("no_internet")


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    url = f"sqlite:///{tmp_path / 'p.db'}" if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))
    s = Store.from_url(url)
    yield s  # type: ignore[misc]
    s.engine.dispose()


def test_a_profile_keeps_what_was_given_for_that_user_only(store: Store) -> None:
    assert store.profiles.get("alice") == {"grade": None, "language": None, "home_city": None}
    store.profiles.remember("alice", grade="G3", language="zh")
    store.profiles.remember("alice", home_city="上海", grade="")  # empty: ignored, the grade stays
    assert store.profiles.get("alice") == {"grade": "G3", "language": "zh", "home_city": "上海"}
    assert store.profiles.get("bob")["grade"] is None
    store.profiles.remember("alice", grade="G2")
    assert store.profiles.get("alice")["grade"] == "G2"
    with pytest.raises(TypeError):
        store.profiles.remember("alice", department="x")


def test_the_first_origin_becomes_the_home_city_and_fills_the_next_application(store: Store) -> None:
    svc = ApplicationService(store)
    svc.create(owner="alice", cities=["杭州"], origin="上海")
    assert store.profiles.get("alice")["home_city"] == "上海"
    later = svc.create(owner="alice", cities=["北京"])
    assert later.origin == "上海"  # given once, kept
    svc.create(owner="alice", cities=["成都"], origin="南京")  # a trip from elsewhere keeps the home city
    assert store.profiles.get("alice")["home_city"] == "上海"
    assert svc.create(owner="bob", cities=["北京"]).origin == ""  # bob's is his own


def test_a_grade_stated_in_one_conversation_is_used_in_the_next() -> None:
    store = Store.from_url("sqlite:///:memory:")
    settings = Settings(llm_api_key="", employee_grade="")
    chat = ChatService(store, settings, gate_context=make_gate_context(settings), places=GazetteerPlaceProvider(),
                       today=date(2026, 3, 10))
    first = chat.new_thread("alice")
    chat.send(first, "我是经理级")
    assert store.profiles.get("alice")["grade"] == "G3"
    second = chat.new_thread("alice")
    reply = chat.send(second, "北京住宿标准是多少")
    assert "800" in reply.text and "G3" in reply.text, reply.text  # not asked again
    other = chat.new_thread("bob")
    assert "请问您是哪一级" in chat.send(other, "北京住宿标准是多少").text  # bob never said it: asked


def test_a_store_that_cannot_be_written_keeps_no_profile_and_raises_nothing(tmp_path: Path) -> None:
    """``kept`` / ``keep`` are what the chat and the pages call: a read-only stand-in store reads as an empty
    profile and refuses the write without an exception (``remember`` itself raises the store's fault)."""
    from navigo_core.store import StoreError, StoreUnavailable

    broken = Store.unavailable(StoreUnavailable("store.error.unavailable", db="x"), "x")
    assert broken.profiles.kept("alice") == {"grade": None, "language": None, "home_city": None}
    assert broken.profiles.keep("alice", grade="P6") is False
    with pytest.raises(StoreError):
        broken.profiles.remember("alice", grade="P6")
    ok = Store.from_url(f"sqlite:///{tmp_path / 'k.db'}")
    assert ok.profiles.keep("alice", grade="P6") is True and ok.profiles.kept("alice")["grade"] == "P6"
    ok.engine.dispose()


def test_one_grade_chain_message_conversation_profile_settings() -> None:
    """``requested_grade_origin`` is the one place that picks the grade a check is for: the message, then the
    conversation, then the user's kept grade, then the settings."""
    from types import SimpleNamespace

    from navigo_core.business.policy import default_policy, requested_grade_origin

    store = Store.from_url("sqlite:///:memory:")
    store.profiles.remember("alice", grade="G3")
    policy = default_policy()
    ctx = SimpleNamespace(subject={}, store=store, user="alice", settings=Settings(llm_api_key="", employee_grade="G1"))
    assert requested_grade_origin(ctx, "", policy) == ("G3", "profile")
    assert requested_grade_origin(SimpleNamespace(**{**vars(ctx), "subject": {"grade": "G2"}}), "", policy) == ("G2", "conversation")
    assert requested_grade_origin(ctx, "我是总监级", policy)[1] == "message"
    assert requested_grade_origin(SimpleNamespace(**{**vars(ctx), "user": "bob"}), "", policy) == ("G1", "settings")
    assert requested_grade_origin(SimpleNamespace(), "", policy) == ("", "none")


def test_the_plan_policy_check_uses_the_users_kept_grade(tmp_path: Path) -> None:
    """The Plan page passes the signed-in user (PlannerDeps.user): their kept grade, not EMPLOYEE_GRADE, is checked."""
    from datetime import datetime, timezone

    from navigo_core.planner.supervisor import make_planner_deps, plan

    store = Store.from_url(f"sqlite:///{tmp_path / 'p.db'}")  # a file: the agents run in worker threads
    store.profiles.remember("alice", grade="G5")
    settings = Settings(llm_api_key="", employee_grade="G1", _env_file=None)
    deps = make_planner_deps(settings, store=store, clock=lambda: datetime(2026, 5, 1, 9, tzinfo=timezone.utc))
    request = ("Business trip: luxury 5-star hotel from Shanghai to Tokyo 2026-05-04 to 2026-05-08, budget 60000 CNY, "
               "1 adult")
    graded = {}
    for user in ("alice", None):
        deps.user = user
        state = plan(request, deps)
        graded[user] = {e["grade"] for e in state.policy_excesses or []}
        log = next(e for e in state.decision_log if e.agent == "policy_check")
        assert ("grade G5 (profile)" if user else "grade G1 (settings)") in log.evidence
    assert graded == {"alice": {"G5"}, None: {"G1"}}


def test_an_application_made_in_the_chat_names_the_user_not_their_id() -> None:
    """With an identity provider the owner is an opaque ``sub``; the traveller on the card is the user's name."""
    store = Store.from_url("sqlite:///:memory:")
    settings = Settings(llm_api_key="", employee_grade="G2")
    chat = ChatService(store, settings, gate_context=make_gate_context(settings), places=GazetteerPlaceProvider(),
                       today=date(2026, 3, 10))
    sub = "0f3c9a7e-5b1d-4c2a-9e8f-1a2b3c4d5e6f"
    thread = chat.new_thread(sub)
    chat.send(thread, "申请5月10日到12日去北京出差，拜访客户", department="Sales", name="Alice Chen")
    anonymous = chat.new_thread("bob")
    chat.send(anonymous, "申请5月10日到12日去北京出差，拜访客户")
    mine, his = ApplicationService(store).list(sub), ApplicationService(store).list("bob")
    assert [a.traveller for a in mine] == ["Alice Chen"] and mine[0].owner == sub
    assert [a.traveller for a in his] == ["bob"]  # no name given: the id, as before


def test_a_plan_without_an_origin_starts_from_the_users_home_city(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    from navigo_core.planner.supervisor import make_planner_deps, plan

    store = Store.from_url(f"sqlite:///{tmp_path / 'p.db'}")
    store.profiles.remember("alice", home_city="上海")
    deps = make_planner_deps(Settings(llm_api_key="", _env_file=None), store=store,
                             clock=lambda: datetime(2026, 5, 1, 9, tzinfo=timezone.utc))
    text = "Trip to Beijing 2026-05-10 to 2026-05-12, 1 adult, budget 6000 CNY"
    deps.user = "alice"
    state = plan(text, deps)
    req = state.parsed_request
    assert req is not None and req.origin is not None and req.origin.name == "Shanghai"
    assert req.sources["origin"] == "profile"
    log = next(e for e in state.decision_log if e.agent == "requirement_parser")
    assert any("home city" in line for line in log.evidence)
    assert plan("Trip from Nanjing to Beijing 2026-05-10 to 2026-05-12, 1 adult", deps).parsed_request.origin.name == "Nanjing"
    assert plan("Trip to Shanghai 2026-05-10 to 2026-05-12, 1 adult", deps).parsed_request.origin is None  # home is there
    deps.user = None
    assert plan(text, deps).parsed_request.origin is None  # nobody's profile: the origin stays open
