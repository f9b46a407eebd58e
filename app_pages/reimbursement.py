"""Reimbursement page: expense items checked against the travel policy and the approved application.

Thin: widgets → navigo_core.business.expenses (import_csv, check_items, claim_summary, to_csv) → render;
claims are saved with ``store().claims``. A broken policy file is shown, and entry keeps working.
The grade checked is the one the traveller gave in the chat (its hand-off: ``reimb.prefill``), else their kept
one (profile), else ``EMPLOYEE_GRADE`` (``navigo_core.business.policy.requested_grade_origin``), read by
``TravelPolicy.resolve_grade`` like everywhere else; an assumed one is said so.
"""

from __future__ import annotations

from datetime import date, datetime
from types import SimpleNamespace
from typing import Any

import pandas as pd
import streamlit as st

from navigo_core.business.applications import Application, ApplicationService, PolicyUnavailable
from navigo_core.business.expenses import (
    CATEGORIES,
    CheckedItem,
    ExpenseImportError,
    ExpenseItem,
    check_items,
    claim_summary,
    import_csv,
    to_csv,
)
from navigo_core.business.policy import grade_note, policy_status, requested_grade_origin
from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.limits import check_upload
from ui.auth import require_login
from ui.context import choice, lang, settings, show_error, store, tr
from ui.markdown import error_text, escape_markdown

USER = require_login()  # the claimant: the signed-in user (their approved applications, their claims)
COLUMNS = ["date", "city", "category", "amount", "currency", "note", "receipt"]
S = st.session_state
S.setdefault("reimb.rows", [])
S.setdefault("reimb.editor_v", 0)
L = lang()

# ---------- hand-off from the chat: the traveller's grade (kept for the session) and the application ----------
_prefill = S.pop("reimb.prefill", None)
if isinstance(_prefill, dict):
    if _prefill.get("grade"):
        S["reimb.grade"] = str(_prefill["grade"])
    if _prefill.get("application"):
        S["reimb_application"] = str(_prefill["application"])  # kept only if it is an approved one (below)


# ---------- rows ⇄ items ----------
def _is_blank(v: Any) -> bool:
    if v is None:
        return True
    try:
        if pd.isna(v):
            return True
    except (TypeError, ValueError):
        pass
    return isinstance(v, str) and not v.strip()


def _as_date(v: Any) -> date | None:
    if _is_blank(v):
        return None
    if isinstance(v, datetime):
        return v.date()
    if isinstance(v, date):
        return v
    try:
        return pd.Timestamp(str(v)).date()
    except (ValueError, TypeError):
        return None


def _items(rows: list[dict[str, Any]]) -> tuple[list[ExpenseItem], list[int]]:
    """The complete rows as items, and the 1-based numbers of rows left out (incomplete or invalid)."""
    items, bad = [], []
    for n, r in enumerate(rows, start=1):
        if all(_is_blank(r.get(c)) or (c == "receipt" and not r.get(c)) or (c == "currency" and r.get(c) == "CNY")
               for c in COLUMNS):
            continue  # an empty new row
        try:
            item = ExpenseItem(
                date=_as_date(r.get("date")), city=str(r.get("city") or "").strip(), category=r.get("category"),
                amount=float(r.get("amount")), currency=(str(r.get("currency") or "").strip() or "CNY").upper(),
                note="" if _is_blank(r.get("note")) else str(r.get("note")), receipt=not _is_blank(r.get("receipt")) and bool(r.get("receipt")),
            )
        except (ValueError, TypeError):  # pydantic's ValidationError is a ValueError
            bad.append(n)
            continue
        if not item.city or _is_blank(r.get("city")):
            bad.append(n)
            continue
        items.append(item)
    return items, bad


def _row(item: ExpenseItem) -> dict[str, Any]:
    return {"date": item.date, "city": item.city, "category": item.category, "amount": item.amount,
            "currency": item.currency, "note": item.note, "receipt": item.receipt}


def _set_rows(rows: list[dict[str, Any]]) -> None:
    S["reimb.rows"] = rows
    S["reimb.editor_v"] += 1


def _add_imported(data: bytes | str, rows: list[dict[str, Any]]) -> None:
    S.pop("reimb.import_error", None)
    try:
        check_upload(data)  # size and rows before anything is parsed
        new = import_csv(data)
    except (ExpenseImportError, NavigoError) as exc:
        S["reimb.import_error"] = error_text(exc, lang())  # the file's values are escaped
        return
    kept, _ = _items(rows)
    _set_rows([_row(i) for i in [*kept, *new]])
    S["reimb.flash"] = tr("reimb.page.imported", count=len(new))


# ---------- callbacks ----------
def _paste(rows: list[dict[str, Any]]) -> None:
    text = S.get("reimb_paste") or ""
    _add_imported(text, rows)
    if "reimb.import_error" not in S:
        S["reimb_paste"] = ""


