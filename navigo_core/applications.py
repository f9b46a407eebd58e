"""Business-travel applications: draft → submitted → approved / rejected / cancelled.

* :class:`Application` — number (``TA-2026-0001``), traveller, purpose, origin, cities, dates,
  estimated cost, policy excesses (each with its justification), status, approver's comment.
* :class:`ApplicationService` ``(store)`` — :meth:`~ApplicationService.create`,
  :meth:`~ApplicationService.create_from_plan` (a :class:`PlannerState`),
  :meth:`~ApplicationService.create_from_text` (``parse_request``), :meth:`~ApplicationService.submit`,
  :meth:`~ApplicationService.modify` (dates / cities / purpose), :meth:`~ApplicationService.cancel`,
  :meth:`~ApplicationService.approve` / :meth:`~ApplicationService.reject` (with a comment),
  :meth:`~ApplicationService.find` (a number or a description: "my Hangzhou trip" / "我的杭州出差";
  several matches raise :class:`AmbiguousApplication` listing them, never a guess).
* Every change is audited (who, when, what: field old → new): :meth:`~ApplicationService.audit`.
* :func:`policy_excesses` — the travel policy's excesses for a trip (``navigo_core.policy.check_trip``).

Errors are :class:`ApplicationError` (an ``InputError``) with i18n codes ``application.error.*``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from navigo_core.errors import InputError, NavigoError
from navigo_core.i18n import t

if TYPE_CHECKING:  # pragma: no cover
    from navigo_core.planner.state import PlannerState
    from navigo_core.providers.places import PlaceProvider
    from navigo_core.store import Store

__all__ = [
    "ACTIVE_STATUSES", "STATUSES", "AmbiguousApplication", "Application", "ApplicationError", "ApplicationService",
    "AuditEntry", "FieldChange", "PolicyExcess", "PolicyUnavailable", "card_text", "extract_number",
    "policy_excesses", "require_policy",
]

Status = Literal["draft", "submitted", "approved", "rejected", "cancelled"]
STATUSES: tuple[str, ...] = ("draft", "submitted", "approved", "rejected", "cancelled")
ACTIVE_STATUSES: tuple[str, ...] = ("draft", "submitted", "approved")
EDITABLE = ("draft", "submitted", "approved")  # modifying an approved/submitted one sends it back to draft
NUMBER_RE = re.compile(r"(?<![A-Za-z0-9])TA-?\s?(\d{4})-?(\d{4})(?!\d)", re.IGNORECASE)


class ApplicationError(InputError):
    default_code = "application.error.generic"


class PolicyUnavailable(ApplicationError):
    """No readable travel policy (the file is missing, broken or unreadable, even one deleted while the app
    runs): drafting, submitting and checking claims are refused (fail closed), never "complies"."""

    default_code = "application.error.no_policy"

    def __init__(self, reason: Any = None) -> None:
        self.reason = reason  # the PolicyError (rendered in the caller's language) or a text
        super().__init__(self.default_code)

    def message(self, lang: str = "en") -> str:
        from navigo_core.errors import clip
        from navigo_core.redact import redact

        if self.reason is None:
            return t("application.error.no_policy_bare", lang)
        why = self.reason.message(lang) if isinstance(self.reason, NavigoError) else str(self.reason)
        return redact(t(self.code, lang, reason=clip(why, 400)))


def require_policy(settings: Any = None) -> Any:
    """The travel policy of ``settings`` (default: the current settings), read now; :class:`PolicyUnavailable`
    when it cannot be read, whatever the reason."""
    from navigo_core.policy import PolicyError, policy_for_settings

    try:
        if settings is None:
            from navigo_core.config import get_settings

            settings = get_settings()
        return policy_for_settings(settings)
    except PolicyError as exc:
        raise PolicyUnavailable(exc) from exc
    except Exception as exc:  # noqa: BLE001 - whatever the file holds: refuse, never check against nothing
        raise PolicyUnavailable(f"{type(exc).__name__}: {exc}") from exc


class AmbiguousApplication(ApplicationError):
    """Several applications match a description; ``candidates`` lists them (ask, never guess)."""

    def __init__(self, code: str, /, *, candidates: list[Application], query: str = "", **params: Any) -> None:
        self.candidates = list(candidates)
        listing = "; ".join(f"{a.number} ({a.short()})" for a in self.candidates)
        super().__init__(code, query=query, candidates=listing, **params)


class PolicyExcess(BaseModel):
    """One policy rule a trip exceeds (from ``navigo_core.policy.Excess``) and why it is needed."""

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

    def visits(self, city: str) -> bool:
        c = _norm(city)
        return not c or any(_norm(a) == c or (c and c in _norm(a)) or (_norm(a) and _norm(a) in c)
                            for a in [*self.aliases, *self.cities, self.origin])


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").strip().lower()


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


def extract_number(text: str) -> str | None:
    """``TA-2026-0001`` named in ``text`` (``ta 2026 0001``-ish spellings too), else None."""
    m = NUMBER_RE.search(unicodedata.normalize("NFKC", text or ""))
    return f"TA-{m.group(1)}-{m.group(2)}" if m else None


def card_text(app: Application, lang: str) -> str:
    """A card-like markdown summary of an application (the chat shows it to confirm)."""
    lines = [
        t("application.card.title", lang, number=app.number, status=t(f"application.status.{app.status}", lang)),
        t("application.card.traveller", lang, traveller=app.traveller),
        t("application.card.purpose", lang, purpose=app.purpose or "—"),
        t("application.card.route", lang, origin=app.origin or "—", cities="、".join(app.cities) or "—"),
        t("application.card.dates", lang, dates=app.dates_text(), days=app.days),
        t("application.card.cost", lang, cost=f"{app.estimated_cost:,.0f}" if app.estimated_cost else "—",
          currency=app.currency),
    ]
    if app.excesses:
        lines.append(t("application.card.excesses", lang))
        for e in app.excesses:
            why = e.justification or t("application.card.no_justification", lang)
            lines.append(f"  - {e.rule_text(lang)}" + (f" (+{e.amount_over:,.0f} {e.currency})" if e.amount_over
                                                         else "") + f" — {why}")
    else:
        lines.append(t("application.card.no_excesses", lang))
    if app.decision_comment:
        lines.append(t("application.card.comment", lang, approver=app.approver or "—", comment=app.decision_comment))
    return "\n".join(f"- {line}" if not line.startswith("  ") and i else line for i, line in enumerate(lines))


# --- policy --------------------------------------------------------------------------------

def policy_excesses(policy: Any, grade: str | None, *, cities: Iterable[str], start: date | None, end: date | None,
                    hotel_per_night: float | None = None, currency: str = "CNY", today: date | None = None,
                    checker: Callable[..., list[Any]] | None = None) -> list[PolicyExcess]:
    """The excesses of a trip under ``policy`` for ``grade`` (empty grade: the lowest), one check per city."""
    if policy is None:
        return []
    if checker is None:
        from navigo_core.policy import check_trip as checker
    grade = grade or lowest_grade(policy)
    nights = max((end - start).days, 0) if start and end else 0
    days = nights + 1 if start and end else None
    ahead = (start - today).days if start and today else None
    out: dict[str, PolicyExcess] = {}
    for city in cities:
        found = checker(policy, city=city, grade=grade, nights=max(nights, 1), hotel_per_night=hotel_per_night,
                        days=days, booked_days_ahead=ahead, currency=currency)
        for e in found:
            data = e.model_dump() if hasattr(e, "model_dump") else dict(e)
            out.setdefault(str(data.get("rule_id")), PolicyExcess(**{k: v for k, v in data.items()
                                                                      if k in PolicyExcess.model_fields}))
    return list(out.values())


def lowest_grade(policy: Any) -> str:
    low = getattr(policy, "lowest_grade", None)
    if isinstance(low, str) and low:
        return low
    grades = list(getattr(policy, "grades", None) or [])
    if not grades:
        return ""
    g = grades[0]
    return str(getattr(g, "id", g))


# --- the service ---------------------------------------------------------------------------

class ApplicationService:
    """Every operation on applications; each change goes through the store's audited repo."""

    def __init__(self, store: Store, *, clock: Callable[[], datetime] | None = None, settings: Any = None) -> None:
        self.store = store
        self.repo = store.applications
        self.clock = clock or _utcnow
        self.settings = settings  # whose TRAVEL_POLICY_FILE the business actions need (None: the current ones)

    # reading
    def _model(self, row: Mapping[str, Any] | None) -> Application | None:
        return Application.model_validate(dict(row)) if row is not None else None

    def get(self, number: str) -> Application:
        app = self._model(self.repo.get_by_number(number))
        if app is None:
            raise ApplicationError("application.error.not_found", number=number)
        return app

    def list(self, owner: str | None = None, statuses: Iterable[str] | None = None) -> list[Application]:
        return [Application.model_validate(r) for r in self.repo.list(owner, tuple(statuses) if statuses else None)]

    def pending(self) -> list[Application]:
        return self.list(statuses=("submitted",))

    def audit(self, number: str) -> list[AuditEntry]:
        app = self.get(number)
        return [AuditEntry.model_validate(r) for r in self.repo.audit(app.id)]

    def search(self, query: str, owner: str | None = None,
               statuses: Iterable[str] | None = ACTIVE_STATUSES) -> list[Application]:
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
    def create(self, *, owner: str, traveller: str | None = None, purpose: str = "", origin: str = "",
               cities: Iterable[str] = (), aliases: Iterable[str] = (), start_date: date | None = None,
               end_date: date | None = None, estimated_cost: float | None = None, currency: str = "CNY",
               excesses: Iterable[PolicyExcess | Mapping[str, Any]] = (), plan_id: str | None = None,
               actor: str | None = None) -> Application:
        cities = [c.strip() for c in cities if c and c.strip()]
        if not cities:
            raise ApplicationError("application.error.no_city")
        if start_date and end_date and end_date < start_date:
            raise ApplicationError("application.error.dates_order")
        now = self.clock()
        values = {  # no "number": the store takes the year's next one in the insert's transaction
            "owner": owner, "traveller": traveller or owner, "purpose": purpose or "",
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

    def create_from_plan(self, state: PlannerState, *, owner: str, traveller: str | None = None, purpose: str = "",
                         policy: Any = None, grade: str | None = None, plan_id: str | None = None,
                         today: date | None = None) -> Application:
        """A draft from a planned trip: route, dates, the budget's total and the policy's excesses."""
        req = state.user_request or state.parsed_request
        if req is None:
            raise ApplicationError("application.error.no_plan")
        dest = req.destination
        city = (dest.display_name(state.lang) if dest else "") or req.destination_text
        aliases = [a for a in ((dest.name, dest.name_zh) if dest else ()) if a]
        origin = (req.origin.display_name(state.lang) if req.origin else "") or req.origin_text
        cost = state.budget.total if state.budget else (req.budget.amount if req.budget else None)
        currency = state.budget.currency if state.budget else (req.budget.currency if req.budget else "CNY")
        hotel = None
        if state.budget and state.budget.nights:
            acc = sum(line.amount for line in state.budget.lines if line.category == "accommodation")
            hotel = acc / state.budget.nights / max(state.budget.rooms or 1, 1) if acc else None
        policy = policy if policy is not None else require_policy(self.settings)  # fail closed
        excesses = policy_excesses(policy, grade, cities=[city], start=req.start_date, end=req.end_date,
                                   hotel_per_night=hotel, currency=currency, today=today)
        return self.create(owner=owner, traveller=traveller, purpose=purpose, origin=origin, cities=[city],
                           aliases=aliases, start_date=req.start_date, end_date=req.end_date, estimated_cost=cost,
                           currency=currency, excesses=excesses, plan_id=plan_id)

    def create_from_text(self, text: str, *, owner: str, places: PlaceProvider, today: date,
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
        origin = (req.origin.display_name(req.lang) if req.origin else "") or req.origin_text
        currency = req.budget.currency if req.budget else "CNY"
        policy = policy if policy is not None else require_policy(self.settings)  # fail closed
        excesses = policy_excesses(policy, grade, cities=[city], start=req.start_date, end=req.end_date,
                                   currency=currency, today=today)
        return self.create(owner=owner, traveller=traveller, purpose=extract_purpose(text), origin=origin,
                           cities=[city], aliases=aliases, start_date=req.start_date, end_date=req.end_date,
                           estimated_cost=req.budget.amount if req.budget else None, currency=currency,
                           excesses=excesses)

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

    def _require(self, app: Application, allowed: Iterable[str], action: str) -> None:
        if app.status not in allowed:
            raise ApplicationError("application.error.bad_status", number=app.number, action=action,
                                   status=app.status)

    def justify(self, number: str, justifications: Mapping[str, str] | str, *, actor: str) -> Application:
        """Give the reason for each excess (a mapping rule_id → reason, or one reason for all)."""
        app = self.get(number)
        new = []
        for e in app.excesses:
            why = justifications if isinstance(justifications, str) else justifications.get(e.rule_id, "")
            new.append(e.model_copy(update={"justification": (why or e.justification).strip()}).model_dump())
        return self._change(app, {"excesses": new}, actor=actor, action="justify")

    def submit(self, number: str, *, actor: str, justifications: Mapping[str, str] | str | None = None) -> Application:
        """draft → submitted; every policy excess needs a justification first, and the travel policy must be
        readable now (:class:`PolicyUnavailable` otherwise: fail closed)."""
        app = self.get(number)
        self._require(app, ("draft",), "submit")
        require_policy(self.settings)
        if justifications:
            app = self.justify(number, justifications, actor=actor)
        if app.unjustified:
            raise ApplicationError("application.error.justification_needed", number=app.number,
                                   rules="; ".join(e.rule or e.rule_id for e in app.unjustified))
        return self._change(app, {"status": "submitted", "approver": None, "decision_comment": None},
                            actor=actor, action="submit")

    def modify(self, number: str, *, actor: str, start_date: date | None = None, end_date: date | None = None,
               cities: Iterable[str] | None = None, purpose: str | None = None, origin: str | None = None,
               aliases: Iterable[str] | None = None) -> Application:
        """Change dates / cities / purpose. A submitted or approved application goes back to draft."""
        app = self.get(number)
        self._require(app, EDITABLE, "modify")
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
        start, end = values.get("start_date", app.start_date), values.get("end_date", app.end_date)
        if start and end and end < start:
            raise ApplicationError("application.error.dates_order")
        if not values:
            raise ApplicationError("application.error.nothing_to_change", number=number)
        if app.status != "draft":
            values["status"] = "draft"
        return self._change(app, values, actor=actor, action="modify")

    def cancel(self, number: str, *, actor: str, reason: str = "") -> Application:
        app = self.get(number)
        self._require(app, ACTIVE_STATUSES, "cancel")
        return self._change(app, {"status": "cancelled"}, actor=actor, action="cancel", comment=reason or None)

    def _decide(self, number: str, status: str, approver: str, comment: str) -> Application:
        app = self.get(number)
        self._require(app, ("submitted",), "approve" if status == "approved" else "reject")
        if status == "rejected" and not (comment or "").strip():
            raise ApplicationError("application.error.comment_needed")
        return self._change(app, {"status": status, "approver": approver, "decision_comment": comment or ""},
                            actor=approver, action="approve" if status == "approved" else "reject",
                            comment=comment or None)

    def approve(self, number: str, *, approver: str, comment: str = "") -> Application:
        return self._decide(number, "approved", approver, comment)

    def reject(self, number: str, *, approver: str, comment: str) -> Application:
        return self._decide(number, "rejected", approver, comment)


_PURPOSE = (
    re.compile(r"\b(?:for|purpose(?: is)?:?|to)\s+(?P<p>(?:a |an |the )?(?:client|customer|meeting|conference|"
               r"training|visit|audit|sales|project|workshop|trade show|expo|interview)[^,.;]*)", re.IGNORECASE),
    re.compile(r"(?:目的是|事由[是:：]?|为了|(?:^|[，,。；;]))\s*(?P<p>[^，,。；;]{0,60}?(?:拜访|会议|开会|培训|考察|审计|谈判|展会|项目|面试|调研|客户)[^，,。；;]{0,60})"),
)


def extract_purpose(text: str) -> str:
    """The trip purpose named in ``text`` ("for a client meeting" / "拜访客户"), else ""."""
    norm = unicodedata.normalize("NFKC", text or "")
    for rx in _PURPOSE:
        m = rx.search(norm)
        if m:
            return m.group("p").strip(" ，,。")[:200]
    return ""


# --- helpers for the chat scenes (no UI imports) ------------------------------------------------

_STORES: dict[str, Any] = {}


def store_for(context: Any) -> Store:
    """``context.store`` when set, else one cached :class:`Store` per ``settings.database_url``."""
    store = getattr(context, "store", None)
    if store is not None:
        return store
    from navigo_core.config import get_settings
    from navigo_core.store import Store

    settings = getattr(context, "settings", None) or get_settings()
    url = settings.database_url
    if url not in _STORES:
        _STORES[url] = Store.from_url(url)
    return _STORES[url]


def user_of(context: Any) -> str:
    """The traveller / owner of the conversation (``context.user``, default ``"me"``)."""
    return str(getattr(context, "user", None) or "me")


def policy_and_grade(context: Any) -> tuple[Any, str, bool]:
    """(policy, grade, grade_assumed): ``settings.employee_grade``, else the policy's lowest grade.

    Fail closed: without a readable policy (a missing or broken ``TRAVEL_POLICY_FILE``, even one deleted
    while the app runs) it raises :class:`PolicyUnavailable`, so no business action goes on as if the
    trip complied."""
    policy = getattr(context, "policy", None) or require_policy(getattr(context, "settings", None))
    grade = str(getattr(getattr(context, "settings", None), "employee_grade", "") or "")
    if grade and grade in list(getattr(policy, "grades", []) or []):
        return policy, grade, False
    return policy, lowest_grade(policy), True
