"""The service: every operation on applications through the store's audited repo, and the chat scenes' helpers."""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any

from navigo_core.auth import may_approve
from navigo_core.auth.models import norm
from navigo_core.business.applications.checks import policy_excesses, require_policy
from navigo_core.business.applications.errors import (
    AmbiguousApplication,
    ApplicationError,
    IncompleteApplication,
)
from navigo_core.business.applications.extract import extract_number, extract_purpose
from navigo_core.business.applications.models import Application, AuditEntry, PolicyExcess, _norm
from navigo_core.business.applications.states import ACTIVE_STATUSES, ROUTED_STATUSES, can

if TYPE_CHECKING:  # pragma: no cover
    from navigo_core.auth import User
    from navigo_core.config import Settings
    from navigo_core.providers.places import PlaceProvider
    from navigo_core.store import Store


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class ApplicationService:
    """Every operation on applications; each change goes through the store's audited repo."""

    def __init__(self, store: Store, *, clock: Callable[[], datetime] | None = None,
                 settings: Settings | None = None) -> None:
        self.store = store
        self.repo = store.applications
        self.clock = clock or _utcnow
        # whose TRAVEL_POLICY_FILE the business actions read (create_from_text, submit; None: the shipped policy,
        # as for PlannerDeps); the service never reads the global settings
        self.settings = settings

    # reading
    def _model(self, row: Mapping[str, Any] | None) -> Application | None:
        return Application.model_validate(dict(row)) if row is not None else None

    def get(self, number: str, owner: str | None = None) -> Application:
        """The application ``number``; with ``owner``, only that owner's: another's is ``not_found``, exactly like
        a number that does not exist (no hint that it does)."""
        app = self._model(self.repo.get_by_number(number, owner))
        if app is None:
            raise ApplicationError("application.error.not_found", number=number)
        return app

    def list(self, owner: str | None = None, statuses: Iterable[str] | None = None) -> builtins.list[Application]:
        return [Application.model_validate(r) for r in self.repo.list(owner, tuple(statuses) if statuses else None)]

    def pending(self, approver: User) -> builtins.list[Application]:
        """The submitted applications ``approver`` may decide (:meth:`decidable`)."""
        return self.in_scope(approver, statuses=("submitted",))

    def in_scope(self, approver: User, statuses: Iterable[str] | None = None) -> builtins.list[Application]:
        """The applications whose owner is in ``approver``'s scope (:func:`navigo_core.auth.may_approve`), never
        the approver's own; nobody's for a user without the approver role. ``statuses`` None: those sent for
        approval (:data:`~navigo_core.business.applications.states.ROUTED_STATUSES`), never a draft."""
        chosen = ROUTED_STATUSES if statuses is None else statuses
        return [a for a in self.list(statuses=chosen) if self.decidable(a, approver)]

    @staticmethod
    def decidable(app: Application, approver: User) -> bool:
        return may_approve(approver, app.owner, app.owner_department or "")

    def audit(self, number: str) -> builtins.list[AuditEntry]:
        app = self.get(number)
        return [AuditEntry.model_validate(r) for r in self.repo.audit(app.id)]

    def search(self, query: str, owner: str | None = None,
               statuses: Iterable[str] | None = ACTIVE_STATUSES) -> builtins.list[Application]:
        """Applications whose number is in ``query``, else whose cities (any name) appear in it."""
        number = extract_number(query)
        if number:
            app = self._model(self.repo.get_by_number(number))
            return [app] if app is not None and (owner is None or app.owner == owner) else []
        q = _norm(query)
        out = []
        for app in self.list(owner, statuses):
            names = {_norm(n) for n in [*app.cities, *app.aliases] if n and n.strip()}
            if any(n and n in q for n in names):
                out.append(app)
        return out

    def find(self, query: str, owner: str | None = None,
             statuses: Iterable[str] | None = ACTIVE_STATUSES) -> Application:
        """Exactly one application for a number or a description; else ``not_found`` / :class:`AmbiguousApplication`.

        A description naming no city matches nothing specific: with several open applications it is
        ambiguous (the error lists them), with none it is ``not_found``.
        """
        found = self.search(query, owner, statuses)
        if len(found) == 1:
            return found[0]
        if found:
            raise AmbiguousApplication("application.error.ambiguous", candidates=found, query=query)
        number = extract_number(query)
        if number:
            raise ApplicationError("application.error.not_found", number=number)
        mine = self.list(owner, statuses)
        if mine:
            raise AmbiguousApplication("application.error.which", candidates=mine, query=query)
        raise ApplicationError("application.error.none_found", query=query)

    # creating
    def create(self, *, owner: str, owner_department: str = "", traveller: str | None = None, purpose: str = "", origin: str = "",
               cities: Iterable[str] = (), aliases: Iterable[str] = (), start_date: date | None = None,
               end_date: date | None = None, estimated_cost: float | None = None, currency: str = "CNY",
               excesses: Iterable[PolicyExcess | Mapping[str, Any]] = (), plan_id: str | None = None,
               actor: str | None = None) -> Application:
        cities = [c.strip() for c in cities if c and c.strip()]
        if not cities:
            raise ApplicationError("application.error.no_city")
        if start_date and end_date and end_date < start_date:
            raise ApplicationError("application.error.dates_order")
        home = self.home_city(owner)
        origin = (origin or "").strip() or home  # given once, kept in the owner's profile
        self._keep_home_city(owner, origin, known=home)
        now = self.clock()
        values = {  # no "number": the store takes the year's next one in the insert's transaction
            "owner": owner, "owner_department": owner_department or None, "traveller": traveller or owner, "purpose": purpose or "",
            "origin": origin or "", "cities": cities, "aliases": sorted({*cities, *(a for a in aliases if a)}),
            "start_date": start_date, "end_date": end_date, "estimated_cost": estimated_cost,
            "currency": (currency or "CNY").upper(), "status": "draft", "plan_id": plan_id,
            "excesses": [PolicyExcess.model_validate(e).model_dump() if not isinstance(e, PolicyExcess)
                         else e.model_dump() for e in excesses],
            "created_at": now, "updated_at": now,
        }
        row = self.repo.insert(values, actor=actor or owner, action="create",
                               changes=[{"field": "status", "old": None, "new": "draft"}])
        return Application.model_validate(row)

    def create_from_text(self, text: str, *, owner: str, places: PlaceProvider, today: date, owner_department: str = "",
                         traveller: str | None = None, policy: Any = None, grade: str | None = None) -> Application:
        """A draft from what the user says ("apply for a business trip to Hangzhou May 1-3, budget 3000")."""
        from navigo_core.understand import parse_request

        cleaned = re.sub(r"(?:出差|差旅)(?:申请)?|申请|\b(?:business trip|travel application|apply for)\b", " ", text,
                         flags=re.IGNORECASE)
        req = parse_request(cleaned, today=today, places=places)
        dest = req.destination
        city = (dest.display_name(req.lang) if dest else "") or req.destination_text
        if not city:
            raise ApplicationError("application.error.no_city")
        aliases = [a for a in ((dest.name, dest.name_zh) if dest else ()) if a]
        origin = (req.origin.display_name(req.lang) if req.origin else "") or req.origin_text or ""
        currency = req.budget.currency if req.budget else "CNY"
        policy = policy if policy is not None else require_policy(self.settings)  # fail closed
        excesses = policy_excesses(policy, grade, cities=[city], start=req.start_date, end=req.end_date,
                                   currency=currency, today=today)
        return self.create(owner=owner, owner_department=owner_department, traveller=traveller, purpose=extract_purpose(text), origin=origin,
                           cities=[city], aliases=aliases, start_date=req.start_date, end_date=req.end_date,
                           estimated_cost=req.budget.amount if req.budget else None, currency=currency,
                           excesses=excesses)

    # the owner's profile: the home city is the origin given once
    def home_city(self, owner: str) -> str:
        """The home city kept in ``owner``'s profile ("" when none was given)."""
        profiles = getattr(self.store, "profiles", None)
        return str((profiles.get(owner).get("home_city") if profiles is not None else None) or "")

    def _keep_home_city(self, owner: str, origin: str, known: str | None = None) -> None:
        """The first origin ``owner`` gives becomes their home city (later trips from elsewhere do not change it).
        ``known``: the home city already read (None: read it here)."""
        profiles = getattr(self.store, "profiles", None)
        home = self.home_city(owner) if known is None else known
        if profiles is not None and origin.strip() and not home:
            profiles.remember(owner, home_city=origin.strip())

    # changing
    def _change(self, app: Application, values: dict[str, Any], *, actor: str, action: str,
                comment: str | None = None) -> Application:
        changes = []
        for key, new in values.items():
            old = getattr(app, key)
            if key == "excesses":
                old = [e.model_dump() for e in app.excesses]
            if old != new:
                changes.append({"field": key, "old": old, "new": new})
        row = self.repo.update(app.id, values, actor=actor, action=action, changes=changes, comment=comment,
                               at=self.clock())
        return Application.model_validate(row)

    def _require(self, app: Application, action: str) -> None:
        if not can(app.status, action):
            raise ApplicationError("application.error.bad_status", number=app.number, action=action,
                                   status=app.status)

    def justify(self, number: str, justifications: Mapping[str, str] | str, *, actor: str) -> Application:
        """Give the reason for each excess (a mapping rule_id → reason, or one reason for all). Only the owner
        (``actor``) may: another's application is ``not_found``, as are submit, modify and cancel."""
        app = self.get(number, owner=actor)
        new = []
        for e in app.excesses:
            why = justifications if isinstance(justifications, str) else justifications.get(e.rule_id, "")
            new.append(e.model_copy(update={"justification": (why or e.justification).strip()}).model_dump())
        return self._change(app, {"excesses": new}, actor=actor, action="justify")

    def submit(self, number: str, *, actor: str, justifications: Mapping[str, str] | str | None = None) -> Application:
        """draft → submitted; every required field must be filled (:class:`IncompleteApplication` lists the
        missing ones), every policy excess needs a justification first, and the travel policy must be readable
        now (:class:`PolicyUnavailable` otherwise: fail closed). Justifications given are saved even when the
        submission is refused."""
        app = self.get(number, owner=actor)
        self._require(app, "submit")
        require_policy(self.settings)
        if justifications:
            app = self.justify(number, justifications, actor=actor)
        if app.missing:
            raise IncompleteApplication(app.number, app.missing)
        if app.unjustified:
            raise ApplicationError("application.error.justification_needed", number=app.number,
                                   rules="; ".join(e.rule or e.rule_id for e in app.unjustified))
        return self._change(app, {"status": "submitted", "approver": None, "decision_comment": None},
                            actor=actor, action="submit")

    def modify(self, number: str, *, actor: str, start_date: date | None = None, end_date: date | None = None,
               cities: Iterable[str] | None = None, purpose: str | None = None, origin: str | None = None,
               aliases: Iterable[str] | None = None, estimated_cost: float | None = None,
               currency: str | None = None) -> Application:
        """Change dates / cities / purpose / origin / estimated cost. A submitted or approved application goes
        back to draft."""
        app = self.get(number, owner=actor)
        self._require(app, "modify")
        values: dict[str, Any] = {}
        if start_date is not None:
            values["start_date"] = start_date
        if end_date is not None:
            values["end_date"] = end_date
        if cities is not None:
            new_cities = [c.strip() for c in cities if c and c.strip()]
            if not new_cities:
                raise ApplicationError("application.error.no_city")
            values["cities"] = new_cities
            values["aliases"] = sorted({*new_cities, *(a for a in (aliases or ()) if a)})
        if purpose is not None:
            values["purpose"] = purpose
        if origin is not None:
            values["origin"] = origin
            self._keep_home_city(app.owner, origin)
        if estimated_cost is not None:
            if not (estimated_cost > 0):
                raise ApplicationError("application.error.bad_cost")
            values["estimated_cost"] = float(estimated_cost)
        if currency:
            values["currency"] = currency.upper()[:3]
        start, end = values.get("start_date", app.start_date), values.get("end_date", app.end_date)
        if start and end and end < start:
            raise ApplicationError("application.error.dates_order")
        if not values:
            raise ApplicationError("application.error.nothing_to_change", number=number)
        if app.status != "draft":
            values["status"] = "draft"
        return self._change(app, values, actor=actor, action="modify")

    def cancel(self, number: str, *, actor: str, reason: str = "") -> Application:
        app = self.get(number, owner=actor)
        self._require(app, "cancel")
        return self._change(app, {"status": "cancelled"}, actor=actor, action="cancel", comment=reason or None)

    def _decide(self, number: str, status: str, approver: User, comment: str) -> Application:
        """Approve or reject: only an approver whose scope holds the owner (``may_approve``), never the owner;
        the audit trail records the approver's user id."""
        app = self.get(number)
        if norm(app.owner) in approver.identifiers:
            raise ApplicationError("application.error.own_approval", number=app.number)
        if not self.decidable(app, approver):
            raise ApplicationError("application.error.not_in_scope", number=app.number)
        self._require(app, "approve" if status == "approved" else "reject")
        if status == "rejected" and not (comment or "").strip():
            raise ApplicationError("application.error.comment_needed")
        return self._change(app, {"status": status, "approver": approver.id, "decision_comment": comment or ""},
                            actor=approver.id, action="approve" if status == "approved" else "reject",
                            comment=comment or None)

    def approve(self, number: str, *, approver: User, comment: str = "") -> Application:
        return self._decide(number, "approved", approver, comment)

    def reject(self, number: str, *, approver: User, comment: str) -> Application:
        return self._decide(number, "rejected", approver, comment)


# --- helpers for the chat scenes (no UI imports) ------------------------------------------------

def store_for(context: Any) -> Store:
    """``context.store``: the store is passed in (``GateContext.store``; the chat service sets it). A scene that
    keeps records without one is a wiring mistake of the caller: ``ValueError``."""
    store = getattr(context, "store", None)
    if store is None:
        raise ValueError("this scene keeps records: pass the Store in GateContext.store")
    return store


def user_of(context: Any) -> str:
    """The traveller / owner of the conversation: ``context.user``, the signed-in user's id (the chat service
    sets it to the thread's owner). There is no default user: a scene that acts for someone without one is a
    wiring mistake of the caller: ``ValueError``."""
    user = getattr(context, "user", None)
    if not user or not str(user).strip():
        raise ValueError("this scene acts for a user: pass the user's id in GateContext.user")
    return str(user)


def department_of(context: Any) -> str:
    """The department of the conversation's user (``context.user_department``; "" when unknown)."""
    return str(getattr(context, "user_department", "") or "")
