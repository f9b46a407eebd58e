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
* Every change is audited (who, when, what: field old → new): :meth:`~ApplicationService.audit`;
  :func:`audit_lines` renders it as readable sentences in the user's language.
* A draft missing a required field (:data:`REQUIRED_FIELDS`: ``Application.missing``) is "incomplete", never
  "within the policy", and :meth:`~ApplicationService.submit` refuses it (:class:`IncompleteApplication`).
* :func:`policy_excesses` — the travel policy's excesses for a trip (``navigo_core.policy.check_trip``);
  :func:`plan_excesses` — every excess of a planned trip (the plan check's inputs, meals included).
* :func:`policy_and_grade` — the policy and the traveller's grade (:func:`requested_grade`, read by
  ``TravelPolicy.resolve_grade``, the one reader of a grade).

Errors are :class:`ApplicationError` (an ``InputError``) with i18n codes ``application.error.*``.
"""

from __future__ import annotations

import builtins
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from navigo_core.errors import InputError, NavigoError
from navigo_core.i18n import t

if TYPE_CHECKING:  # pragma: no cover
    from navigo_core.config import Settings
    from navigo_core.planner.state import PlannerState
    from navigo_core.providers.places import PlaceProvider
    from navigo_core.store import Store

__all__ = [
    "ACTIVE_STATUSES", "REQUIRED_FIELDS", "STATUSES", "AmbiguousApplication", "Application", "ApplicationError",
    "ApplicationService", "AuditEntry", "FieldChange", "IncompleteApplication", "PolicyExcess", "PolicyUnavailable",
    "audit_lines", "card_text", "extract_number", "extract_purpose", "fields_text", "plan_excesses",
    "policy_and_grade", "policy_excesses", "require_policy", "requested_grade",
]

Status = Literal["draft", "submitted", "approved", "rejected", "cancelled"]
STATUSES: tuple[str, ...] = ("draft", "submitted", "approved", "rejected", "cancelled")
ACTIVE_STATUSES: tuple[str, ...] = ("draft", "submitted", "approved")
EDITABLE = ("draft", "submitted", "approved")  # modifying an approved/submitted one sends it back to draft
# what a draft needs before it can be submitted (``Application.missing``; cities are required at creation)
REQUIRED_FIELDS: tuple[str, ...] = ("purpose", "origin", "cities", "dates", "estimated_cost")
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


def require_policy(settings: Settings | None) -> Any:
    """The travel policy ``settings.travel_policy_file`` names (None or an empty setting: the shipped one, as for
    :class:`~navigo_core.planner.deps.PlannerDeps`), read now; :class:`PolicyUnavailable` when it cannot be read,
    whatever the reason. The caller passes its settings: this never reads the global ones."""
    from navigo_core.policy import PolicyError, policy_for_settings

    try:
        return policy_for_settings(settings)
    except PolicyError as exc:
        raise PolicyUnavailable(exc) from exc
    except Exception as exc:  # noqa: BLE001 - whatever the file holds: refuse, never check against nothing
        raise PolicyUnavailable(f"{type(exc).__name__}: {exc}") from exc


def fields_text(fields: Iterable[str], lang: str) -> str:
    """``purpose, origin, estimated cost`` / ``事由、出发地、预计费用``."""
    return ("、" if lang == "zh" else ", ").join(t(f"application.field.{f}", lang) for f in fields)


class IncompleteApplication(ApplicationError):
    """A draft that misses required fields (``missing``: field names) cannot be submitted; the message lists
    them in the reader's language."""

    default_code = "application.error.incomplete"

    def __init__(self, number: str, missing: Iterable[str]) -> None:
        self.missing = list(missing)
        super().__init__(self.default_code, number=number)

    def message(self, lang: str = "en") -> str:
        return t(self.code, lang, number=self.params.get("number", ""), missing=fields_text(self.missing, lang))


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
    missing = app.missing if app.status == "draft" else []
    if missing:  # never "within the policy" while the facts to check are not all there
        lines.append(t("application.card.incomplete", lang, missing=fields_text(missing, lang)))
    if app.excesses:
        lines.append(t("application.card.excesses", lang))
        for e in app.excesses:
            why = e.justification or t("application.card.no_justification", lang)
            lines.append(f"  - {e.rule_text(lang)}" + (f" (+{e.amount_over:,.0f} {e.currency})" if e.amount_over
                                                         else "") + f" — {why}")
    elif not missing:
        lines.append(t("application.card.no_excesses", lang))
    if app.decision_comment:
        lines.append(t("application.card.comment", lang, approver=app.approver or "—", comment=app.decision_comment))
    return "\n".join(f"- {line}" if not line.startswith("  ") and i else line for i, line in enumerate(lines))


# --- policy --------------------------------------------------------------------------------