def _upload(rows: list[dict[str, Any]]) -> None:
    f = S.get("reimb_upload")
    if f is not None:
        _add_imported(f.getvalue(), rows)


def _clear() -> None:
    _set_rows([])
    S.pop("reimb.checking", None)
    S.pop("reimb.saved", None)


# ---------- page ----------
st.title(tr("reimb.page.title"))
st.caption(tr("reimb.page.intro"))
s = settings()

policy, policy_error = policy_status(s.travel_policy_file or None, L)
grade = ""
if policy_error:
    st.error(tr("reimb.page.policy_error", error=policy_error), icon="⚠️")
elif policy is not None:
    # the chat's hand-off, else the user's kept one, else the settings' (the one grade chain)
    raw, origin = requested_grade_origin(SimpleNamespace(subject={"grade": S.get("reimb.grade")}, store=store(),
                                                         user=USER.id, settings=s), "", policy)
    grade, assumed = policy.resolve_grade(raw)
    if assumed:
        st.caption(escape_markdown(grade_note(policy, raw, L)))
    else:
        st.caption(tr("reimb.page.grade_chat" if origin in ("conversation", "profile") else "reimb.page.grade",
                      grade=f"{grade} ({policy.grade(grade).label(L)})"))

service = ApplicationService(store(), settings=settings())
approved = {a.number: a for a in service.list(USER.id, statuses=("approved",))}
options = ["", *approved]
if S.get("reimb_application") not in options:
    S.pop("reimb_application", None)
labels = {"": tr("reimb.page.no_application"), **{n: f"{n} · {a.short()}" for n, a in approved.items()}}
number = st.selectbox(tr("reimb.page.application"), options, key=choice("reimb_application"),
                      format_func=labels.__getitem__)
application: Application | None = approved.get(number) if number else None

st.markdown(f"**{tr('reimb.page.items')}**")
with st.container(key="reimb_items_editor"):
    frame = pd.DataFrame(S["reimb.rows"], columns=COLUMNS)
    edited = st.data_editor(
        frame,
        key=f"reimb_editor_{S['reimb.editor_v']}",
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        column_config={
            "date": st.column_config.DateColumn(tr("reimb.page.col.date"), format="YYYY-MM-DD"),
            "city": st.column_config.TextColumn(tr("reimb.page.col.city")),
            "category": st.column_config.SelectboxColumn(tr("reimb.page.col.category"), options=list(CATEGORIES),
                                                         format_func=lambda c: t(f"expense.category.{c}", L)),
            "amount": st.column_config.NumberColumn(tr("reimb.page.col.amount"), min_value=0.0, format="%.2f"),
            "currency": st.column_config.TextColumn(tr("reimb.page.col.currency"), default="CNY", max_chars=3),
            "note": st.column_config.TextColumn(tr("reimb.page.col.note")),
            "receipt": st.column_config.CheckboxColumn(tr("reimb.page.col.receipt"), default=False),
        },
    )
rows: list[dict[str, Any]] = edited.to_dict("records")
items, bad_rows = _items(rows)
if bad_rows:
    st.warning(tr("reimb.page.bad_rows", rows=", ".join(map(str, bad_rows))), icon="✍️")

c_up, c_paste = st.columns(2)
with c_up:
    st.file_uploader(tr("reimb.page.upload"), type=["csv"], key="reimb_upload", on_change=_upload, args=(rows,))
with c_paste:
    st.text_area(tr("reimb.page.paste"), key="reimb_paste", height=110,
                 placeholder="date,city,category,amount,currency,note,receipt\n2026-05-01,杭州,hotel,450,CNY,,yes")
    st.button(tr("reimb.page.import"), key="reimb_paste_add", on_click=_paste, args=(rows,))
err = S.pop("reimb.import_error", None)
if err:
    st.error(err, icon="⚠️")
flash = S.pop("reimb.flash", None)
if flash:
    st.success(flash, icon="📥")

b1, b2, b3, b4 = st.columns(4)
if b1.button(tr("reimb.page.run_check"), key="reimb_check", type="primary", width="stretch"):
    S["reimb.checking"] = True
    S.pop("reimb.saved", None)
save_clicked = b2.button(tr("reimb.page.save"), key="reimb_save", width="stretch", disabled=not items)
b4.button(tr("reimb.page.clear"), key="reimb_clear", on_click=_clear, width="stretch")

refused: NavigoError | None = None  # fail closed: no readable policy → no check, no "OK", no save
try:
    checked: list[CheckedItem] = check_items(items, policy, grade, application, lang=L) if items else []
except PolicyUnavailable as exc:
    checked, refused = [], PolicyUnavailable(policy_error) if policy_error else exc
summary = claim_summary(checked, application=application, lang=L) if checked else None
if checked:
    b3.download_button(tr("reimb.page.export"), to_csv(checked, L), file_name="navigo-claim.csv", mime="text/csv",
                       key="reimb_export", width="stretch")

