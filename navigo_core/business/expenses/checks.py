"""Expense items against the travel policy and the approved application (dates, cities, approved exceptions)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from navigo_core.business.applications.models import Application, PolicyExcess
from navigo_core.business.expenses.models import CheckedItem, ExpenseItem
from navigo_core.errors import NavigoError


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
    read) the check is refused with :class:`~navigo_core.business.applications.PolicyUnavailable`; it never reports the
    items as compliant."""
    if policy is None:
        from navigo_core.business.applications.errors import PolicyUnavailable

        raise PolicyUnavailable()
    if checker is None:
        from navigo_core.business.policy import check_expense as checker
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
