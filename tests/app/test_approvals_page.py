"""AppTest for the Approvals page: approve with a comment, reject needs a comment, all applications, audit; the page
needs the approver role and shows only the applications in the approver's scope, never their own."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from navigo_core.business.applications import Application, ApplicationService
from navigo_core.store import Store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'approvals.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    for var in ("LLM_API_KEY", "OPENAI_API_KEY", "DUFFEL_ACCESS_TOKEN", "WEATHER_ONLINE"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    yield url
    st.cache_resource.clear()


def submitted(url: str, city: str = "杭州", owner: str = "alice",
              department: str = "sales") -> tuple[ApplicationService, Application]:
    svc = ApplicationService(Store.from_url(url))
    app = svc.create(owner=owner, owner_department=department, purpose="client meeting", origin="上海", cities=[city], start_date=date(2026, 5, 1),
                     end_date=date(2026, 5, 3), estimated_cost=3000,
                     excesses=[{"rule_id": "HOTEL-1", "rule": "Hotel cap", "amount_over": 500,
                                "justification": "conference hotel"}])
    return svc, svc.submit(app.number, actor=owner)


def page(user: str = "carol") -> AppTest:
    """The page as a demo user of the shipped roles.yaml (carol approves sales and engineering)."""
    at = AppTest.from_file(str(ROOT / "app_pages" / "approvals.py"), default_timeout=60)
    at.session_state["auth.demo_user"] = user
    return at.run()


def test_approve_with_comment(db_url: str) -> None:
    svc, app = submitted(db_url)
    n = app.number
    at = page()
    assert not at.exception, at.exception
    md = " ".join(m.value for m in at.markdown)
    assert n in md and "conference hotel" in md and "HOTEL-1" in md
    at.text_input(key=f"approval_comment_{n}").input("OK, go ahead")
    at.button(key=f"approval_approve_{n}").click().run()
    assert not at.exception, at.exception
    assert any(f"Application {n} approved" in s.value for s in at.success)
    assert svc.get(n).status == "approved" and svc.get(n).approver == "carol"
    assert svc.get(n).decision_comment == "OK, go ahead"
    assert not any(b.key == f"approval_approve_{n}" for b in at.button)  # no longer pending
    assert any("No application awaits approval" in i.value for i in at.info)
    frames = [df.value for df in at.dataframe]
    all_apps = next(df for df in frames if "Number" in df.columns)
    assert list(all_apps["Status"]) == ["approved"]
    assert not any("Who" in df.columns for df in frames)  # the history is sentences, not a table of dicts
    history = next(m.value for m in at.markdown if " · created — " in m.value).splitlines()
    assert [line.split(" · ")[2].split(" — ")[0] for line in history] == ["created", "submitted", "approved"]
    last = history[-1]
    assert " · carol · approved — " in last and "comment: “OK, go ahead”" in last
    assert "status: submitted, awaiting approval → approved" in last


def test_reject_needs_a_comment(db_url: str) -> None:
    svc, app = submitted(db_url)
    n = app.number
    at = page()
    at.button(key=f"approval_reject_{n}").click().run()
    assert not at.exception, at.exception
    assert any(f"Write a comment before rejecting {n}" in e.value for e in at.error)
    assert svc.get(n).status == "submitted"
    at.text_input(key=f"approval_comment_{n}").input("Too expensive")
    at.button(key=f"approval_reject_{n}").click().run()
    assert not at.exception, at.exception
    assert any(f"Application {n} rejected" in s.value for s in at.success)
    assert not at.error
    got = svc.get(n)
    assert got.status == "rejected" and got.decision_comment == "Too expensive"
    assert svc.audit(n)[-1].action == "reject"


def test_a_traveller_sees_only_that_the_page_needs_the_approver_role(db_url: str) -> None:
    _, app = submitted(db_url)
    at = page("alice")
    assert not at.exception, at.exception
    assert any("approver" in e.value for e in at.error)
    assert not at.button and not at.dataframe and not at.title  # nothing else of the page
    assert app.number not in " ".join(m.value for m in at.markdown)


def test_the_approver_sees_only_applications_in_scope_never_their_own(db_url: str) -> None:
    _, sales = submitted(db_url, "杭州", "alice", "sales")
    _, engineering = submitted(db_url, "苏州", "bob", "engineering")
    _, own = submitted(db_url, "北京", "carol", "finance")
    _, it = submitted(db_url, "西安", "dave", "it")
    at = page("carol")
    assert not at.exception, at.exception
    keys = {b.key for b in at.button}
    assert {f"approval_approve_{sales.number}", f"approval_approve_{engineering.number}"} <= keys
    assert not any(own.number in k or it.number in k for k in keys)
    table = next(df.value for df in at.dataframe if "Number" in df.value.columns)
    assert sorted(table["Number"]) == sorted([sales.number, engineering.number])
    draft = ApplicationService(Store.from_url(db_url)).create(
        owner="alice", owner_department="sales", purpose="not sent yet", origin="上海", cities=["南京"],
        start_date=date(2026, 6, 1), end_date=date(2026, 6, 2), estimated_cost=800)
    again = page("carol")  # a draft is the traveller's until it is submitted: not listed
    table = next(df.value for df in again.dataframe if "Number" in df.value.columns)
    assert draft.number not in set(table["Number"]) and sales.number in set(table["Number"])
    erin = page("erin")  # finance and dave: carol's and dave's
    assert {f"approval_approve_{own.number}", f"approval_approve_{it.number}"} <= {b.key for b in erin.button}
    assert not any(sales.number in b.key for b in erin.button)
