"""Expense items from an uploaded CSV: every bad row reported (row number, column, value) in one error."""

from __future__ import annotations

import math
import re
from typing import Any

from navigo_core.business.expenses.extract import _norm, _parse_date, parse_category
from navigo_core.business.expenses.models import ExpenseImportError, ExpenseItem
from navigo_core.errors import InputError
from navigo_core.understand import currency_code, parse_amount, parse_budget

_HEADERS: dict[str, tuple[str, ...]] = {
    "date": ("date", "日期"),
    "city": ("city", "城市", "地点"),
    "category": ("category", "type", "类别", "类型", "费用类型"),
    "amount": ("amount", "金额", "费用"),
    "currency": ("currency", "币种", "货币"),
    "note": ("note", "notes", "description", "备注", "说明"),
    "receipt": ("receipt", "receipts", "invoice", "发票", "票据", "凭证"),
}
REQUIRED_COLUMNS = ("date", "city", "category", "amount")
_TRUE = {"1", "yes", "y", "true", "t", "x", "✓", "是", "有", "已附"}
_FALSE = {"", "0", "no", "n", "false", "f", "否", "无", "没有", "未附"}


MAX_AMOUNT = 100_000_000.0  # the most one item may claim, in its own currency
_NOT_A_NUMBER = re.compile(r"\d\s*[eE]\s*[+-]?\s*\d|(?<![A-Za-z])(?:nan|inf|infinity)(?![A-Za-z])", re.IGNORECASE)


def _parse_amount(text: str) -> tuple[float | None, str | None]:
    """(amount, ISO currency or None) of an amount cell ("650", "1,700", "¥650", "45 USD"); None for
    anything that is not one plain number (NaN, infinity, an exponent such as 1e309, digits left over)."""
    if _NOT_A_NUMBER.search(text):
        return None, None
    try:
        budget = parse_budget(text)
        if budget is not None:
            a, b = getattr(budget, "span", (0, len(text)))
            if any(ch.isdigit() for ch in text[:a] + text[b:]):  # "¥1 2": not one amount
                return None, None
            return float(budget.amount), budget.currency
        amount = parse_amount(text)
    except (ArithmeticError, ValueError):  # a number too big to be one
        return None, None
    return (float(amount) if amount is not None else None), None


def _currency(text: str) -> str | None:
    """ISO code of a currency cell ("CNY", "usd", "元", "$"); any other three-letter code as it is."""
    return currency_code(text) or (text.upper() if re.fullmatch(r"[A-Za-z]{3}", text) else None)


def _field_limits() -> dict[str, int]:
    """The longest cell of each column (the limits of navigo_core.limits: a field, a note as long as a message)."""
    from navigo_core.limits import current

    lim = current()
    return {"note": lim.message_chars, "*": lim.field_chars}


def import_csv(data: bytes | str) -> list[ExpenseItem]:
    """Items from CSV (header row required: date, city, category, amount; optional currency, note, receipt).

    Robust to what spreadsheets write: UTF-8 with or without BOM, UTF-16 with a BOM, GB18030/GBK; comma,
    semicolon, tab or bar delimiters; any line ending (CR-only too). Every bad row is reported with its row
    number in one :class:`ExpenseImportError` (never a ``csv.Error`` or a traceback): an amount that is not
    one plain positive number (NaN, infinity, 1e309) or above :data:`MAX_AMOUNT`, a cell longer than the
    field limit, a record the CSV reader cannot read.
    """
    from navigo_core.errors import clip
    from navigo_core.tabular import decode, read_rows, sniff_delimiter

    try:
        text = decode(data)
    except InputError:
        raise ExpenseImportError([{"row": 1, "column": "-", "value": "", "code": "expense.error.encoding"}]) from None
    if not text.strip():
        raise ExpenseImportError([{"row": 1, "column": "-", "value": "", "code": "expense.error.empty"}])
    known = {n for names in _HEADERS.values() for n in names}
    records = read_rows(text, sniff_delimiter(text, known))
    first = next(records, None)
    header = first[1] if first is not None and first[1] is not None else []
    columns: dict[str, int] = {}
    for i, name in enumerate(header):
        key = _norm(name).lower()
        for field, names in _HEADERS.items():
            if key in names and field not in columns:
                columns[field] = i
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise ExpenseImportError([{"row": 1, "column": c, "value": "", "code": "expense.error.missing_column"}
                                  for c in missing])
    limits = _field_limits()
    items: list[ExpenseItem] = []
    errors: list[dict[str, Any]] = []
    for row_no, row, problem in records:
        if problem is not None or row is None:
            errors.append({"row": row_no, "column": "-", "value": "", "code": problem or "upload.bad_row"})
            continue
        if not any(c.strip() for c in row):
            continue
        bad = len(errors)
        cells: dict[str, str] = {}
        for field, i in columns.items():
            raw = row[i] if i < len(row) else ""
            if len(raw) > limits.get(field, limits["*"]):  # before any parsing: a huge cell is not read
                errors.append({"row": row_no, "column": field, "value": clip(raw, 40), "code": "expense.error.too_long"})
                raw = ""
            cells[field] = _norm(raw)
        if len(errors) > bad:
            continue

        def cell(field: str) -> str:
            return cells.get(field, "")

        day = _parse_date(cell("date"))
        if day is None:
            errors.append({"row": row_no, "column": "date", "value": clip(cell("date"), 40), "code": "expense.error.date"})
        city = cell("city")
        if not city:
            errors.append({"row": row_no, "column": "city", "value": "", "code": "expense.error.city"})
        category = parse_category(cell("category"))
        if category is None:
            errors.append({"row": row_no, "column": "category", "value": clip(cell("category"), 40),
                           "code": "expense.error.category"})
        amount, written = _parse_amount(cell("amount"))
        if amount is None and _NOT_A_NUMBER.search(cell("amount")):
            errors.append({"row": row_no, "column": "amount", "value": clip(cell("amount"), 40),
                           "code": "expense.error.amount_not_number"})
        elif amount is None or not math.isfinite(amount) or amount <= 0:
            errors.append({"row": row_no, "column": "amount", "value": clip(cell("amount"), 40),
                           "code": "expense.error.amount"})
        elif amount > MAX_AMOUNT:
            errors.append({"row": row_no, "column": "amount", "value": clip(cell("amount"), 40),
                           "code": "expense.error.amount_too_large"})
        currency = _currency(cell("currency")) if cell("currency") else (written or "CNY")
        if currency is None:
            errors.append({"row": row_no, "column": "currency", "value": clip(cell("currency"), 40),
                           "code": "expense.error.currency"})
        receipt_raw = cell("receipt").lower()
        if receipt_raw not in _TRUE | _FALSE:
            errors.append({"row": row_no, "column": "receipt", "value": clip(cell("receipt"), 40),
                           "code": "expense.error.receipt"})
        # no new error: every value was read (the None checks only say so to the type checker)
        if (len(errors) == bad and day is not None and category is not None and amount is not None
                and currency is not None):
            try:
                items.append(ExpenseItem(date=day, city=city, category=category, amount=amount,
                                         currency=currency, note=cell("note"), receipt=receipt_raw in _TRUE))
            except ValueError:  # pydantic's ValidationError: a value the model refuses
                errors.append({"row": row_no, "column": "-", "value": "", "code": "upload.bad_row"})
    if errors:
        raise ExpenseImportError(errors)
    if not items:
        raise ExpenseImportError([{"row": 2, "column": "-", "value": "", "code": "expense.error.no_rows"}])
    return items
