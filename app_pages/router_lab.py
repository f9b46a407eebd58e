"""Router lab: how messages are routed, layer by layer, and where traffic goes.

Thin: widgets → navigo_core.intent.lab / store → render.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from navigo_core.errors import NavigoError
from navigo_core.lab import batch_rows, explain_message, parse_messages
from ui.context import gate_context, intent_router, settings, show_error, store, tr
from ui.markdown import safe_markdown

S = st.session_state
st.title(tr("lab.title"))
st.caption(tr("lab.intro"))
if not settings().llm_enabled:
    st.caption(tr("lab.l3_offline"))

router = intent_router()
ctx = gate_context()

with st.form("lab_form", border=False):
    st.text_input(tr("lab.message"), key="lab_message", placeholder=tr("lab.message_placeholder"))
    submitted = st.form_submit_button(tr("lab.route"), key="lab_route", type="primary")
if submitted and (S.get("lab_message") or "").strip():
    try:
        S["lab.last"] = explain_message(router, ctx, S["lab_message"])
    except NavigoError as exc:  # e.g. longer than a message may be
        S.pop("lab.last", None)
        show_error(exc)

info = S.get("lab.last")
if info is not None:
    layer = tr(f"intent.layer.{info['layer']}") if info.get("layer") else "—"  # the layer's name in the user's language
    st.markdown(tr("lab.decision", layer=layer, intent=info["intent"] or "—",
                   scene=info["scene"], step=info["step"], ms=f"{info['gate_ms']:.2f}"))
    st.caption(safe_markdown(info["reason"]))
    st.markdown(f"**{tr('lab.layers')}**")
    with st.container(key="lab_layers_box"):
        st.dataframe(pd.DataFrame([
            {tr("lab.col.layer"): t.layer, tr("lab.col.hit"): t.hit, tr("lab.col.intent"): t.intent or "—",
             tr("lab.col.score"): None if t.score is None else round(t.score, 3),
             tr("lab.col.latency"): round(t.latency_ms, 3), tr("lab.col.detail"): t.detail}
            for t in info["layers"]
        ]), hide_index=True, width="stretch")
    with st.expander(tr("lab.json"), key="lab_json_box"):
        st.code(json.dumps(info["result"], ensure_ascii=False, indent=2), language="json")

upload = st.file_uploader(tr("lab.upload"), type=["csv", "jsonl", "json"], key="lab_upload")
if upload is not None:
    try:
        messages = parse_messages(upload.name, upload.getvalue())
        key = (upload.name, upload.size)
        if S.get("lab.batch_key") != key:  # route a file once, not on every rerun
            S["lab.batch"] = batch_rows(router, ctx, messages)
            S["lab.batch_key"] = key
        rows = S["lab.batch"]
        st.markdown(f"**{tr('lab.batch', count=len(rows))}**")
        labelled = [r for r in rows if "correct" in r]
        if labelled:
            correct = sum(1 for r in labelled if r["correct"])
            st.caption(tr("lab.batch_accuracy", accuracy=f"{correct / len(labelled):.1%}", correct=correct,
                          labelled=len(labelled)))
        with st.container(key="lab_batch_box"):
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    except NavigoError as exc:
        show_error(exc)

st.divider()
st.subheader(tr("lab.stats"))
events = store().events
total = events.count()
if total == 0:
    st.caption(tr("lab.stats_empty"))
else:
    st.caption(tr("lab.stats_total", count=total))
    layer_df = pd.DataFrame(events.layer_stats()).set_index("layer")
    c1, c2 = st.columns(2)
    with c1, st.container(key="lab_chart_layers"):
        st.markdown(f"**{tr('lab.stats_layers')}**")
        st.bar_chart(layer_df[["share"]], horizontal=True)
    with c2, st.container(key="lab_chart_intents"):
        st.markdown(f"**{tr('lab.stats_intents')}**")
        intent_df = pd.DataFrame(events.intent_stats()).set_index("intent")[["L1", "L2", "L3"]]
        st.bar_chart(intent_df, horizontal=True, stack=True)
