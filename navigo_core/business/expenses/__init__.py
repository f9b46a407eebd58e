"""Expense items of a business trip: CSV import, policy checks, the claim summary, CSV export.

* :class:`ExpenseItem` ``(date, city, category, amount, currency, note, receipt)``.
* :func:`import_csv` ``(bytes | str) -> list[ExpenseItem]`` — English or Chinese headers; every bad row is
  reported (row number, column, value) in one :class:`ExpenseImportError`.
* :func:`check_items` ``(items, policy, grade, application=None)`` — each item against the travel policy
  (``navigo_core.business.policy.check_expense``) and, when given, the approved application (outside its dates /
  cities); a missing receipt is flagged too. An excess the approved application already justified and
  the approver approved (the same rule, up to the amount approved) is an *approved exception*, not a
  violation.
* :func:`claim_summary` — totals by category, excesses, missing receipts, items outside the application.
* :func:`to_csv` — the checked items as CSV (UTF-8 with BOM, opens in Excel).
* :func:`parse_expense_text` — one item from a chat message ("报销昨天在上海的出租车费 85 元").

Modules: ``models`` (the items, checked items, the summary), ``extract`` (categories, dates, an item from a
message), ``importing`` (CSV upload), ``checks`` (policy and application), ``render`` (summary, CSV export).
"""

from __future__ import annotations

from navigo_core.business.expenses.checks import check_items
from navigo_core.business.expenses.extract import parse_category, parse_expense_text
from navigo_core.business.expenses.importing import MAX_AMOUNT, import_csv
from navigo_core.business.expenses.models import (
    CATEGORIES,
    CheckedItem,
    ClaimSummary,
    ExpenseImportError,
    ExpenseItem,
)
from navigo_core.business.expenses.render import claim_summary, to_csv

__all__ = [
    "CATEGORIES", "MAX_AMOUNT", "CheckedItem", "ClaimSummary", "ExpenseImportError", "ExpenseItem", "check_items",
    "claim_summary", "import_csv", "parse_category", "parse_expense_text", "to_csv",
]