def policy_excesses(policy: Any, grade: str | None, *, cities: Iterable[str], start: date | None, end: date | None,
                    hotel_per_night: float | None = None, currency: str = "CNY", today: date | None = None,
                    checker: Callable[..., list[Any]] | None = None) -> list[PolicyExcess]:
    """The excesses of a trip under ``policy`` for ``grade`` (read by ``policy.resolve_grade``: empty or unknown,
    the default grade), one check per city."""
    if policy is None:
        return []
    if checker is None:
        from navigo_core.policy import check_trip

        checker = check_trip
    gid: str = policy.resolve_grade(grade)[0]
    nights = max((end - start).days, 0) if start and end else 0
    days = nights + 1 if start and end else None
    ahead = (start - today).days if start and today else None
    out: dict[str, PolicyExcess] = {}
    for city in cities:
        found = checker(policy, city=city, grade=gid, nights=max(nights, 1), hotel_per_night=hotel_per_night,
                        days=days, booked_days_ahead=ahead, currency=currency)
        for e in found:
            data = e.model_dump() if hasattr(e, "model_dump") else dict(e)
            out.setdefault(str(data.get("rule_id")), PolicyExcess(**{k: v for k, v in data.items()
                                                                      if k in PolicyExcess.model_fields}))
    return list(out.values())


def plan_excesses(state: PlannerState, policy: Any, grade: str | None, *, today: date | None = None) -> list[PolicyExcess]:
    """Every excess of a planned trip for ``grade``: the same check as the plan's (hotel rate, meals, transport,
    cabin, advance booking: :func:`navigo_core.planner.agents.policy_check.check_inputs`), plus any excess the
    plan showed for that grade, so the application carries all of them (never only the hotel's)."""
    from navigo_core.planner.agents.policy_check import check_inputs
    from navigo_core.policy import check_trip

    gid = policy.resolve_grade(grade)[0]
    out: dict[str, PolicyExcess] = {}
    if state.budget is not None:
        inputs, _evidence = check_inputs(state, today or date.today())
        for e in check_trip(policy, grade=gid, **inputs):
            out.setdefault(e.rule_id, _excess(e))
    for shown in state.policy_excesses or []:
        if str(shown.get("grade") or gid) == gid and shown.get("rule_id"):
            out.setdefault(str(shown["rule_id"]), _excess(shown))
    return list(out.values())


def _excess(data: Any) -> PolicyExcess:
    data = data.model_dump() if hasattr(data, "model_dump") else dict(data)
    return PolicyExcess(**{k: v for k, v in data.items() if k in PolicyExcess.model_fields})


# --- the audit trail, as sentences ---------------------------------------------------------------

_AUDIT_HIDDEN = ("aliases",)  # kept for "my Hangzhou trip", not a fact anyone changed


def _audit_value(field: str, value: Any, lang: str, esc: Callable[[str], str]) -> str:
    if value in (None, "", []):
        return "—"
    if field == "status":
        return t(f"application.status.{value}", lang)
    if field == "estimated_cost" and isinstance(value, (int, float)):
        return f"{value:,.0f}"
    if isinstance(value, list):
        return ("、" if lang == "zh" else ", ").join(esc(str(v)) for v in value) or "—"
    return esc(str(value))


def _excess_changes(old: Any, new: Any, lang: str, esc: Callable[[str], str]) -> list[str]:
    """The excesses' changes: a justification given or changed, a rule that now applies or no longer does."""
    before = {e.rule_id: e for e in (_excess(x) for x in (old or []))}
    after = {e.rule_id: e for e in (_excess(x) for x in (new or []))}
    out = []
    for rule_id, e in after.items():
        rule = esc(e.rule_text(lang))
        prev = before.get(rule_id)
        if prev is None:
            out.append(t("application.audit.excess_added", lang, rule_id=rule_id, rule=rule))
        elif e.justification != prev.justification:
            out.append(t("application.audit.justified", lang, rule_id=rule_id, rule=rule,
                         text=esc(e.justification) if e.justification else "—"))
    out += [t("application.audit.excess_removed", lang, rule_id=rule_id, rule=esc(e.rule_text(lang)))
            for rule_id, e in before.items() if rule_id not in after]
    return out


