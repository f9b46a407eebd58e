"""Issue 12 "One source per fact: employee grade": ``TravelPolicy.resolve_grade`` is the one way a grade is read;
applications, the plan check, the policy chat and claims agree; a grade given in the chat reaches the
application made from that chat and the claim; an unknown grade falls back to the default and says so."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from navigo_core.business.applications import policy_and_grade
from navigo_core.business.policy import load_policy
from navigo_core.chat import ChatService
from navigo_core.config import Settings, get_settings
from navigo_core.providers.places import GazetteerPlaceProvider
from navigo_core.scenes import GateContext, handle_message, make_gate_context
from navigo_core.store import Store

pytestmark = pytest.mark.usefixtures("no_internet")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.from_url(f"sqlite:///{tmp_path / 'g.db'}")


def settings_for(store: Store, grade: str) -> Settings:
    return get_settings(database_url=str(store.engine.url), employee_grade=grade, llm_api_key="")


def test_resolve_grade_reads_ids_labels_and_the_aliases_of_the_policy_data() -> None:
    policy = load_policy()
    assert policy.resolve_grade("manager") == ("G3", False)  # an alias in travel_policy.yaml
    assert policy.resolve_grade("G3") == policy.resolve_grade(" g3 ") == policy.resolve_grade("经理") == ("G3", False)
    assert policy.resolve_grade("Director") == ("G4", False)
    assert policy.resolve_grade("") == (policy.default_grade, True) == ("G1", True)
    assert policy.resolve_grade(None) == ("G1", True)
    assert policy.resolve_grade("intern") == ("G1", True)
    # the names are data: a policy whose G3 is called "Team lead" does not know "manager"
    data = policy.model_copy(deep=True)
    data.grade_defs[2] = data.grade_defs[2].model_copy(update={"label_en": "Team lead", "aliases": ["lead"]})
    assert data.resolve_grade("manager") == ("G1", True) and data.resolve_grade("lead") == ("G3", False)


def test_a_stated_grade_is_read_from_what_the_traveller_says_about_themself() -> None:
    policy = load_policy()
    assert policy.stated_grade("我是经理级") == "G3"
    assert policy.stated_grade("I'm a director") == "G4"
    assert policy.stated_grade("my grade is G2, thanks") == "G2"
    assert policy.stated_grade("我是经理，申请5月10日去北京出差") == "G3"
    assert policy.stated_grade("我是来拜访客户经理的") is None  # someone else's title
    assert policy.stated_grade("I'm meeting the director in Beijing") is None
    assert policy.stated_grade("申请去北京出差") is None


def test_employee_grade_manager_is_g3_in_all_four_places(store: Store) -> None:
    settings = settings_for(store, "manager")
    # 1. applications (the chat's travel application)
    policy, grade, assumed = policy_and_grade(GateContext(settings=settings, store=store, user="me"))
    assert (grade, assumed) == ("G3", False)
    decision, reply = handle_message("申请5月10日到12日从上海去北京出差，拜访客户，预算5000元", GateContext(settings=settings, store=store, user="me"))
    assert decision.scene_id == "travel_application"
    assert reply.payload["grade"] == "G3" and "G1" not in reply.text, reply.text
    # 2. the plan check: from the deps' settings, never the global ones
    from navigo_core.planner.supervisor import make_planner_deps, plan

    deps = make_planner_deps(settings, clock=lambda: datetime(2027, 4, 1, 9, tzinfo=timezone.utc))
    state = plan("Business trip: luxury 5-star hotel from Shanghai to Beijing 2027-05-10 to 2027-05-12, budget 60000 "
                 "CNY, 1 adult", deps)
    assert state.policy_excesses and {e["grade"] for e in state.policy_excesses} == {"G3"}
    log = next(e for e in state.decision_log if e.agent == "policy_check")
    assert "grade G3" in log.input_summary and "assum" not in " ".join(log.evidence)
    # 3. the policy chat answers for G3 without asking
    _, answer = handle_message("北京住宿标准是多少", GateContext(settings=settings, store=store, user="me"))
    assert "800" in answer.text and "G3" in answer.text and not answer.asks, answer.text
    # 4. claims (the chat's reimbursement check)
    _, claim = handle_message("报销昨天在北京的酒店费 700 元", GateContext(settings=settings, store=store, user="me"))
    assert claim.payload["grade"] == "G3" and claim.payload["excesses"] == [], claim.text  # G1's cap is 500


def test_the_plan_check_does_not_read_the_global_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    import navigo_core.config as config
    from navigo_core.planner.supervisor import make_planner_deps, plan

    deps = make_planner_deps(Settings(llm_api_key="", employee_grade="director", _env_file=None),
                             clock=lambda: datetime(2027, 4, 1, 9, tzinfo=timezone.utc))
    monkeypatch.setattr(config, "get_settings", lambda **_: pytest.fail("the plan check read the global settings"))
    state = plan("Business trip: luxury 5-star hotel from Shanghai to Beijing 2027-05-10 to 2027-05-12, budget 60000 "
                 "CNY, 1 adult", deps)
    assert {e["grade"] for e in state.policy_excesses or []} == {"G4"}


@pytest.mark.parametrize("statement, grade, cap_ok", [("我是经理级", "G3", 700), ("I'm a director", "G4", 950)])
def test_a_grade_given_in_the_chat_reaches_the_application_and_the_claim(store: Store, statement: str, grade: str,
                                                                         cap_ok: int) -> None:
    settings = settings_for(store, "")
    chat = ChatService(store, settings, gate_context=make_gate_context(settings), places=GazetteerPlaceProvider())
    tid = chat.new_thread("me")
    noted = chat.send(tid, statement)
    assert grade in noted.text, noted.text  # acknowledged, not "I'm not sure what you need"
    assert store.threads.get_state(tid)["subject"]["grade"] == grade
    drafted = chat.send(tid, "申请5月10日到12日从上海去北京出差，拜访客户，预算5000元")
    assert drafted.decision["scene"] == "travel_application"
    assert "G1" not in drafted.text, drafted.text  # checked for the stated grade: no "assumed G1" note
    number = store.threads.get_state(tid)["subject"]["application"]
    assert number in drafted.text
    claim = chat.send(tid, f"报销昨天在北京的酒店费 {cap_ok} 元")
    assert claim.decision["scene"] == "reimbursement"
    assert "超出标准" not in claim.text and grade in claim.text, claim.text  # over G1's 500, within the grade's cap
    # the hand-off to the Reimbursement page carries the grade (and the page checks with it: tests/app)
    assert claim.handoff == {"kind": "reimbursement", "grade": grade, "application": None}


def test_the_grade_of_the_conversation_is_used_by_the_scenes(store: Store) -> None:
    """The gate's context carries the conversation's grade (``subject["grade"]``) to every business scene."""
    settings = settings_for(store, "")
    context = GateContext(settings=settings, store=store, user="me", subject={"grade": "G3"})
    policy, grade, assumed = policy_and_grade(context)
    assert (grade, assumed) == ("G3", False)
    _, reply = handle_message("申请5月10日到12日从上海去北京出差，拜访客户，预算5000元", context)
    assert reply.payload["grade"] == "G3" and "G1" not in reply.text
    _, claim = handle_message("报销昨天在北京的酒店费 700 元", context)
    assert claim.payload["grade"] == "G3" and claim.payload["excesses"] == []
    # a grade stated in the message itself wins over the conversation's
    assert policy_and_grade(context, "我是总监，报销酒店")[1:] == ("G4", False)


def test_an_unknown_grade_gives_the_default_assumed_and_says_so(store: Store) -> None:
    settings = settings_for(store, "intern")
    policy, grade, assumed = policy_and_grade(GateContext(settings=settings, store=store, user="me"))
    assert (grade, assumed) == (policy.default_grade, True) == ("G1", True)
    _, reply = handle_message("apply for a business trip from Shanghai to Beijing May 10 to 12, client meeting, "
                              "budget 5000 CNY", GateContext(settings=settings, store=store, user="me", lang="en"))
    assert reply.payload["grade"] == "G1"
    assert "“intern” is not a grade of the travel policy" in reply.text and "G1" in reply.text, reply.text
    _, claim = handle_message("报销昨天在北京的酒店费 700 元", GateContext(settings=settings, store=store, user="me"))
    assert claim.payload["grade"] == "G1" and "“intern”" in claim.text and "G1" in claim.text, claim.text
