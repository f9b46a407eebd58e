"""Expense claims: the items (:class:`ExpenseItem`), an item as checked (:class:`CheckedItem`), the claim's
summary (:class:`ClaimSummary`) and the import error (:class:`ExpenseImportError`)."""

from __future__ import annotations

from datetime import date  # the type of ExpenseItem.date (pydantic resolves the annotation here)
from typing import Any, Literal

from pydantic import BaseModel, Field

from navigo_core.business.applications.models import PolicyExcess
from navigo_core.errors import InputError, clip
from navigo_core.i18n import t

Category = Literal["hotel", "meal", "transport", "flight", "train", "other"]
CATEGORIES: tuple[Category, ...] = ("hotel", "meal", "transport", "flight", "train", "other")


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
