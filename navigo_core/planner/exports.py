"""Exports of a plan: Markdown (per language), JSON (snake_case, round-trips) and iCalendar."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from navigo_core.i18n import t
from navigo_core.planner.state import PlannerState


def to_json(state: PlannerState) -> str:
    """The whole state as snake_case JSON; ``PlannerState.model_validate_json`` reads it back."""
    return state.model_dump_json(indent=2)


def from_json(text: str) -> PlannerState:
    return PlannerState.model_validate_json(text)


def to_dict(state: PlannerState) -> dict:
    return json.loads(state.model_dump_json())


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(state: PlannerState, lang: str | None = None) -> str:
    lang = lang or state.lang
    L: list[str] = [f"# {t('planner.md.title', lang)}", ""]
    fp = state.final_plan
    L += [f"## {t('planner.md.summary', lang)}", "", fp.summary if fp else "-", ""]
    if state.pending_questions:
        L += [f"## {t('planner.md.questions', lang)}", ""] + [f"- {q.text}" for q in state.pending_questions] + [""]
    req = state.user_request or state.parsed_request
    L += [f"## {t('planner.md.request', lang)}", "", f"> {_cell(state.natural_language)}", ""]
    if req is not None:
        L += [f"- {k}: {v}" for k, v in (("origin", req.origin_text or getattr(req.origin, "name", "")),
                                         ("destination", req.destination_text or getattr(req.destination, "name", "")),
                                         ("dates", f"{req.start_date} → {req.end_date}"), ("budget", req.budget),
                                         ("adults", req.adults), ("children", req.children),
                                         ("interests", ", ".join(req.interests)))] + [""]
    if fp is not None and fp.refused:
        L += [f"## {t('planner.md.safety', lang)}", ""] + [f"- `{f}`" for f in state.safety_flags] + [""]
        return "\n".join(L)
    if state.destination_candidates:
        L += [f"## {t('planner.md.destinations', lang)}", ""]
        L += [f"{i}. **{(c.name_zh if lang == 'zh' else '') or c.name}** — {c.rationale}"
              for i, c in enumerate(state.destination_candidates, 1)] + [""]
    if state.flight_options is not None:
        L += [f"## {t('planner.md.flights', lang)}", ""]
        offers = [*state.flight_options, *state.return_flight_options]
        if not offers:
            L += [state.flight_note or t("planner.md.no_flights", lang), ""]
        else:
            L += ["| id | route | depart | arrive | price | |", "|---|---|---|---|---|---|"]
            for f in offers:
                mark = [t("planner.md.recommended", lang)] if f.id in (state.recommended_flight_id,
                                                                     state.recommended_return_flight_id) else []
                if f.estimated:
                    mark.append(t("planner.md.estimated", lang))
                L.append(f"| {f.id} | {f.origin}→{f.destination} | {f.depart_at:%Y-%m-%d %H:%M} | "
                         f"{f.arrive_at:%Y-%m-%d %H:%M} | {f.price:,.0f} {f.currency} | {', '.join(mark)} |")
            L.append("")
    if state.weather is not None:
        L += [f"## {t('planner.md.weather', lang)}", ""]
        avail = [w for w in state.weather if w.available]
        if not avail:
            L += [t("planner.md.no_forecast", lang), ""]
        else:
            L += [f"- {w.date}: {t(w.summary, lang)}, {w.temp_min_c}–{w.temp_max_c} °C, "
                  f"{w.precipitation_probability}% — {w.risk}" for w in avail] + [""]
    if state.itinerary:
        L += [f"## {t('planner.md.itinerary', lang)}", ""]
        for d in state.itinerary:
            L += [f"### {t('planner.md.day', lang, n=d.day)} — {d.date} · {d.city}", ""]
            L += [f"- {a.title}" + (f" ({t('pois.from_source', lang, source=a.source)})" if a.source else "")
                  for a in d.activities] + [f"- _{n}_" for n in d.notes] + [""]
    b = state.budget
    if b is not None:
        L += [f"## {t('planner.md.budget', lang)}", "", "| category | formula | amount |", "|---|---|---|"]
        L += [f"| {x.category} | {_cell(x.formula)} | {x.amount:,.2f} {x.currency} |" for x in b.lines]
        L += [f"| **{t('planner.md.total', lang)}** | | **{b.total:,.2f} {b.currency}** |"]
        if b.budget is not None:
            L += [f"| {t('planner.md.budget_limit', lang)} | | {b.budget:,.2f} {b.currency} |"]
        L += ["", f"_{b.note}_", ""] + [f"- `{f}`" for f in b.flags] + [f"- {tip}" for tip in b.tips] + [""]
    if state.packing:
        L += [f"## {t('planner.md.packing', lang)}", ""]
        L += [f"- [ ] {p.label} — {p.reason}" for p in state.packing] + [""]
    L += [f"## {t('planner.md.safety', lang)}", ""]
    if state.validation:
        L += [f"- `{v.code}` {v.message}" for v in state.validation]
    elif state.validation is not None:
        L.append(t("planner.md.clean", lang))
    L += [f"- `{f}`" for f in state.safety_flags] + [""]
    L += [f"## {t('planner.md.log', lang)}", "", "| # | agent | mode | output | flags | time |", "|---|---|---|---|---|---|"]
    L += [f"| {i} | {e.agent} | {e.mode} | {_cell(e.output_summary)} | {', '.join(e.risk_flags)} | {e.timestamp} |"
          for i, e in enumerate(state.decision_log, 1)]
    return "\n".join(L) + "\n"


def to_ics(state: PlannerState) -> bytes:
    """One all-day event per itinerary day, plus each recommended flight as a timed event."""
    from icalendar import Calendar, Event

    lang = state.lang
    cal = Calendar()
    cal.add("prodid", "-//NaviGo Workbench//planner//EN")
    cal.add("version", "2.0")
    stamp = None
    if state.decision_log:
        from datetime import datetime

        stamp = datetime.fromisoformat(state.decision_log[-1].timestamp)
    uid_base = hashlib.sha1(state.natural_language.encode("utf-8")).hexdigest()[:12]
    for d in state.itinerary or []:
        ev = Event()
        ev.add("uid", f"navigo-{uid_base}-day{d.day}@navigo")
        ev.add("summary", t("planner.ics.day", lang, n=d.day, city=d.city))
        ev.add("dtstart", d.date)
        ev.add("dtend", d.date + timedelta(days=1))
        ev.add("description", "\n".join([*(a.title for a in d.activities), *d.notes]))
        ev.add("location", d.city)
        if stamp is not None:
            ev.add("dtstamp", stamp)
        cal.add_component(ev)
    for fid in (state.recommended_flight_id, state.recommended_return_flight_id):
        f = state.flight_by_id(fid)
        if f is None:
            continue
        ev = Event()
        ev.add("uid", f"navigo-{uid_base}-{f.id}@navigo")
        ev.add("summary", t("planner.ics.flight", lang, origin=f.origin, destination=f.destination))
        ev.add("dtstart", f.depart_at)
        ev.add("dtend", f.arrive_at)
        ev.add("description", f"{f.id} · {f.price:,.0f} {f.currency}" + (" (estimate)" if f.estimated else ""))
        if stamp is not None:
            ev.add("dtstamp", stamp)
        cal.add_component(ev)
    return cal.to_ical()
