"""Plan page: a checked trip plan from a request, with live agent progress.

Thin: widgets → navigo_core.planner → render. The planner decides everything.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from typing import Any

import pandas as pd
import streamlit as st
from streamlit_folium import st_folium

from navigo_core.business.applications import ApplicationService, card_text, policy_and_grade
from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.planner.application import draft_from_plan
from navigo_core.planner.exports import to_ics, to_json, to_markdown
from navigo_core.planner.form import request_text
from navigo_core.maps import build_route_map
from navigo_core.maps.daymap import DayMap, day_maps
from navigo_core.planner.state import PlannerState
from navigo_core.planner.supervisor import interrupted, plan, replay, resume, started
from ui.auth import require_login
from ui.context import choice, gate_context, lang, leaflet_prefix, planner_deps, settings, show_error, store, tr
from ui.markdown import escape_markdown, safe_markdown
from ui.progress import run_with_progress

S = st.session_state
L = lang()
USER = require_login()  # plans are the signed-in user's: saved, listed and opened for them only


def _deps():
    """The planner's deps for the signed-in user (their kept grade and home city are read from their profile)."""
    return replace(planner_deps(), user=USER.id)


def _save(state: PlannerState, plan_id: str | None) -> str | None:
    """Save ``state`` as the next version of ``plan_id`` (None: a new plan); its id, or None on a storage
    fault (one sentence and what to do; the page goes on without saving)."""
    try:
        S["plan.id"], S["plan.version"] = store().plans.save(plan_id, state.natural_language,
                                                             state.model_dump(mode="json"), owner=USER.id)
        return str(S["plan.id"])
    except NavigoError as exc:
        show_error(exc)
        return plan_id


def _run(text: str, *, previous: PlannerState | None = None, plan_id: str | None = None,
         interrupted_state: PlannerState | None = None) -> bool:
    """Plan ``text``, show progress live, save a version, and keep the previous version for comparison.
    The request is saved before the agents start (a restart meanwhile leaves it to retry, not lost);
    ``interrupted_state``: run that saved request again (its answers too) as the next version of ``plan_id``."""
    try:
        pending = interrupted_state or started(text)
    except NavigoError as exc:
        show_error(exc)
        return False
    if interrupted_state is None:
        plan_id = _save(pending, S.get("plan.id") if previous is not None else None)
    try:
        work = (lambda on_event: replay(pending, _deps(), on_event=on_event)) if interrupted_state is not None \
            else (lambda on_event: plan(text, _deps(), on_event=on_event))
        state = run_with_progress(work, label=tr("plan.page.running"), done_label=tr("plan.page.finished"), key="plan")
    except NavigoError as exc:
        show_error(exc)
        return False
    S["plan.previous"] = previous
    S["plan.state"] = state  # shown even when it cannot be saved
    _save(state, plan_id)
    return True


def _resume(answer: str) -> None:
    state: PlannerState = S["plan.state"]
    try:
        pending = started("", previous=state, answer=answer)
    except NavigoError as exc:
        show_error(exc)
        return
    plan_id = _save(pending, S.get("plan.id"))  # the answer is kept before the agents run
    try:
        new = run_with_progress(lambda on_event: resume(state, answer, _deps(), on_event=on_event),
                                label=tr("plan.page.running"), done_label=tr("plan.page.finished"), key="plan")
    except NavigoError as exc:
        show_error(exc)
        return
    S["plan.state"] = new
    _save(new, plan_id)


def _open_saved() -> None:
    choice_id = S.get("plan_history_choice")
    saved = store().plans.get(choice_id, owner=USER.id) if choice_id else None
    if saved is not None:
        S["plan.state"] = PlannerState.model_validate(saved["state"])
        S["plan.id"], S["plan.version"] = saved["plan_id"], saved["version"]
        S["plan.previous"] = None
        S["plan_text"] = saved["request_text"]


