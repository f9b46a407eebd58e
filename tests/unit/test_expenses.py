"""Expense items: CSV import (with row errors), policy and application checks, claim summary, CSV export."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from navigo_core.business.applications import Application
from navigo_core.business.expenses import (
    ExpenseImportError,
    ExpenseItem,
    check_items,
    claim_summary,
    import_csv,
    parse_expense_text,
    to_csv,
)
from navigo_core.business.policy import load_policy

CSV = """date,city,category,amount,currency,note,receipt
2026-05-01,杭州,hotel,650,CNY,Hotel night 1,yes
2026-05-01,Hangzhou,taxi,45,CNY,airport,no
2026-05-02,杭州,餐饮,100,CNY,,是
2026-05-09,Beijing,transport,30,CNY,late,yes
"""
NOW = datetime(2026, 4, 1, tzinfo=timezone.utc)


def approved() -> Application:
    return Application(id="x", number="TA-2026-0001", owner="me", traveller="me", cities=["杭州"],
                       aliases=["杭州", "Hangzhou"], start_date=date(2026, 5, 1), end_date=date(2026, 5, 3),
                       status="approved", created_at=NOW, updated_at=NOW)


def test_import_csv_reads_both_languages() -> None:
    items = import_csv(CSV.encode("utf-8-sig"))
    assert [i.category for i in items] == ["hotel", "transport", "meal", "transport"]
    assert items[0].receipt and not items[1].receipt and items[2].receipt
    zh = import_csv("日期,城市,类别,金额\n2026-05-01,上海,出租车,85\n")
    assert zh[0].amount == 85 and zh[0].currency == "CNY" and zh[0].category == "transport"


def test_import_csv_reports_every_bad_row() -> None:
    bad = "date,city,category,amount,receipt\n2026-13-01,杭州,hotel,100,yes\n2026-05-01,,spa,-5,maybe\n"
    with pytest.raises(ExpenseImportError) as exc:
        import_csv(bad.encode())
    cells = {(e["row"], e["column"]) for e in exc.value.errors}
    assert cells == {(2, "date"), (3, "city"), (3, "category"), (3, "amount"), (3, "receipt")}
    assert "row 2" in exc.value.message("en") and "第 3 行" in exc.value.message("zh")
    with pytest.raises(ExpenseImportError) as exc:
        import_csv(b"when,where\n1,2\n")
    assert {e["column"] for e in exc.value.errors} == {"date", "city", "category", "amount"}
    with pytest.raises(ExpenseImportError):
        import_csv(b"")


def test_checks_and_summary() -> None:
    policy = load_policy()
    checked = check_items(import_csv(CSV), policy, "", approved())  # empty grade: the lowest
    hotel, taxi, meal, beijing = checked
    assert [e.rule_id for e in hotel.excesses] == ["HOTEL-1"] and hotel.excesses[0].amount_over == 250
    assert taxi.missing_receipt and not taxi.excesses and not taxi.outside_cities
    assert meal.ok
    assert beijing.outside_dates and beijing.outside_cities
    summary = claim_summary(checked, application=approved())
    assert summary.total == 825 and summary.by_category == {"hotel": 650, "transport": 75, "meal": 100}
    assert summary.missing_receipts == [2] and summary.outside == [4] and len(summary.excesses) == 1
    assert summary.application_number == "TA-2026-0001"
    out = to_csv(checked).decode("utf-8-sig")
    assert out.splitlines()[0] == "date,city,category,amount,currency,note,receipt,flags"
    assert "receipt missing" in out and "outside the approved cities" in to_csv(checked).decode("utf-8-sig")
    assert import_csv(to_csv(checked))[0].amount == 650  # the export re-imports


def test_parse_expense_text() -> None:
    item = parse_expense_text("报销昨天在上海的出租车费 85 元", today=date(2026, 5, 10))
    assert item == ExpenseItem(date=date(2026, 5, 9), city="上海", category="transport", amount=85, currency="CNY",
                               note="报销昨天在上海的出租车费 85 元", receipt=False)
    en = parse_expense_text("Reimburse a hotel in Shanghai on 2026-05-02, 900 CNY", today=date(2026, 5, 10))
    assert en is not None and (en.city, en.category, en.amount, en.date) == ("Shanghai", "hotel", 900, date(2026, 5, 2))
    assert parse_expense_text("我要报销", today=date(2026, 5, 10)) is None


@pytest.mark.parametrize("text, expected", [
    ("报销前天在北京的餐费 120.5元", (date(2026, 5, 8), "北京", "meal", 120.5, "CNY")),
    ("报销5月3日在杭州的打车费 1200", (date(2026, 5, 3), "杭州", "transport", 1200, "CNY")),  # last 3 May, not next
    ("claim a taxi in shanghai yesterday, $85", (date(2026, 5, 9), "shanghai", "transport", 85, "USD")),
    ("expense: dinner in Tokyo on May 3, 45.20 EUR", (date(2026, 5, 3), "Tokyo", "meal", 45.2, "EUR")),
    ("报销在上海的出租车费85", (date(2026, 5, 10), "上海", "transport", 85, "CNY")),  # no date: today
])
def test_parse_expense_text_dates_amounts_currencies(text: str, expected: tuple) -> None:
    item = parse_expense_text(text, today=date(2026, 5, 10))
    assert item is not None and (item.date, item.city, item.category, item.amount, item.currency) == expected


def test_import_csv_amount_and_currency_words() -> None:
    items = import_csv("date,city,category,amount,currency\n2026/5/1,上海,hotel,\"1,700\",元\n"
                       "2026年5月2日,Tokyo,meal,¥3500,JPY\n2026-05-03,Paris,meal,45,eur\n")
    assert [(i.date, i.amount, i.currency) for i in items] == [
        (date(2026, 5, 1), 1700, "CNY"), (date(2026, 5, 2), 3500, "JPY"), (date(2026, 5, 3), 45, "EUR")]
