"""Business-travel applications: draft → submitted → approved / rejected / cancelled.

* :class:`Application` — number (``TA-2026-0001``), traveller, purpose, origin, cities, dates,
  estimated cost, policy excesses (each with its justification), status, approver's comment.
* :class:`ApplicationService` ``(store)`` — :meth:`~ApplicationService.create`,
  :meth:`~ApplicationService.create_from_text` (``parse_request``), :meth:`~ApplicationService.submit`,
  :meth:`~ApplicationService.modify` (dates / cities / purpose), :meth:`~ApplicationService.cancel`,
  :meth:`~ApplicationService.approve` / :meth:`~ApplicationService.reject` (with a comment),
  :meth:`~ApplicationService.find` (a number or a description: "my Hangzhou trip" / "我的杭州出差";
  several matches raise :class:`AmbiguousApplication` listing them, never a guess). A draft from a planned
  trip: ``create(**navigo_core.planner.application.draft_from_plan(state, policy, grade))`` (the planner reads
  its own state; this package never imports the planner).
* Every change is audited (who, when, what: field old → new): :meth:`~ApplicationService.audit`;
  :func:`audit_lines` renders it as readable sentences in the user's language.
* A draft missing a required field (:data:`REQUIRED_FIELDS`: ``Application.missing``) is "incomplete", never
  "within the policy", and :meth:`~ApplicationService.submit` refuses it (:class:`IncompleteApplication`).
* :func:`policy_excesses` — the travel policy's excesses for a trip (``navigo_core.business.policy.check_trip``).
* :func:`policy_and_grade` — the policy and the traveller's grade (``navigo_core.business.policy.requested_grade``, read by
  ``TravelPolicy.resolve_grade``, the one reader of a grade).

Errors are :class:`ApplicationError` (an ``InputError``) with i18n codes ``application.error.*``.

Modules: ``states`` (statuses, the transitions each allows), ``models`` (the records), ``errors``, ``extract``
(number and purpose from a message), ``checks`` (the policy in force, the grade, a trip's excesses), ``render``
(card, audit sentences), ``service`` (:class:`ApplicationService`, the scenes' helpers).
"""

from __future__ import annotations

from navigo_core.business.applications.checks import (
    policy_and_grade,
    policy_excesses,
    require_policy,
)
from navigo_core.business.applications.errors import (
    AmbiguousApplication,
    ApplicationError,
    IncompleteApplication,
    PolicyUnavailable,
)
from navigo_core.business.applications.extract import extract_number, extract_purpose
from navigo_core.business.applications.models import REQUIRED_FIELDS, Application, AuditEntry, FieldChange, PolicyExcess
from navigo_core.business.applications.render import audit_lines, card_text, fields_text
from navigo_core.business.applications.service import ApplicationService, department_of, store_for, user_of
from navigo_core.business.applications.states import ACTIVE_STATUSES, STATUSES

__all__ = [
    "ACTIVE_STATUSES", "REQUIRED_FIELDS", "STATUSES", "AmbiguousApplication", "Application", "ApplicationError",
    "ApplicationService", "AuditEntry", "FieldChange", "IncompleteApplication", "PolicyExcess", "PolicyUnavailable",
    "audit_lines", "card_text", "extract_number", "extract_purpose", "fields_text", "policy_and_grade",
    "policy_excesses", "require_policy", "store_for", "user_of",
    "department_of",
]
