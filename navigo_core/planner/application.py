"""The travel application a plan drafts, as plain data: route, dates, the budget's total and every policy excess.

The business package sits below the planner and never reads a :class:`PlannerState`; the plan page passes the
fields :func:`draft_from_plan` reads to ``ApplicationService.create``::

    svc.create(owner=..., purpose=..., plan_id=..., **draft_from_plan(state, policy, grade, today=today))

:func:`plan_excesses` runs the same check as the plan's (:func:`navigo_core.planner.agents.policy_check.check_inputs`)
for the application's grade. The caller reads the policy (``policy_and_grade`` / ``require_policy`` of
:mod:`navigo_core.business.applications`: fail closed) and passes it in.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any, TypedDict

from navigo_core.business.applications.errors import ApplicationError
from navigo_core.planner.agents.policy_check import check_inputs
from navigo_core.planner.state import PlannerState

if TYPE_CHECKING:  # pragma: no cover
    from navigo_core.business.policy import TravelPolicy


class PlanDraft(TypedDict):
    """The keyword arguments of ``ApplicationService.create`` a plan gives (owner, purpose, plan_id: the caller's)."""

    origin: str
    cities: list[str]
    aliases: list[str]
    start_date: date | None
    end_date: date | None
    estimated_cost: float | None
    currency: str
    excesses: list[dict[str, Any]]


def plan_excesses(state: PlannerState, policy: TravelPolicy, grade: str | None, *,
                  today: date | None = None) -> list[dict[str, Any]]:
    """Every excess of a planned trip for ``grade`` (``Excess`` dumps, one per rule): the same check as the plan's
    (hotel rate, meals, transport, cabin, advance booking: :func:`check_inputs`), plus any excess the plan showed
    for that grade, so the application carries all of them (never only the hotel's)."""
    from navigo_core.business.policy import check_trip

    gid = policy.resolve_grade(grade)[0]
    out: dict[str, dict[str, Any]] = {}
    if state.budget is not None:
        inputs, _evidence = check_inputs(state, today or date.today())
        for e in check_trip(policy, grade=gid, **inputs):
            out.setdefault(e.rule_id, e.model_dump())
    for shown in state.policy_excesses or []:
        if str(shown.get("grade") or gid) == gid and shown.get("rule_id"):
            out.setdefault(str(shown["rule_id"]), dict(shown))
    return list(out.values())


def draft_from_plan(state: PlannerState, policy: TravelPolicy, grade: str | None, *,
                    today: date | None = None) -> PlanDraft:
    """A draft from a planned trip: route, dates, the budget's total and the policy's excesses
    (``application.error.no_plan`` without a request)."""
    req = state.user_request or state.parsed_request
    if req is None:
        raise ApplicationError("application.error.no_plan")
    dest = req.destination
    city = (dest.display_name(state.lang) if dest else "") or req.destination_text
    aliases = [a for a in ((dest.name, dest.name_zh) if dest else ()) if a]
    origin = (req.origin.display_name(state.lang) if req.origin else "") or req.origin_text
    cost = state.budget.total if state.budget else (req.budget.amount if req.budget else None)
    currency = state.budget.currency if state.budget else (req.budget.currency if req.budget else "CNY")
    excesses = plan_excesses(state, policy, grade, today=today)
    return PlanDraft(origin=origin, cities=[city], aliases=aliases, start_date=req.start_date, end_date=req.end_date,
                     estimated_cost=cost, currency=currency, excesses=excesses)