# ---------- a request the app stopped during (a restart): offer to run it again ----------
def _load_interrupted() -> None:
    """A fresh session (e.g. after a restart) opens the newest saved plan when it never finished, with its
    request back in the text box: nothing typed is lost. Once per session, before the widgets exist."""
    if S.get("plan.checked_interrupted") or "plan.state" in S:
        return
    S["plan.checked_interrupted"] = True
    try:
        newest = next(iter(store().plans.list(USER.id, limit=1)), None)
        row = store().plans.get(newest["id"], owner=USER.id) if newest else None
        saved_state = PlannerState.model_validate(row["state"]) if row else None
    except (NavigoError, ValueError):  # no store, or a version this release cannot read: nothing to offer
        return
    if row is None or saved_state is None or not interrupted(saved_state):
        return
    S["plan.state"] = saved_state
    S["plan.id"], S["plan.version"] = row["id"], row["version"]
    S.setdefault("plan_text", row["request_text"])


def _interrupted_notice() -> None:
    saved_state: PlannerState | None = S.get("plan.state")
    if saved_state is None or not interrupted(saved_state):
        return
    with st.container(border=True, key="plan_interrupted"):
        st.warning(tr("plan.page.interrupted", text=escape_markdown(saved_state.natural_language[:200])), icon="⏸️")
        if st.button(tr("plan.page.retry"), key="plan_retry", type="primary"):
            if _run(saved_state.natural_language, plan_id=S.get("plan.id"), interrupted_state=saved_state):
                st.rerun()


# ---------- hand-off from the chat: pre-fill and run ----------
prefill = S.pop("plan.prefill", None)
if not prefill:
    _load_interrupted()
if prefill:
    S["plan_text"] = prefill
    S["plan_input_mode"] = "text"

# ---------- input ----------
st.title(tr("plan.page.title"))
st.caption(tr("plan.page.intro"))
mode = st.radio(tr("plan.page.input_mode"), ["text", "form"], key=choice("plan_input_mode"), horizontal=True,
                format_func=lambda m: tr(f"plan.page.input_mode.{m}"))
if mode == "text":
    st.text_area(tr("plan.page.request"), key="plan_text", height=100, placeholder=tr("plan.page.request_placeholder"))
    text = (S.get("plan_text") or "").strip()
else:
    c1, c2 = st.columns(2)
    c1.text_input(tr("plan.page.form.origin"), key="plan_form_origin")
    c2.text_input(tr("plan.page.form.destination"), key="plan_form_destination")
    today = date.today()
    c1.date_input(tr("plan.page.form.dates"), value=(today + timedelta(days=14), today + timedelta(days=18)),
                  key="plan_form_dates")
    b1, b2 = c2.columns([2, 1])
    b1.number_input(tr("plan.page.form.budget"), min_value=0, step=500, value=6000, key="plan_form_budget")
    b2.selectbox(tr("plan.page.form.currency"), ["CNY", "USD", "EUR", "JPY", "GBP"], key="plan_form_currency")
    a1, a2 = c1.columns(2)
    a1.number_input(tr("plan.page.form.adults"), min_value=1, max_value=20, value=2, key="plan_form_adults")
    a2.number_input(tr("plan.page.form.children"), min_value=0, max_value=20, value=0, key="plan_form_children")
    c2.multiselect(tr("plan.page.form.interests"), ["tea", "hiking", "museums", "food", "shopping", "beach",
                                                    "nightlife", "history", "nature", "art", "family"],
                   key="plan_form_interests", format_func=lambda i: t(f"plan.interest.{i}", L))
    dates = S.get("plan_form_dates") or ()
    text = request_text(
        origin=S.get("plan_form_origin", ""), destination=S.get("plan_form_destination", ""),
        start=dates[0] if len(dates) > 0 else None, end=dates[1] if len(dates) > 1 else None,
        budget=S.get("plan_form_budget"), currency=S.get("plan_form_currency", "CNY"),
        adults=S.get("plan_form_adults", 1), children=S.get("plan_form_children", 0),
        interests=S.get("plan_form_interests", []), lang=L,
    )
    st.caption(tr("plan.page.form.as_text", text=escape_markdown(text)))

col_run, col_refine = st.columns([1, 1])
run_clicked = col_run.button(tr("plan.page.run"), key="plan_run", type="primary", width="stretch")
refine_clicked = col_refine.button(tr("plan.page.refine"), key="plan_refine", width="stretch",
                                   disabled="plan.state" not in S, help=tr("plan.page.refine_help"))
