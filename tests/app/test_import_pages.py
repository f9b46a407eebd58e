"""The Reimbursement page with the files that crashed it (issue "Hardening"): amounts ``nan``, ``inf`` and
``1e309``, a 200 KB field, CR-only line endings. Before, each showed a traceback; now a bad row is named in
one message, and good files import whatever their line endings.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.usefixtures("no_internet")
ROOT = Path(__file__).resolve().parents[2]
HEADER = "date,city,category,amount,currency,note,receipt"


@pytest.fixture
def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'reimb.db'}")
    for var in ("LLM_API_KEY", "OPENAI_API_KEY", "TRAVEL_POLICY_FILE", "EMPLOYEE_GRADE"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    yield AppTest.from_file(str(ROOT / "app_pages" / "reimbursement.py"), default_timeout=60).run()
    st.cache_resource.clear()


def paste(at: AppTest, text: str) -> AppTest:
    at.text_area(key="reimb_paste").input(text)
    at.button(key="reimb_paste_add").click().run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("amount", ["nan", "inf", "1e309"])
def test_nan_inf_and_1e309_are_row_errors(page: AppTest, amount: str) -> None:
    at = paste(page, f"{HEADER}\n2026-05-01,杭州,hotel,650,CNY,,yes\n2026-05-02,杭州,meal,{amount},CNY,,yes\n")
    assert any("row 3" in e.value and "amount" in e.value for e in at.error), [e.value for e in at.error]
    at.button(key="reimb_check").click().run()
    assert not at.exception, at.exception


def test_a_200_kb_field_is_a_row_error(page: AppTest) -> None:
    at = paste(page, f"{HEADER}\n2026-05-01,杭州,hotel,650,CNY,{'x' * 200_000},yes\n")
    assert any("row 2" in e.value for e in at.error)
    assert all(len(e.value) < 2000 for e in at.error)  # the field is not echoed back


def test_cr_only_line_endings_import(page: AppTest) -> None:
    at = paste(page, "\r".join([HEADER, "2026-05-01,杭州,hotel,650,CNY,,yes", "2026-05-02,杭州,meal,80,CNY,,no"]))
    assert any("2 item(s) imported" in s.value for s in at.success), [e.value for e in at.error]
    at.button(key="reimb_check").click().run()
    assert not at.exception, at.exception
    assert any("check" in df.value.columns for df in at.dataframe)
