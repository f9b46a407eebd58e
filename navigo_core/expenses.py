"""Expense items of a business trip: CSV import, policy checks, the claim summary, CSV export.

* :class:`ExpenseItem` ``(date, city, category, amount, currency, note, receipt)``.
* :func:`import_csv` ``(bytes | str) -> list[ExpenseItem]`` — English or Chinese headers; every bad row is
  reported (row number, column, value) in one :class:`ExpenseImportError`.
* :func:`check_items` ``(items, policy, grade, application=None)`` — each item against the travel policy
  (``navigo_core.policy.check_expense``) and, when given, the approved application (outside its dates /
  cities); a missing receipt is flagged too. An excess the approved application already justified and
  the approver approved (the same rule, up to the amount approved) is an *approved exception*, not a
  violation.
* :func:`claim_summary` — totals by category, excesses, missing receipts, items outside the application.
* :func:`to_csv` — the checked items as CSV (UTF-8 with BOM, opens in Excel).
* :func:`parse_expense_text` — one item from a chat message ("报销昨天在上海的出租车费 85 元").
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Iterable
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field

from navigo_core.applications import Application, PolicyExcess
from navigo_core.errors import InputError, NavigoError, clip
from navigo_core.i18n import t
from navigo_core.understand import (
    currency_code,
    normalize_text,
    parse_amount,
    parse_budget,
    parse_dates,
    parse_request,
)

__all__ = [
    "CATEGORIES", "CheckedItem", "ClaimSummary", "ExpenseImportError", "ExpenseItem", "check_items",
    "claim_summary", "import_csv", "parse_category", "parse_expense_text", "to_csv",
]

Category = Literal["hotel", "meal", "transport", "flight", "train", "other"]
CATEGORIES: tuple[Category, ...] = ("hotel", "meal", "transport", "flight", "train", "other")

_CATEGORY_WORDS: dict[Category, tuple[str, ...]] = {
    "hotel": ("hotel", "lodging", "accommodation", "住宿", "酒店", "宾馆", "房费"),
    "meal": ("meal", "meals", "food", "dinner", "lunch", "breakfast", "餐", "餐饮", "餐费", "伙食", "饭"),
    "transport": ("transport", "taxi", "cab", "uber", "didi", "metro", "subway", "bus", "parking", "fuel",
                  "交通", "出租车", "打车", "的士", "滴滴", "地铁", "公交", "停车", "油费", "市内交通"),
    "flight": ("flight", "air", "airfare", "plane", "机票", "航班", "飞机"),
    "train": ("train", "rail", "railway", "火车", "高铁", "动车", "火车票"),
    "other": ("other", "misc", "其他", "其它", "杂费"),
}
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


class ExpenseItem(BaseModel):
    date: date
    city: str
    category: Category
    amount: float = Field(gt=0, le=100_000_000.0, allow_inf_nan=False)  # MAX_AMOUNT
    currency: str = "CNY"
    note: str = ""
    receipt: bool = False


class ExpenseImportError(InputError):
    """A CSV that could not be read; ``errors`` lists each bad row (row, column, value, code)."""

    default_code = "expense.error.import"

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        self.errors = errors
        super().__init__("expense.error.import", count=len(errors), details="")

    def message(self, lang: str = "en") -> str:
        details = "; ".join(t("expense.error.row", lang, row=e["row"], column=e["column"], value=clip(e["value"], 60),
                              problem=t(e["code"], lang)) for e in getattr(self, "errors", [])[:20])
        return t(self.code, lang, count=len(getattr(self, "errors", [])), details=details)


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


# --- checks ---------------------------------------------------------------------------------

class CheckedItem(BaseModel):
    item: ExpenseItem
    excesses: list[PolicyExcess] = Field(default_factory=list)  # violations
    # excesses the approved application covers (``approved_by``: its number): shown, never flagged as violations
    approved_exceptions: list[PolicyExcess] = Field(default_factory=list)
    approved_by: str | None = None
    outside_dates: bool = False
    outside_cities: bool = False
    missing_receipt: bool = False
    policy_error: str = ""  # the policy could not check it (e.g. an unknown city), as a message code

    @property
    def ok(self) -> bool:
        return not (self.excesses or self.outside_dates or self.outside_cities or self.missing_receipt
                    or self.policy_error)

    def flags(self, lang: str) -> list[str]:
        out = [e.rule_text(lang) + (f" (+{e.amount_over:,.0f} {e.currency})" if e.amount_over else "")
               for e in self.excesses]
        out += [t("expense.flag.approved_exception", lang, number=self.approved_by or "—", rule=e.rule_text(lang),
                  over=f" (+{e.amount_over:,.0f} {e.currency})" if e.amount_over else "")
                for e in self.approved_exceptions]
        if self.outside_dates:
            out.append(t("expense.flag.outside_dates", lang))
        if self.outside_cities:
            out.append(t("expense.flag.outside_cities", lang))
        if self.missing_receipt:
            out.append(t("expense.flag.missing_receipt", lang))
        if self.policy_error:
            out.append(self.policy_error)
        return out


def _in(amount: float, src: str, dst: str) -> float:
    if src.upper() == dst.upper():
        return float(amount)
    from navigo_core.providers.prices import convert

    return float(convert(amount, src, dst))


class _Approved:
    """What an approved application allows beyond the policy: per rule, the amount approved (in the
    application's excess currency; None: a rule without an amount, e.g. the cabin), used up item by item."""

    def __init__(self, application: Application | None) -> None:
        self.number = application.number if application is not None else None
        self.left: dict[str, tuple[float | None, str]] = {}
        if application is not None and application.status == "approved":
            for e in application.excesses:
                self.left[e.rule_id] = (e.amount_over, e.currency)

    def split(self, e: PolicyExcess) -> tuple[PolicyExcess | None, PolicyExcess | None]:
        """(the approved part, the violation) of one excess."""
        if e.rule_id not in self.left:
            return None, e
        allowed, ccy = self.left[e.rule_id]
        if allowed is None or e.amount_over is None:
            return e, None
        over = _in(e.amount_over, e.currency, ccy)
        covered = min(over, max(allowed, 0.0))
        self.left[e.rule_id] = (allowed - covered, ccy)
        if over - covered <= 0.005:
            return e, None
        if covered <= 0.005:
            return None, e
        part = round(e.amount_over * covered / over, 2)
        return (e.model_copy(update={"amount_over": part}),
                e.model_copy(update={"amount_over": round(e.amount_over - part, 2)}))


def check_items(items: Iterable[ExpenseItem], policy: Any, grade: str | None, application: Application | None = None,
                *, checker: Callable[..., list[Any]] | None = None, lang: str = "en") -> list[CheckedItem]:
    """Each item against the policy (for ``grade``, read by ``policy.resolve_grade``; empty: the default grade)
    and the application.

    An excess of an item the approved ``application`` covers (its dates and destination cities, not its origin)
    under a rule the application was approved with is an approved exception up to the amount approved (summed over the items, in their
    order); only what goes beyond stays a violation. Fail closed: without a policy (``None``: it could not be
    read) the check is refused with :class:`~navigo_core.applications.PolicyUnavailable`; it never reports the
    items as compliant."""
    if policy is None:
        from navigo_core.applications import PolicyUnavailable

        raise PolicyUnavailable()
    if checker is None:
        from navigo_core.policy import check_expense as checker
    grade = policy.resolve_grade(grade)[0]
    approved = _Approved(application)
    out = []
    for item in items:
        checked = CheckedItem(item=item, missing_receipt=not item.receipt)
        if policy is not None and checker is not None:
            try:
                found = checker(policy, city=item.city, grade=grade, category=item.category, amount=item.amount,
                                currency=item.currency, nights=1, days=1)
                checked.excesses = [PolicyExcess(**{k: v for k, v in (e.model_dump() if hasattr(e, "model_dump")
                                                                      else dict(e)).items()
                                                    if k in PolicyExcess.model_fields}) for e in found]
            except NavigoError as exc:
                checked.policy_error = exc.message(lang)
        if application is not None:
            checked.outside_dates = not application.covers(item.date)
            checked.outside_cities = not application.visits(item.city)
            # an exception was approved for the trip's destinations, not for the city it starts from
            if not checked.outside_dates and application.visits(item.city, origin=False):
                violations = []
                for e in checked.excesses:
                    ok, over = approved.split(e)
                    if ok is not None:
                        checked.approved_exceptions.append(ok)
                        checked.approved_by = approved.number
                    if over is not None:
                        violations.append(over)
                checked.excesses = violations
        out.append(checked)
    return out


class ClaimSummary(BaseModel):
    currency: str
    total: float  # in ``currency`` (items in other currencies are in ``other_currencies``)
    by_category: dict[str, float]
    other_currencies: dict[str, float] = Field(default_factory=dict)
    items: int = 0
    excesses: list[dict[str, Any]] = Field(default_factory=list)  # {row, date, city, category, rule, amount_over}
    # excesses the approved application covers: {row, date, city, category, rule_id, rule, amount_over, currency,
    # application}; not violations
    approved_exceptions: list[dict[str, Any]] = Field(default_factory=list)
    missing_receipts: list[int] = Field(default_factory=list)  # 1-based item numbers
    outside: list[int] = Field(default_factory=list)  # items outside the application's dates or cities
    application_number: str | None = None


def claim_summary(checked: Iterable[CheckedItem], *, currency: str | None = None,
                  application: Application | None = None, lang: str = "en") -> ClaimSummary:
    checked = list(checked)
    main = (currency or (checked[0].item.currency if checked else "CNY")).upper()
    by_cat = {c: 0.0 for c in CATEGORIES}
    other: dict[str, float] = {}
    excesses, missing, outside, approved = [], [], [], []
    for n, c in enumerate(checked, start=1):
        if c.item.currency.upper() == main:
            by_cat[c.item.category] += c.item.amount
        else:
            other[c.item.currency] = other.get(c.item.currency, 0.0) + c.item.amount
        for e in c.excesses:
            excesses.append({"row": n, "date": c.item.date.isoformat(), "city": c.item.city,
                             "category": c.item.category, "rule": e.rule_text(lang), "amount_over": e.amount_over,
                             "currency": e.currency})
        for e in c.approved_exceptions:
            approved.append({"row": n, "date": c.item.date.isoformat(), "city": c.item.city,
                             "category": c.item.category, "rule_id": e.rule_id, "rule": e.rule_text(lang),
                             "amount_over": e.amount_over, "currency": e.currency, "application": c.approved_by})
        if c.missing_receipt:
            missing.append(n)
        if c.outside_dates or c.outside_cities:
            outside.append(n)
    return ClaimSummary(currency=main, total=round(sum(by_cat.values()), 2),
                        by_category={k: round(v, 2) for k, v in by_cat.items() if v},
                        other_currencies=other, items=len(checked), excesses=excesses, approved_exceptions=approved,
                        missing_receipts=missing,
                        outside=outside, application_number=application.number if application else None)


def to_csv(checked: Iterable[CheckedItem | ExpenseItem], lang: str = "en") -> bytes:
    """The items (with their check flags) as CSV: UTF-8 with BOM. Every text cell that a spreadsheet would
    run as a formula (``=HYPERLINK(…)``, ``+``, ``-``, ``@``, a tab, a CR first) gets a leading single quote
    (OWASP's rule against CSV injection, :func:`navigo_core.tabular.neutralise_row`)."""
    from navigo_core.tabular import neutralise_row

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["date", "city", "category", "amount", "currency", "note", "receipt", "flags"])
    for c in checked:
        item = c.item if isinstance(c, CheckedItem) else c
        flags = " | ".join(c.flags(lang)) if isinstance(c, CheckedItem) else ""
        w.writerow([item.date.isoformat(), *neutralise_row([item.city, item.category]), f"{item.amount:.2f}",
                    *neutralise_row([item.currency, item.note]), "yes" if item.receipt else "no",
                    neutralise_row([flags])[0]])
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


# --- one item from a chat message ---------------------------------------------------------------

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