if not prefill and not (run_clicked or refine_clicked):
    _interrupted_notice()
if prefill:
    if _run(prefill):
        st.rerun()
elif run_clicked or refine_clicked:
    if not text:
        st.warning(tr("plan.page.empty"), icon="✍️")
    else:
        if _run(text, previous=S.get("plan.state") if refine_clicked else None):
            st.rerun()  # draw the page again from the new state (Refine becomes available)


# ---------- pending questions ----------
state: PlannerState | None = S.get("plan.state")
if state is not None and state.status == "needs_input":
    with st.container(border=True, key="plan_questions"):
        st.markdown(f"**{tr('plan.page.questions')}**")
        for i, q in enumerate(state.pending_questions):
            st.markdown(f"{i + 1}. {safe_markdown(q.text)}")  # a question quotes the user's words
            if q.options:  # quick replies: candidate places, a month's dates, budgets …
                with st.container(horizontal=True, key=f"plan_quick_{i}"):
                    for j, option in enumerate(q.options):
                        if st.button(escape_markdown(option), key=f"plan_quick_{i}_{j}"):
                            _resume(option)
                            st.rerun()
        with st.form("plan_answer_form", border=False):
            answer = st.text_input(tr("plan.page.answer"), key="plan_answer")
            if st.form_submit_button(tr("plan.page.answer_send"), key="plan_answer_send") and answer.strip():
                _resume(answer)
                st.rerun()


# ---------- results ----------
def _day_map(m: DayMap | None, *, key: str) -> None:
    """The day's real places in the solver's order, from the base and back (the Route page's map)."""
    if m is None:
        return
    s = settings()
    with st.container(key=key):
        st_folium(build_route_map(m.points, tiles=s.map_tiles, tiles_url=s.map_tiles_url,
                                  attribution=s.map_tiles_attribution, lang=L, asset_prefix=leaflet_prefix()),
                  key=key + "_folium", height=300, width=None, returned_objects=[])
        legs = " · ".join(tr("plan.page.day_leg_walk" if leg.mode == "walk" else "plan.page.day_leg_drive",
                             km=f"{leg.km:g}", minutes=f"{leg.minutes:.0f}") for leg in m.legs)
        st.caption(tr("plan.page.day_map_caption", legs=legs))
        links = [(tr("plan.page.open_google"), m.links.google), (tr("plan.page.open_amap"), m.links.amap_web)]
        with st.container(horizontal=True):
            for label, urls in links:
                if urls:
                    st.link_button(label, urls[0])


def budget_amount(amount: float, currency: str) -> str:
    """``2,628 CNY`` / ``385.84 CNY``: the whole number, kept on one line (a non-breaking space)."""
    number = f"{amount:,.0f}" if round(amount, 2) == round(amount) else f"{amount:,.2f}"
    return f"{number}\u00a0{currency}"


