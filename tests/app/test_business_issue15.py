"""AppTests for issues 15 and 12 on the business pages: an approved exception on the Reimbursement page, the
grade the page checks (EMPLOYEE_GRADE's alias, the chat's hand-off, an unknown one), the readable and
escaped audit trail on the Approvals page."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from navigo_core.business.applications import ApplicationService, PolicyExcess
from navigo_core.business.policy import check_trip, load_policy
from navigo_core.store import Store
from tests.users import BOSS

ROOT = Path(__file__).resolve().parents[2]
START = date(2027, 5, 10)
CLAIM = f"""date,city,category,amount,currency,note,receipt
{START},北京,hotel,900,CNY,night 1,yes
{START + timedelta(days=1)},北京,hotel,900,CNY,night 2,yes
"""


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'business.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    for var in ("LLM_API_KEY", "OPENAI_API_KEY", "DUFFEL_ACCESS_TOKEN", "WEATHER_ONLINE", "EMPLOYEE_GRADE",
                "TRAVEL_POLICY_FILE"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    yield url
    st.cache_resource.clear()


def page(name: str, **state: object) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / f"{name}.py"), default_timeout=60)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def paste(at: AppTest, text: str = CLAIM) -> AppTest:
    at.text_area(key="reimb_paste").input(text)
    at.button(key="reimb_paste_add").click().run()
    at.button(key="reimb_check").click().run()
    return at


def flags(at: AppTest) -> list[str]:
    return list(next(df.value for df in at.dataframe if "check" in df.value.columns)["check"])


def approved_hotel_exception(url: str, justification: str = "the only hotel near the client") -> str:
    found = check_trip(load_policy(), city="北京", grade="G1", nights=2, hotel_per_night=900)
    svc = ApplicationService(Store.from_url(url))
    app = svc.create(owner="alice", owner_department="sales", purpose="client visit", origin="上海", cities=["北京"], aliases=["北京", "Beijing"],
                     start_date=START, end_date=START + timedelta(days=2), estimated_cost=6000,
                     excesses=[PolicyExcess(**{k: v for k, v in e.model_dump().items() if k in PolicyExcess.model_fields})
                               for e in found])
    svc.submit(app.number, actor="alice", justifications=justification)
    svc.approve(app.number, approver=BOSS, comment="ok")
    return app.number


def test_an_approved_hotel_exception_is_not_flagged_as_a_violation(db_url: str) -> None:
    number = approved_hotel_exception(db_url)
    at = page("reimbursement")
    at.selectbox(key="reimb_application").set_value(number).run()
    paste(at)
    assert not at.exception, at.exception
    for flag in flags(at):
        assert flag.startswith(f"approved exception (application {number})"), flag
    md = " ".join(m.value for m in at.markdown)
    assert "over by" not in md and "**Approved exceptions**" in md
    assert md.count(f"approved exception (application {number})") == 2
    # without the application the same items are violations
    at = paste(page("reimbursement"))
    assert all("Hotel room rate" in f and "approved" not in f for f in flags(at))


def test_employee_grade_manager_is_checked_as_g3(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMPLOYEE_GRADE", "manager")
    st.cache_resource.clear()
    at = paste(page("reimbursement"), CLAIM.replace(",900,", ",700,"))
    assert not at.exception, at.exception
    assert any(c.value == "Grade checked: G3 (Manager)" for c in at.caption), [c.value for c in at.caption]
    assert all("Hotel room rate" not in f for f in flags(at))  # 700 is within G3's 800 (G1: 500)


def test_the_grade_given_in_the_chat_is_the_one_checked(db_url: str) -> None:
    at = paste(page("reimbursement", **{"reimb.prefill": {"grade": "G4", "application": None}}),
               CLAIM.replace(",900,", ",950,"))
    assert not at.exception, at.exception
    assert any("G4 (Director), as given in the chat" in c.value for c in at.caption), [c.value for c in at.caption]
    assert all("Hotel room rate" not in f for f in flags(at))  # 950 is within G4's 1,000


def test_an_unknown_grade_is_the_default_and_the_page_says_so(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMPLOYEE_GRADE", "intern")
    st.cache_resource.clear()
    at = paste(page("reimbursement"))
    assert not at.exception, at.exception
    assert any("“intern” is not a grade of the travel policy" in c.value and "G1" in c.value for c in at.caption)
    assert all("(+400 CNY)" in f for f in flags(at))  # checked for G1


def test_the_audit_trail_is_readable_and_escaped(db_url: str) -> None:
    number = approved_hotel_exception(db_url, justification="![b](http://127.0.0.1:9999/x) *near*")
    at = page("approvals", **{"auth.demo_user": "carol"})  # carol approves alice's department (sales)
    assert not at.exception, at.exception
    history = next(m.value for m in at.markdown if " · created — " in m.value)
    assert "{" not in history and "'rule_id'" not in history, history
    assert "justification for HOTEL-1" in history
    assert "“\\!\\[b\\](http://127.0.0.1:9999/x) \\*near\\*”" in history  # the traveller's words, as typed
    assert " · boss · approved — " in history
    zh = page("approvals", lang="zh", **{"auth.demo_user": "carol"})
    history = next(m.value for m in zh.markdown if " · 创建 — " in m.value)
    assert "超标理由 HOTEL-1" in history and "状态：已提交，待审批 → 已批准" in history, history
    assert number


def test_the_chat_hands_the_grade_to_the_reimbursement_page(db_url: str) -> None:
    at = page("chat")
    for text in ("我是经理级", "报销昨天在北京的酒店费 700 元"):
        at.chat_input(key="chat_input").set_value(text).run()
        assert not at.exception, at.exception
    replies = [m.markdown[0].value for m in at.chat_message if m.name == "assistant" and m.markdown]
    assert "G3" in replies[0] and "超出标准" not in replies[-1], replies
    at.button(key="chat_open_reimbursement").click().run()
    assert at.session_state["reimb.prefill"] == {"grade": "G3", "application": None}
