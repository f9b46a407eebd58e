"""Issue 14: the Reimbursement page showed tracebacks for amounts ``nan``, ``inf``, ``1e309``, a 200 KB
field and CR-only line endings. Each now gives a row error (or is read correctly) and no traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.usefixtures("no_internet")
ROOT = Path(__file__).resolve().parents[2]
HEAD = "date,city,category,amount,currency,note,receipt"


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'reimb.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    for var in ("LLM_API_KEY", "OPENAI_API_KEY", "EMPLOYEE_GRADE", "TRAVEL_POLICY_FILE"):
        monkeypatch.delenv(var, raising=False)
    st.cache_resource.clear()
    yield url
    st.cache_resource.clear()


def pasted(text: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / "reimbursement.py"), default_timeout=60).run()
    at.text_area(key="reimb_paste").input(text)
    at.button(key="reimb_paste_add").click().run()
    return at


@pytest.mark.parametrize("amount", ["nan", "inf", "-inf", "1e309", "Infinity"])
def test_non_finite_and_huge_amounts_are_row_errors(db_url: str, amount: str) -> None:
    at = pasted(f"{HEAD}\n2026-05-01,杭州,hotel,{amount},CNY,,yes\n")
    assert not at.exception, at.exception
    assert any("row 2" in e.value for e in at.error), [e.value for e in at.error]


def test_a_200_kb_field_is_a_row_error_that_does_not_echo_it(db_url: str) -> None:
    at = pasted(f"{HEAD}\n2026-05-01,杭州,hotel,650,CNY,{'x' * 200_000},yes\n")
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any("row 2" in e for e in errors) and all(len(e) < 1000 for e in errors)


def test_cr_only_line_endings_are_read(db_url: str) -> None:
    at = pasted(f"{HEAD}\r2026-05-01,杭州,hotel,650,CNY,night 1,yes\r2026-05-02,杭州,taxi,45,CNY,airport,no\r")
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    table = next(df.value for df in at.dataframe)
    assert len(table) == 2
