"""Chat page: the front door. Every message goes through the chat service
(risk guard → gate → scene / clarification); the page only renders.

The conversation belongs to the signed-in user (ui.auth.require_login: its id is the owner). The thread id
lives in the URL, so a refresh restores the conversation; a thread id that is not the user's answers
exactly like one that does not exist ("not found", a new conversation).

The history, the thread list and the input come from the store alone, so the page draws at once after a
cold start; the chat service (its intent router fits a classifier: seconds) is taken only to answer a
message, from the cache that app.py's warm-up fills in the background (a message sent before the warm-up
has finished waits for that same build).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from navigo_core.errors import NavigoError
from ui.auth import require_login
from ui.context import chat_service, settings, show_error, store, tr
from ui.markdown import escape_markdown, safe_markdown

S = st.session_state
Q = st.query_params

# The owner is the signed-in user; the session holds the current thread and the URL mirrors it. A new browser
# session (a refresh, or a bookmarked link) takes it from the URL; another user (the demo picker) starts afresh.
USER = require_login()
if S.get("chat.owner") != USER.id:
    tid = Q.get("thread") if "chat.owner" not in S else None
    S["chat.owner"] = USER.id
    known = bool(tid) and store().threads.get(tid, owner=USER.id) is not None  # another's: as if missing
    if tid and not known:
        S["chat.notice"] = "chatpage.thread_not_found"
    S["chat.thread"] = tid if known else store().threads.new_id()  # stored with its first message, not before
owner, thread_id = S["chat.owner"], S["chat.thread"]
Q.pop("u", None)  # the owner is no longer in the URL (older links carried it)
notice = S.pop("chat.notice", None)
if notice:
    st.info(tr(notice), icon="🔎")
if Q.get("thread") != thread_id:
    Q["thread"] = thread_id


def _new_conversation() -> None:
    S["chat.thread"] = store().threads.new_id()  # as ChatService.draft_thread: stored with its first message
    S.pop("chat.pending", None)


def _open(tid: str) -> None:
    S["chat.thread"] = tid
    S.pop("chat.pending", None)


def _submit() -> None:
    text = (S.get("chat_input") or "").strip()
    if text:
        S["chat.pending"] = text


def _quick(text: str) -> None:
    S["chat.pending"] = text


def _retry() -> None:
    S["chat.pending"] = ("__retry__", thread_id)


def _offline() -> None:
    S["chat.pending"] = ("__offline__", thread_id)


def _handoff_plan(request_text: str) -> None:
    S["plan.prefill"] = request_text


def _handoff_route(route_request: dict[str, Any]) -> None:
    S["route.prefill"] = route_request


def _handoff_reimbursement(handoff: dict[str, Any]) -> None:
    """The traveller's grade given in the chat and the application covering the item go to the claim page."""
    S["reimb.prefill"] = {"grade": handoff.get("grade"), "application": handoff.get("application")}


with st.sidebar:
    st.button(tr("chatpage.new"), key="chat_new", on_click=_new_conversation, icon=":material/add:", width="stretch")
    st.markdown(f"**{tr('chatpage.history')}**")
    for t in store().threads.list(owner, 20):
        if t["id"] == thread_id:
            st.caption(f"▸ {escape_markdown(t['title']) if t['title'] else tr('chatpage.untitled')}")
        elif t["title"]:  # a title is the user's first message: escaped (a label renders Markdown images)
            st.button(escape_markdown(t["title"][:40]), key=f"chat_thread_{t['id']}", on_click=_open,
                      args=(t["id"],), type="tertiary")

st.title(tr("chatpage.title"))
st.caption(tr("chatpage.intro"))


def caption(meta: dict[str, Any] | None) -> None:
    """Who routed the reply (a rule, the example sentences, the LLM, the open dialogue, or nobody), the
    intent, scene and latency; a refusal names the risk guard."""
    d = (meta or {}).get("decision")
    if not d:
        return
    by = d.get("by") or d.get("layer") or "none"
    if by == "guard":
        st.caption(tr("chatpage.refused_by", flags=", ".join(d.get("flags") or []) or "—"))
        return
    scene = d.get("scene") or "—"
    ms = f"{d.get('latency_ms') or 0:.1f}"
    if by == "none":
        st.caption(tr("chatpage.undecided", scene=scene, ms=ms))
        return
    if by == "guess":
        st.caption(tr("chatpage.guess", intent=d.get("intent") or "—", scene=scene, ms=ms))
        return
    intent = d.get("intent") or "—"
    if d.get("confidence") and by in ("seeds", "llm"):
        intent += f" ({d['confidence']:.2f})"
    st.caption(tr("chatpage.decision", layer=tr(f"chatpage.by.{by}"), intent=intent, scene=scene, ms=ms))


