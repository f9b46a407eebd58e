"""Applications as text: the card the chat and the pages show, the audit trail as sentences, field names."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from navigo_core.business.applications.models import Application, AuditEntry, PolicyExcess
from navigo_core.i18n import t


def fields_text(fields: Iterable[str], lang: str) -> str:
    """``purpose, origin, estimated cost`` / ``事由、出发地、预计费用``."""
    return ("、" if lang == "zh" else ", ").join(t(f"application.field.{f}", lang) for f in fields)


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