def render(state: PlannerState, *, key: str, side_by_side: bool = False) -> None:
    """Every section of one plan version; ``side_by_side``: drawn in a half-width column (Refine)."""
    if state.status == "refused":
        st.error(safe_markdown(state.final_plan.summary) if state.final_plan else tr("plan.page.refused"), icon="🛡️")
        return
    if state.final_plan is None:
        return
    fp = state.final_plan
    st.subheader(tr("plan.page.summary"))
    st.markdown(safe_markdown(fp.summary))
    req = state.user_request
    if req is not None and req.destination is not None:  # the place planned, in full: never another one
        origin = req.origin.label_in(L) if req.origin is not None else ""
        dest_label = escape_markdown(req.destination.label_in(L))
        st.markdown(tr("plan.page.route_line", origin=escape_markdown(origin), destination=dest_label) if origin
                    else tr("plan.page.destination_line", destination=dest_label))
    if fp.source == "rules":
        st.caption(tr("plan.page.offline_engine"))

    if state.destination_candidates:
        st.markdown(f"**{tr('plan.page.destinations')}**")
        for c in state.destination_candidates:
            name = (c.name_zh if state.lang == "zh" else "") or c.name
            mine = f" ({tr('plan.page.your_choice')})" if c.user_choice else ""
            st.markdown(f"- **{escape_markdown(name)}**{mine} — {safe_markdown(c.rationale)}")

    st.markdown(f"**{tr('plan.page.flights')}**")
    if state.flight_options:
        rows = []
        for f in [*state.flight_options, *state.return_flight_options]:
            rows.append({
                tr("plan.page.col.recommended"): "★" if f.id in (state.recommended_flight_id,
                                                               state.recommended_return_flight_id) else "",
                tr("plan.page.col.flight"): f"{f.carrier} {f.flight_number}".strip(),
                tr("plan.page.col.route"): f"{f.origin} → {f.destination}",
                tr("plan.page.col.depart"): f.depart_at.strftime("%Y-%m-%d %H:%M"),
                tr("plan.page.col.arrive"): f.arrive_at.strftime("%Y-%m-%d %H:%M"),
                tr("plan.page.col.price"): f"{f.price:,.0f} {f.currency}" + (f" ({tr('plan.page.estimate')})" if f.estimated else ""),
            })
        with st.container(key=f"{key}_flights"):
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    else:
        st.caption(state.flight_note or tr("plan.page.no_flights"))

    st.markdown(f"**{tr('plan.page.itinerary')}**")
    weather = {w.date: w for w in (state.weather or [])}
    day_maps_of = day_maps(state, L)
    for d in state.itinerary or []:
        w = weather.get(d.date)
        risk = w.risk if w is not None and w.available else None  # no forecast: no risk shown
        title = f"{tr('plan.page.day', n=d.day)} · {d.date:%Y-%m-%d} · {escape_markdown(d.city)}" + (
            f" · {tr('plan.page.risk', level=risk)}" if risk else "")
        with st.expander(title, expanded=d.day == 1, key=f"{key}_day_{d.day}"):
            if w is not None:
                summary = t(w.summary, state.lang)  # a catalog key, or the provider's own text
                st.caption(tr("plan.page.weather_line", summary=summary, provider=w.provider) if w.available
                           else tr("plan.page.no_forecast", summary=summary))
            for a in d.activities:
                st.markdown(f"- {safe_markdown(a.title)}" + (f" ({tr('plan.page.indoor')})" if a.indoor else "")
                            + (f" · {tr('pois.from_source', source=escape_markdown(a.source))}" if a.source else ""))
            for n in d.notes:
                st.caption(safe_markdown(n))
            _day_map(day_maps_of.get(d.day), key=f"{key}_map_{d.day}")

    if state.budget is not None:
        b = state.budget
        st.markdown(f"**{tr('plan.page.budget')}**")
        df = pd.DataFrame([{tr("plan.page.col.category"): t(f"plan.budget.{ln.category}", L),
                            tr("plan.page.col.formula"): ln.formula,
                            tr("plan.page.col.amount"): round(ln.amount, 2)} for ln in b.lines])
        # a static table, not a grid: its cells wrap the long formulas instead of clipping the amounts
        # (issue 15); the amount never wraps (a non-breaking space before the currency)
        table = pd.DataFrame([{tr("plan.page.col.category"): escape_markdown(t(f"plan.budget.{ln.category}", L)),
                               tr("plan.page.col.formula"): escape_markdown(ln.formula),
                               tr("plan.page.col.amount"): escape_markdown(budget_amount(ln.amount, ln.currency))}
                              for ln in b.lines])
        # beside another version (Refine) the half-width column is too narrow to split: the chart goes below
        c1, c2 = (st.container(), st.container()) if side_by_side else st.columns([3, 2])
        with c1, st.container(key=f"{key}_budget_table"):
            st.table(table, hide_index=True)
            st.caption(tr("plan.page.budget_total", total=f"{b.total:,.0f}", currency=b.currency,
                          budget=f"{b.budget:,.0f}" if b.budget else "—"))
        with c2, st.container(key=f"{key}_budget_chart"):
            st.bar_chart(df.set_index(tr("plan.page.col.category"))[[tr("plan.page.col.amount")]], horizontal=True)
        if b.within_budget is False:
            st.warning(tr("plan.page.over_budget"), icon="💸")
        for tip in b.tips:
            st.markdown(f"- {safe_markdown(tip)}")
        if b.estimated:
            st.caption(tr("plan.page.budget_estimated"))

    if state.packing:
        st.markdown(f"**{tr('plan.page.packing')}**")
        with st.container(key=f"{key}_packing"):
            for i, item in enumerate(state.packing):
                st.checkbox(safe_markdown(f"{item.label} — {item.reason}"), key=f"{key}_pack_{i}")

    st.markdown(f"**{tr('plan.page.checks')}**")
    for ex in state.policy_excesses or []:
        message = (ex.get("message_zh") if L == "zh" else "") or ex.get("message", "")
        st.warning(safe_markdown(tr("plan.page.policy_excess", rule=ex.get("rule_id", ""), message=message)), icon="📏")
    if state.safety_flags:
        st.error(" · ".join(state.safety_flags), icon="🛡️")
    for v in state.validation:
        st.warning(safe_markdown(v.message), icon="⚠️")
    warnings = (len(state.policy_excesses or []) + len(state.validation) + len(state.safety_flags)
                + (1 if state.budget is not None and state.budget.within_budget is False else 0))
    if warnings:  # never a green tick above warnings: the verdict counts them
        st.warning(tr("plan.page.warning_one" if warnings == 1 else "plan.page.warnings", n=warnings), icon="🟠")
    else:
        st.success(tr("plan.page.valid"), icon="✅")

    st.markdown(f"**{tr('plan.page.log')}**")
    with st.container(key=f"{key}_log"):
        st.dataframe(pd.DataFrame([e.model_dump() for e in state.decision_log]), hide_index=True, width="stretch")