def show(text: str, *, user: bool = False) -> None:
    """Markdown with the reply's line breaks kept (questions on their own lines). The user's own text
    is escaped (it renders as typed); a reply keeps the app's Markdown, but no image or link can form."""
    body = escape_markdown(text) if user else safe_markdown(text)
    st.markdown((body or "…").replace("\n", "  \n"))


history = store().threads.messages(thread_id)
for m in history:
    with st.chat_message("user" if m["role"] == "user" else "assistant"):
        show(m["content"], user=m["role"] == "user")
        if m["role"] != "user":
            caption(m.get("meta"))

flash_error = S.pop("chat.error", None)  # a message refused before it was stored (e.g. over the length limit)
if isinstance(flash_error, NavigoError):
    show_error(flash_error)

pending = S.get("chat.pending")  # taken once the service is there: a run interrupted while it loads keeps it
busy = pending is not None
st.chat_input(tr("chatpage.placeholder"), key="chat_input", on_submit=_submit, disabled=busy,
              max_chars=settings().max_message_chars)

if pending is not None:
    with st.spinner(tr("chatpage.warming")):  # shown only if the warm-up is still building the service
        service = chat_service()
    S.pop("chat.pending", None)
    from navigo_core.chat import ChatError  # imported by the warm-up, not before the page's first draw
    try:
        # The core stores the user message before anything is drawn: a rerun that interrupts
        # this run can then never lose what was typed.
        if isinstance(pending, tuple):
            action, tid = pending
            reply = (service.retry(tid, department=USER.department, name=USER.name) if action == "__retry__"
                     else service.continue_offline(tid, department=USER.department, name=USER.name))
        else:
            reply = service.send(thread_id, pending, owner=owner, department=USER.department, name=USER.name)
            with st.chat_message("user"):
                show(pending, user=True)
        with st.chat_message("assistant"):
            if reply.stream is not None:
                st.write_stream(reply.stream)
            else:
                show(reply.text)
    except ChatError as exc:  # the reply failed: the stored error message and Retry show after the rerun
        show_error(exc)
    except NavigoError as exc:  # refused before anything was stored: say why after the rerun
        S["chat.error"] = exc
    st.rerun()  # redraw from the store: the input is enabled again, nothing kept in session state

last = history[-1] if history else None
if last is not None and last["role"] == "user":  # no reply stored (the app stopped while answering): offer Retry
    st.warning(tr("chatpage.unanswered"), icon="⏳")
    st.button(tr("chatpage.retry"), key="chat_retry", on_click=_retry)
if last is not None and last["role"] != "user":
    meta = last.get("meta") or {}
    status = last.get("status")
    if status == "error":
        st.error(escape_markdown(meta["error"]) if meta.get("error") else tr("chatpage.error"), icon="⚠️")
        c1, c2 = st.columns(2)
        c1.button(tr("chatpage.retry"), key="chat_retry", on_click=_retry)
        c2.button(tr("chatpage.offline"), key="chat_offline", on_click=_offline)
    quick = meta.get("quick_replies") or []
    if quick and status == "asking":
        with st.container(horizontal=True, key="chat_quick"):
            for i, q in enumerate(quick):
                st.button(escape_markdown(q), key=f"chat_quick_{i}", on_click=_quick, args=(q,))
    handoff = meta.get("handoff") or {}
    if handoff.get("kind") == "plan":
        summary = meta.get("summary") or {}
        with st.container(border=True, key="chat_summary"):
            st.markdown(f"**{tr('chatpage.summary')}**")
            st.markdown(safe_markdown(f"- {tr('chatpage.objective')}: {summary.get('objective', '')}"))
            for c in summary.get("constraints", []):
                st.markdown(safe_markdown(f"- {tr('chatpage.constraint')}: {c}"))
            for a in summary.get("assumptions", []):
                st.markdown(safe_markdown(f"- {tr('chatpage.assumption')}: {a}"))
        if st.button(tr("chatpage.start_planning"), key="chat_start_planning", type="primary",
                     on_click=_handoff_plan, args=(handoff.get("request_text", ""),)):
            st.switch_page("app_pages/plan.py")
    elif handoff.get("kind") == "route":
        if st.button(tr("chatpage.open_route"), key="chat_open_route", type="primary",
                     on_click=_handoff_route, args=(handoff.get("route_request") or {},)):
            st.switch_page("app_pages/route.py")
    elif handoff.get("kind") == "reimbursement":
        if st.button(tr("chatpage.open_reimbursement"), key="chat_open_reimbursement", type="primary",
                     on_click=_handoff_reimbursement, args=(handoff,)):
            st.switch_page("app_pages/reimbursement.py")
