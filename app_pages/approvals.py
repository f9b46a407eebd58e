"""Approvals page: the approver decides on submitted travel applications; every application and its history.

Thin: widgets → navigo_core.business.applications.ApplicationService → render. The service enforces every rule
(status transitions, a rejection needs a comment, only an approver in scope decides, never their own); this page
only shows its answers. The page needs the approver role (ui.auth.require_role) and lists only the applications
whose owner is in the approver's scope (navigo_core.auth.may_approve), never the approver's own.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from navigo_core.business.applications import Application, ApplicationService, audit_lines, card_text
from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.limits import check_message
from ui.auth import require_role
from ui.context import lang, settings, store, tr
from ui.markdown import error_text, escape_markdown, safe_markdown

S = st.session_state
L = lang()
APPROVER = require_role("approver")  # the acting user: anyone else sees only that the page needs the role


def _service() -> ApplicationService:
    return ApplicationService(store(), settings=settings())


# ---------- callbacks (run before the page is drawn again) ----------
def _decide(number: str, approve: bool) -> None:
    comment = (S.get(f"approval_comment_{number}") or "").strip()
    S.pop(f"approvals.msg.{number}", None)
    try:
        check_message(comment)  # a comment is at most as long as a message
    except NavigoError as exc:
        S[f"approvals.msg.{number}"] = error_text(exc, lang())
        return
    if not approve and not comment:
        S[f"approvals.msg.{number}"] = tr("approvals.page.reject_needs_comment", number=number)
        return
    try:
        if approve:
            _service().approve(number, approver=APPROVER, comment=comment)
        else:
            _service().reject(number, approver=APPROVER, comment=comment)
    except NavigoError as exc:
        S[f"approvals.msg.{number}"] = error_text(exc, lang())
        return
    S["approvals.flash"] = tr("approvals.page.approved" if approve else "approvals.page.rejected", number=number)
    S.pop(f"approval_comment_{number}", None)


def _cost(app: Application) -> str:
    return f"{app.estimated_cost:,.0f} {app.currency}" if app.estimated_cost else "—"


# ---------- page ----------
st.title(tr("approvals.page.title"))
st.caption(tr("approvals.page.intro"))
st.caption(tr("approvals.page.acting_as", user=escape_markdown(APPROVER.label)))
service = _service()

flash = S.pop("approvals.flash", None)
if flash:
    st.success(flash, icon="✅")

st.subheader(tr("approvals.page.pending"))
pending = service.pending(APPROVER)
if not pending:
    st.info(tr("approvals.page.none_pending"), icon="📭")
for app in pending:
    n = app.number
    with st.container(border=True, key=f"approval_{n}"):
        st.markdown(safe_markdown(card_text(app, L)))  # the card carries the traveller's words
        if app.excesses:
            st.markdown(f"**{tr('approvals.page.justification')}**")
            for e in app.excesses:
                over = f" (+{e.amount_over:,.0f} {e.currency})" if e.amount_over else ""
                why = escape_markdown(e.justification) if e.justification else t("application.card.no_justification", L)
                st.markdown(safe_markdown(f"- `{e.rule_id}` {e.rule_text(L)}{over}: ") + f"_{why}_")
        st.text_input(tr("approvals.page.comment"), key=f"approval_comment_{n}",
                      placeholder=tr("approvals.page.comment_placeholder"))
        c1, c2, _ = st.columns([1, 1, 4])
        c1.button(tr("approvals.page.approve"), key=f"approval_approve_{n}", type="primary", on_click=_decide,
                  args=(n, True), width="stretch")
        c2.button(tr("approvals.page.reject"), key=f"approval_reject_{n}", on_click=_decide, args=(n, False),
                  width="stretch")
        msg = S.get(f"approvals.msg.{n}")
        if msg:
            st.error(msg, icon="⚠️")

st.subheader(tr("approvals.page.all"))
every = service.in_scope(APPROVER)
if not every:
    st.caption(tr("approvals.page.none_in_scope"))
else:
    rows = [{
        tr("approvals.page.col.number"): a.number,
        tr("approvals.page.col.traveller"): a.traveller,
        tr("approvals.page.col.status"): t(f"application.status.{a.status}", L),
        tr("approvals.page.col.dates"): a.dates_text(),
        tr("approvals.page.col.cities"): "、".join(a.cities) or "—",
        tr("approvals.page.col.cost"): _cost(a),
        tr("approvals.page.col.comment"): a.decision_comment or "",
    } for a in every]
    with st.container(key="approvals_all_box"):
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")

    with st.expander(tr("approvals.page.audit"), key="approvals_audit_box"):
        for a in every:
            st.markdown(f"**{escape_markdown(a.number)}** · {escape_markdown(a.short())} · "
                        f"{t(f'application.status.{a.status}', L)}")
            trail = service.audit(a.number)
            if not trail:
                st.caption(tr("approvals.page.no_audit"))
                continue
            # one readable line per change (who, when, what: field old → new), the users' words escaped
            with st.container(key=f"approvals_audit_{a.number}"):
                st.markdown("\n".join(f"- {line}" for line in audit_lines(trail, L, escape=escape_markdown)))