if save_clicked and summary is not None:
    try:
        claim_id = store().claims.save(USER.id, [c.model_dump(mode="json") for c in checked],
                                       summary.model_dump(mode="json"),
                                       application_number=application.number if application else None)
        S["reimb.saved"] = claim_id
        S["reimb.checking"] = True
    except NavigoError as exc:
        show_error(exc)
if S.get("reimb.saved"):
    st.success(tr("reimb.page.saved", id=S["reimb.saved"]), icon="💾")

if S.get("reimb.checking"):
    if refused is not None:
        show_error(refused)
    elif not checked:
        st.warning(tr("reimb.page.empty"), icon="✍️")
    else:
        assert summary is not None
        st.subheader(tr("reimb.page.check"))
        with st.container(key="reimb_items_box"):
            st.dataframe(pd.DataFrame([{
                tr("reimb.page.col.item"): n,
                tr("reimb.page.col.date"): c.item.date.isoformat(),
                tr("reimb.page.col.city"): c.item.city,
                tr("reimb.page.col.category"): t(f"expense.category.{c.item.category}", L),
                tr("reimb.page.col.amount"): f"{c.item.amount:,.2f} {c.item.currency}",
                tr("reimb.page.col.receipt"): "✓" if c.item.receipt else "✗",
                tr("reimb.page.col.flags"): " · ".join(c.flags(L)) or tr("reimb.page.ok"),
            } for n, c in enumerate(checked, start=1)]), hide_index=True, width="stretch")

        st.subheader(tr("reimb.page.summary"))
        with st.container(key="reimb_summary_box", border=True):
            st.markdown(tr("reimb.page.items_count", count=summary.items, total=f"{summary.total:,.2f}",
                           currency=summary.currency))
            st.markdown(f"**{tr('reimb.page.by_category')}**")
            st.dataframe(pd.DataFrame([{tr("reimb.page.col.category"): t(f"expense.category.{k}", L),
                                        tr("reimb.page.col.amount"): v} for k, v in summary.by_category.items()]),
                         hide_index=True)
            if summary.other_currencies:
                st.caption(tr("reimb.page.other_currencies", amounts=", ".join(
                    f"{v:,.2f} {k}" for k, v in summary.other_currencies.items())))
            st.markdown(f"**{tr('reimb.page.excesses')}**")
            if summary.excesses:
                for e in summary.excesses:
                    over = f"{e['amount_over']:,.2f} {e['currency']}" if e.get("amount_over") else "—"
                    st.markdown("- " + tr("reimb.page.excess_line", row=e["row"], date=e["date"],
                                          city=escape_markdown(e["city"]),
                                          category=t(f"expense.category.{e['category']}", L), rule=e["rule"],
                                          over=over))
            else:
                st.markdown(f"- {tr('reimb.page.none')}")
            if summary.approved_exceptions:  # excesses the approved application covers: shown, not violations
                st.markdown(f"**{tr('reimb.page.approved_exceptions')}**")
                for e in summary.approved_exceptions:
                    over = f"+{e['amount_over']:,.2f} {e['currency']}" if e.get("amount_over") else "—"
                    st.markdown("- " + tr("reimb.page.approved_line", row=e["row"], date=e["date"],
                                          city=escape_markdown(e["city"]),
                                          category=t(f"expense.category.{e['category']}", L), rule=e["rule"],
                                          number=escape_markdown(e.get("application") or "—"), over=over))
            listing = (lambda ns: tr("reimb.page.item_list", items=", ".join(map(str, ns))) if ns
                       else tr("reimb.page.none"))
            st.markdown(f"**{tr('reimb.page.missing_receipts')}**: {listing(summary.missing_receipts)}")
            if application is not None:
                st.markdown(f"**{tr('reimb.page.outside')}**: {listing(summary.outside)}")
            if all(c.ok for c in checked):
                st.success(tr("reimb.page.all_ok"), icon="✅")

# ---------- the user's saved claims (newest first) ----------
with st.expander(tr("reimb.page.history"), key="reimb_history_box"):
    try:
        saved_claims: list[dict[str, Any]] = store().claims.list(USER.id)
    except NavigoError as exc:
        show_error(exc)
        saved_claims = []
    if not saved_claims:
        st.caption(tr("reimb.page.history_empty"))
    else:
        st.dataframe(pd.DataFrame([{
            tr("reimb.page.col.saved"): f"{c['created_at']:%Y-%m-%d %H:%M}",
            tr("reimb.page.application"): c.get("application_number") or tr("reimb.page.no_application"),
            tr("reimb.page.total"): f"{float(c['total'] or 0):,.2f} {c.get('currency') or ''}".strip(),
            "id": c["id"]} for c in saved_claims]), hide_index=True)
