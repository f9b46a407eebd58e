"""A checked claim as figures and as a file: the claim summary, the items as CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from navigo_core.business.applications.models import Application
from navigo_core.business.expenses.models import CATEGORIES, CheckedItem, ClaimSummary, ExpenseItem


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
