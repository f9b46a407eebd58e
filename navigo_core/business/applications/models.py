"""Business-travel applications: the records (:class:`Application`, its :class:`PolicyExcess` items, the audit
trail's :class:`AuditEntry` / :class:`FieldChange`) and the fields a draft needs (:data:`REQUIRED_FIELDS`)."""

from __future__ import annotations

import unicodedata
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, Field

from navigo_core.business.applications.states import Status

# what a draft needs before it can be submitted (``Application.missing``; cities are required at creation)
REQUIRED_FIELDS: tuple[str, ...] = ("purpose", "origin", "cities", "dates", "estimated_cost")


class PolicyExcess(BaseModel):
    """One policy rule a trip exceeds (from ``navigo_core.business.policy.Excess``) and why it is needed."""

    rule_id: str
    rule: str = ""
    rule_zh: str = ""
    amount_over: float | None = None
    currency: str = "CNY"
    message: str = ""
    message_zh: str = ""
    justification: str = ""

    def rule_text(self, lang: str) -> str:
        return (self.rule_zh if lang == "zh" else "") or self.rule or self.message or self.rule_id


class FieldChange(BaseModel):
    field: str
    old: Any = None
    new: Any = None


class AuditEntry(BaseModel):
    at: datetime
    actor: str
    action: str  # create | submit | modify | cancel | approve | reject | justify
    changes: list[FieldChange] = Field(default_factory=list)
    comment: str | None = None


class Application(BaseModel):
    id: str
    number: str
    owner: str
    owner_department: str | None = None  # the owner's department when it was created (whose approvers decide)
    traveller: str
    purpose: str = ""
    origin: str = ""
    cities: list[str] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)
    start_date: date | None = None
    end_date: date | None = None
    estimated_cost: float | None = None
    currency: str = "CNY"
    excesses: list[PolicyExcess] = Field(default_factory=list)
    status: Status = "draft"
    approver: str | None = None
    decision_comment: str | None = None
    plan_id: str | None = None
    created_at: datetime
    updated_at: datetime

    @property
    def nights(self) -> int:
        if self.start_date and self.end_date:
            return max((self.end_date - self.start_date).days, 0)
        return 0

    @property
    def days(self) -> int:
        return self.nights + 1 if self.start_date and self.end_date else 0

    @property
    def unjustified(self) -> list[PolicyExcess]:
        return [e for e in self.excesses if not e.justification.strip()]

    @property
    def missing(self) -> list[str]:
        """The required fields (:data:`REQUIRED_FIELDS`) still empty, in that order; a draft with any is
        incomplete: neither "within the policy" nor submittable."""
        have = {"purpose": bool(self.purpose.strip()), "origin": bool(self.origin.strip()), "cities": bool(self.cities),
                "dates": self.start_date is not None, "estimated_cost": bool(self.estimated_cost)}
        return [f for f in REQUIRED_FIELDS if not have[f]]

    def dates_text(self) -> str:
        if self.start_date and self.end_date:
            return f"{self.start_date:%Y-%m-%d} → {self.end_date:%Y-%m-%d}"
        return f"{self.start_date:%Y-%m-%d}" if self.start_date else "—"

    def short(self) -> str:
        """``杭州 2026-05-01 → 2026-05-05`` (for candidate lists)."""
        return f"{'、'.join(self.cities) or '—'} {self.dates_text()}"

    def covers(self, day: date | None) -> bool:
        if day is None or self.start_date is None:
            return True
        return self.start_date <= day <= (self.end_date or self.start_date)

    def visits(self, city: str, *, origin: bool = True) -> bool:
        """``city`` is one of the trip's cities (any of their names), or its origin (``origin=False``: not)."""
        c = _norm(city)
        return not c or any(_norm(a) == c or (c and c in _norm(a)) or (_norm(a) and _norm(a) in c)
                            for a in [*self.aliases, *self.cities, *([self.origin] if origin else [])])


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").strip().lower()