if state is not None and state.status in ("done", "refused"):
    previous: PlannerState | None = S.get("plan.previous")
    if previous is not None and previous.final_plan is not None:
        st.info(tr("plan.page.compare", version=S.get("plan.version", 1)), icon="🔁")
        left, right = st.columns(2)
        with left:
            st.markdown(f"##### {tr('plan.page.previous')}")
            render(previous, key="plan_prev", side_by_side=True)
        with right:
            st.markdown(f"##### {tr('plan.page.current')}")
            render(state, key="plan_cur", side_by_side=True)
    else:
        render(state, key="plan_cur")
    if state.status == "done":
        d1, d2, d3 = st.columns(3)
        d1.download_button(tr("plan.page.export_md"), to_markdown(state, L), file_name="navigo-plan.md",
                           mime="text/markdown", key="plan_export_md")
        d2.download_button(tr("plan.page.export_json"), to_json(state), file_name="navigo-plan.json",
                           mime="application/json", key="plan_export_json")
        d3.download_button(tr("plan.page.export_ics"), to_ics(state), file_name="navigo-plan.ics",
                           mime="text/calendar", key="plan_export_ics")
        if st.button(tr("plan.page.apply"), key="plan_apply", help=tr("plan.page.apply_help")):
            try:
                policy, grade, _assumed = policy_and_grade(replace(gate_context(), store=store(), user=USER.id))
                app = ApplicationService(store(), settings=settings()).create(
                    owner=USER.id, owner_department=USER.department, traveller=USER.name,
                    purpose=state.natural_language[:200], plan_id=S.get("plan.id"),
                    **draft_from_plan(state, policy, grade, today=date.today()))
                st.success(tr("plan.page.applied", number=app.number), icon="📝")
                st.markdown(safe_markdown(card_text(app, L)))
            except NavigoError as exc:
                show_error(exc)

with st.expander(tr("plan.page.history"), key="plan_history_box"):
    saved: list[dict[str, Any]] = store().plans.list(USER.id)
    if not saved:
        st.caption(tr("plan.page.history_empty"))
    else:
        labels = {r["id"]: f"{r['request_text'][:60]} · v{r['version']} · {r['created_at']:%Y-%m-%d %H:%M}" for r in saved}
        st.selectbox(tr("plan.page.history_pick"), list(labels), key="plan_history_choice", format_func=lambda i: labels[i])
        st.button(tr("plan.page.history_open"), key="plan_history_open", on_click=_open_saved)