def audit_lines(entries: Iterable[AuditEntry], lang: str, *, escape: Callable[[str], str] | None = None) -> list[str]:
    """One readable line per audit entry — when, who, what they did, what changed (field: old → new), the
    comment — in ``lang``. ``escape`` is applied to every value a user wrote (purpose, cities, a justification,
    a comment, who), e.g. ``ui.markdown.escape_markdown`` for a page; the app's words are left as they are."""
    esc = escape or (lambda s: s)
    sep = "；" if lang == "zh" else "; "
    out = []
    for e in entries:
        changes: list[str] = []
        for c in e.changes:
            if c.field in _AUDIT_HIDDEN:
                continue
            if c.field == "excesses":
                changes += _excess_changes(c.old, c.new, lang, esc)
                continue
            label = t(f"application.field.{c.field}", lang) if f"application.field.{c.field}" in _catalog() \
                else esc(c.field)
            changes.append(t("application.audit.change", lang, field=label, old=_audit_value(c.field, c.old, lang, esc),
                             new=_audit_value(c.field, c.new, lang, esc)))
        action = t(f"application.action.{e.action}", lang) if f"application.action.{e.action}" in _catalog() \
            else esc(e.action)
        line = t("application.audit.line", lang, at=f"{e.at:%Y-%m-%d %H:%M}", actor=esc(e.actor), action=action)
        if changes:
            line += t("application.audit.changes", lang, changes=sep.join(changes))
        if e.comment:
            line += t("application.audit.comment", lang, comment=esc(e.comment))
        out.append(line)
    return out


def _catalog() -> dict[str, Any]:
    from navigo_core.i18n import catalog

    return catalog()


# --- the service ---------------------------------------------------------------------------

class ApplicationService:
    """Every operation on applications; each change goes through the store's audited repo."""

    def __init__(self, store: Store, *, clock: Callable[[], datetime] | None = None,
                 settings: Settings | None = None) -> None:
        self.store = store
        self.repo = store.applications
        self.clock = clock or _utcnow
        # whose TRAVEL_POLICY_FILE the business actions read (create_from_*, submit; None: the shipped policy,
        # as for PlannerDeps); the service never reads the global settings
        self.settings = settings

    # reading
    def _model(self, row: Mapping[str, Any] | None) -> Application | None:
        return Application.model_validate(dict(row)) if row is not None else None

    def get(self, number: str) -> Application:
        app = self._model(self.repo.get_by_number(number))
        if app is None:
            raise ApplicationError("application.error.not_found", number=number)
        return app

    def list(self, owner: str | None = None, statuses: Iterable[str] | None = None) -> builtins.list[Application]:
        return [Application.model_validate(r) for r in self.repo.list(owner, tuple(statuses) if statuses else None)]

    def pending(self) -> builtins.list[Application]:
        return self.list(statuses=("submitted",))

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
        policy = policy if policy is not None else require_policy(self.settings)  # fail closed
        excesses = plan_excesses(state, policy, grade, today=today)
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
        origin = (req.origin.display_name(req.lang) if req.origin else "") or req.origin_text or ""
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
        """draft → submitted; every required field must be filled (:class:`IncompleteApplication` lists the
        missing ones), every policy excess needs a justification first, and the travel policy must be readable
        now (:class:`PolicyUnavailable` otherwise: fail closed). Justifications given are saved even when the
        submission is refused."""
        app = self.get(number)
        self._require(app, ("draft",), "submit")
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
    re.compile(r"(?:\b(?:for|purpose(?: is)?:?|to)\s+|(?:^|[,;])\s*)(?P<p>(?:a |an |the )?(?:client|customer|meeting|conference|"
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

def store_for(context: Any) -> Store:
    """``context.store``: the store is passed in (``GateContext.store``; the chat service sets it). A scene that
    keeps records without one is a wiring mistake of the caller: ``ValueError``."""
    store = getattr(context, "store", None)
    if store is None:
        raise ValueError("this scene keeps records: pass the Store in GateContext.store")
    return store


def user_of(context: Any) -> str:
    """The traveller / owner of the conversation (``context.user``, default ``"me"``)."""
    return str(getattr(context, "user", None) or "me")


def requested_grade(context: Any, message: str = "", policy: Any = None) -> str:
    """The grade the traveller gave, as written ("" when none): stated in ``message`` ("我是经理级",
    ``TravelPolicy.stated_grade``), else the conversation's (``context.subject["grade"]``, what the chat
    remembered), else ``settings.employee_grade``. :meth:`TravelPolicy.resolve_grade` reads it."""
    stated = policy.stated_grade(message) if policy is not None and message else None
    subject = getattr(context, "subject", None) or {}
    return str(stated or subject.get("grade") or getattr(getattr(context, "settings", None), "employee_grade", "")
               or "").strip()


def policy_and_grade(context: Any, message: str = "") -> tuple[Any, str, bool]:
    """(policy, grade, grade_assumed): :func:`requested_grade` read by ``policy.resolve_grade`` (none or an
    unknown one: the policy's default grade, assumed; say so with ``navigo_core.policy.grade_note``).

    Fail closed: without a readable policy (a missing or broken ``TRAVEL_POLICY_FILE``, even one deleted
    while the app runs) it raises :class:`PolicyUnavailable`, so no business action goes on as if the
    trip complied."""
    policy = getattr(context, "policy", None) or require_policy(getattr(context, "settings", None))
    grade, assumed = policy.resolve_grade(requested_grade(context, message, policy))
    return policy, grade, assumed
