"""AppTest for the Reimbursement page: pasted CSV, policy check, summary, save, export, broken policy."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from navigo_core.business.applications import ApplicationService
from navigo_core.store import Store
from tests.users import BOSS

ROOT = Path(__file__).resolve().parents[2]
CSV = """date,city,category,amount,currency,note,receipt
2026-05-01,杭州,hotel,650,CNY,night 1,yes
2026-05-01,杭州,meal,100,CNY,,yes
2026-05-02,杭州,taxi,45,CNY,airport,no
"""


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'reimb.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    for var in ("LLM_API_KEY", "OPENAI_API_KEY", "DUFFEL_ACCESS_TOKEN", "WEATHER_ONLINE", "EMPLOYEE_GRADE",
                "TRAVEL_POLICY_FILE"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    yield url
    st.cache_resource.clear()


def page() -> AppTest:
    return AppTest.from_file(str(ROOT / "app_pages" / "reimbursement.py"), default_timeout=60).run()


def paste(at: AppTest, text: str = CSV) -> AppTest:
    at.text_area(key="reimb_paste").input(text)
    at.button(key="reimb_paste_add").click().run()
    return at


def test_paste_check_and_save(db_url: str) -> None:
    at = paste(page())
    assert not at.exception, at.exception
    assert any("3 item(s) imported" in s.value for s in at.success)
    at.button(key="reimb_check").click().run()
    assert not at.exception, at.exception
    checked = next(df.value for df in at.dataframe if "check" in df.value.columns)
    flags = list(checked["check"])
    assert "HOTEL-1" not in flags[0] and "Hotel room rate" in flags[0] and "(+250 CNY)" in flags[0]
    assert flags[1] == "OK"
    assert flags[2] == "receipt missing"
    md = " ".join(m.value for m in at.markdown)
    assert "3 item(s), total 795.00 CNY" in md
    assert md.count("over by 250.00 CNY") == 1 and "Item 1 (2026-05-01, 杭州, hotel)" in md
    assert "**Missing receipts**: item(s) 3" in md
    by_cat = next(df.value for df in at.dataframe if list(df.value.columns) == ["category", "amount"])
    assert dict(zip(by_cat["category"], by_cat["amount"])) == {"hotel": 650, "meals": 100, "local transport": 45}
    assert [b.key for b in at.get("download_button")] == ["reimb_export"]

    at.button(key="reimb_save").click().run()
    assert not at.exception, at.exception
    assert any("Claim saved" in s.value for s in at.success)
    claims = Store.from_url(db_url).claims.list("alice")
    assert len(claims) == 1 and claims[0]["total"] == 795 and claims[0]["owner"] == "alice"
    saved = Store.from_url(db_url).claims.get(claims[0]["id"])
    assert saved is not None and len(saved["items"]) == 3 and saved["summary"]["missing_receipts"] == [3]


def test_application_flags_items_outside_it(db_url: str) -> None:
    svc = ApplicationService(Store.from_url(db_url))
    app = svc.create(owner="alice", cities=["杭州"], aliases=["Hangzhou"], start_date=date(2026, 5, 1),
                     end_date=date(2026, 5, 1), purpose="client meeting", origin="上海", estimated_cost=3000)
    svc.submit(app.number, actor="alice")
    svc.approve(app.number, approver=BOSS)
    at = page()
    at.selectbox(key="reimb_application").set_value(app.number).run()
    paste(at)
    at.button(key="reimb_check").click().run()
    assert not at.exception, at.exception
    flags = list(next(df.value for df in at.dataframe if "check" in df.value.columns)["check"])
    assert "outside the approved dates" in flags[2] and "outside" not in flags[0]
    assert "**Outside the application**: item(s) 3" in " ".join(m.value for m in at.markdown)
    at.button(key="reimb_save").click().run()
    assert Store.from_url(db_url).claims.list("alice")[0]["application_number"] == app.number


def test_bad_csv_shows_row_errors(db_url: str) -> None:
    at = paste(page(), "date,city,category,amount\n2026-13-01,杭州,hotel,100\n")
    assert not at.exception, at.exception
    assert any("row 2" in e.value for e in at.error)
    at.button(key="reimb_check").click().run()
    assert any("Add at least one complete item" in w.value for w in at.warning)


def test_broken_policy_file_keeps_entry_working_but_refuses_the_check(db_url: str, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail closed: entry works, but without a readable policy nothing is checked, called OK or saved."""
    bad = tmp_path / "policy.yaml"
    bad.write_text("grades: [unclosed\n", encoding="utf-8")
    monkeypatch.setenv("TRAVEL_POLICY_FILE", str(bad))
    st.cache_resource.clear()
    at = paste(page())
    assert not at.exception, at.exception
    assert any("3 item(s) imported" in s.value for s in at.success)  # entry still works
    assert any("travel policy file has a problem" in e.value for e in at.error)
    at.button(key="reimb_check").click().run()
    assert not at.exception, at.exception
    assert any(e.value.startswith("Refused: no travel policy can be read") and "not valid YAML" in e.value
               for e in at.error)
    assert not any("check" in df.value.columns for df in at.dataframe)  # no "OK" for any item
    assert not any("Every item is within the policy" in s.value for s in at.success)
    at.button(key="reimb_save").click().run()
    assert Store.from_url(db_url).claims.list("alice") == []  # nothing saved as a checked claim


def _category_options(at: AppTest) -> list[dict]:
    """The category column's options as the data editor receives them (value and shown label)."""
    import json

    found: list[dict] = []

    def walk(node: object) -> None:
        children = getattr(node, "children", None)
        for child in (children.values() if isinstance(children, dict) else []):
            walk(child)
        columns = getattr(getattr(node, "proto", None), "columns", "")
        if isinstance(columns, str) and '"category"' in columns:
            found.extend(json.loads(columns)["category"]["type_config"]["options"])

    walk(at._tree)
    return found


@pytest.mark.parametrize("lang, hotel, transport", [("en", "hotel", "local transport"), ("zh", "住宿", "市内交通")])
def test_the_editor_shows_category_names_not_codes(db_url: str, lang: str, hotel: str, transport: str) -> None:
    """The category column showed raw codes ("transport", "meal") in both languages; it now shows the
    category's name in the page's language and keeps the code as the value."""
    at = AppTest.from_file(str(ROOT / "app_pages" / "reimbursement.py"), default_timeout=60)
    at.session_state["lang"] = lang
    at.run()
    assert not at.exception, at.exception
    labels = {o["value"]: o["label"] for o in _category_options(at)}
    assert labels["hotel"] == hotel and labels["transport"] == transport
