"""Expenses from text: a category word in either language, an expense date, one item from a chat message."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from navigo_core.business.expenses.models import CATEGORIES, Category, ExpenseItem
from navigo_core.understand import normalize_text, parse_amount, parse_budget, parse_dates, parse_request

_CATEGORY_WORDS: dict[Category, tuple[str, ...]] = {
    "hotel": ("hotel", "lodging", "accommodation", "住宿", "酒店", "宾馆", "房费"),
    "meal": ("meal", "meals", "food", "dinner", "lunch", "breakfast", "餐", "餐饮", "餐费", "伙食", "饭"),
    "transport": ("transport", "taxi", "cab", "uber", "didi", "metro", "subway", "bus", "parking", "fuel",
                  "交通", "出租车", "打车", "的士", "滴滴", "地铁", "公交", "停车", "油费", "市内交通"),
    "flight": ("flight", "air", "airfare", "plane", "机票", "航班", "飞机"),
    "train": ("train", "rail", "railway", "火车", "高铁", "动车", "火车票"),
    "other": ("other", "misc", "其他", "其它", "杂费"),
}


def _norm(text: Any) -> str:
    return normalize_text(str(text or ""))


def parse_category(text: str) -> Category | None:
    """A category code for a word in either language ("出租车" → transport), else None."""
    low = _norm(text).lower()
    for code in CATEGORIES:
        if low == code:
            return code
    for code, words in _CATEGORY_WORDS.items():
        if low in words:
            return code
    for code, words in _CATEGORY_WORDS.items():  # "出租车费", "taxi fare"
        if any(w in low for w in words if len(w) > 1 or not w.isascii()):
            return code
    return None


def _in_the_past(day: date, today: date) -> date:
    """An expense date: a month/day without a year is its last occurrence, not its next one."""
    while day > today:
        try:
            day = day.replace(year=day.year - 1)
        except ValueError:  # 29 February
            day = day.replace(year=day.year - 1, day=28)
    return day


def _parse_date(text: str, *, today: date | None = None) -> date | None:
    """The date in ``text`` ("2026-05-01", "2026年5月1日", "5月3日", "on May 3"), by
    :func:`navigo_core.understand.parse_dates`; without a written year, the last such day."""
    today = today or date.today()
    text = normalize_text(text)
    found = parse_dates(text, today)
    if found.start is None:
        return None
    year = any(re.search(r"\d{4}", text[a:b]) for a, b in found.spans)
    return found.start if year else _in_the_past(found.start, today)


def _expense_day(text: str, today: date) -> date:
    """The day an expense names ("昨天", "5月3日", "yesterday"), else today."""
    found = _parse_date(text, today=today)
    return found if found is not None else today


def _expense_amount(text: str, today: date) -> tuple[float | None, str]:
    """(amount, currency): an amount with a currency, else the last number that is not a date."""
    budget = parse_budget(text)
    if budget is not None:
        return budget.amount, budget.currency or "CNY"
    spans = parse_dates(text, today).spans
    bare = "".join(" " if any(a <= i < b for a, b in spans) else ch for i, ch in enumerate(text))
    amounts = [a for tok in re.findall(r"(?<![\d-])\d[\d,]*(?:\.\d+)?(?![\d-])", bare) if (a := parse_amount(tok))]
    return (amounts[-1] if amounts else None), "CNY"


def parse_expense_text(text: str, *, today: date) -> ExpenseItem | None:
    """One expense item from a message, or None when its amount, category or city is missing.

    The date, amount, currency and city come from :mod:`navigo_core.understand`; no date: today.
    """
    s = normalize_text(text)
    low = s.lower()
    day = _expense_day(s, today)
    category = None
    for code, words in _CATEGORY_WORDS.items():
        if any((re.search(rf"\b{re.escape(w)}", low) if w.isascii() else w in s) for w in words if len(w) > 1):
            category = code
            break
    amount, currency = _expense_amount(s, today)
    req = parse_request(s, today=today)
    city = req.destination_text or req.origin_text or ""
    if not (amount and category and city):
        return None
    return ExpenseItem(date=day, city=city, category=category, amount=amount, currency=currency,
                       note=s[:200], receipt=False)
