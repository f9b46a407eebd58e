"""The sidebar: language choice and the engines in use."""

from __future__ import annotations

import streamlit as st

from navigo_core.business.policy import policy_status
from navigo_core.providers.selection import choices
from navigo_core.redact import redact_url
from ui.context import LANGS, keep_lang_in_url, lang, resend_choices, set_lang, settings, store, tr

_LANG_CHOICE = "lang_choice"  # the selector's widget key; the language itself lives in ui.context


def _language_changed() -> None:
    from ui.auth import current_user, remember

    set_lang(st.session_state[_LANG_CHOICE])
    remember(current_user(), language=st.session_state[_LANG_CHOICE])  # kept in the user's profile
    resend_choices()


def render_sidebar() -> None:
    s = settings()
    keep_lang_in_url()
    with st.sidebar:
        st.session_state[_LANG_CHOICE] = lang()  # sent every run: a page switch cannot reset it
        st.selectbox(
            tr("app.language"), list(LANGS), key=_LANG_CHOICE, on_change=_language_changed,
            format_func=lambda code: {"en": "English", "zh": "中文"}[code],
        )
        st.markdown(f"**{tr('app.engines')}**")
        base_url = redact_url(s.llm_base_url)  # never a password or token from the URL setting
        llm = f"{s.llm_model}" + (f" @ {base_url}" if base_url else "") if s.llm_enabled else tr("app.engine.offline")
        selected = {kind: c.selected for kind, c in choices(s).items()}  # the one place that selects providers
        lines = [
            f"{tr('app.engine.llm')}: {llm}",
            f"{tr('app.engine.places')}: {tr('engine.' + selected['places'])}",
            f"{tr('app.engine.matrix')}: {tr('engine.' + selected['matrix'])}",
            f"{tr('app.engine.tiles')}: {tr('engine.tiles.' + s.map_tiles)}",
            f"{tr('app.engine.store')}: {store().description}",
        ]
        st.caption("  \n".join(lines))
        fault = store().fault
        if fault is not None:
            st.error(tr("store.fault.sidebar", error=fault.message(lang())), icon="🗄️")
        _, policy_error = policy_status(s.travel_policy_file or None, lang())
        if policy_error:
            st.error(tr("app.policy_error", error=policy_error), icon="📏")
