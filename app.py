"""NaviGo Workbench entry point: `streamlit run app.py` (or `make run`)."""

from __future__ import annotations

import streamlit as st

from navigo_core.store import StoreError
from ui.auth import apply_profile_language, auth_mode, render_demo_banner_and_picker, render_sign_out, require_login
from ui.context import lang, tr, warm_up
from ui.sidebar import render_sidebar

st.set_page_config(page_title="NaviGo Workbench", page_icon="🧭", layout="wide")
apply_profile_language()  # a new session: the language the user picked before (their profile)
render_sidebar()
# who is signed in, once per run: oidc mode shows nothing but the sign-in screen until signed in (require_login
# stops the run); demo mode shows the banner and the sample-user picker. Pages read the user through
# ui.auth.require_login() / require_role() (both ui.auth.current_user()).
if auth_mode() == "oidc":
    require_login()
    with st.sidebar:
        render_sign_out()
else:
    render_demo_banner_and_picker()

pages = [
    st.Page("app_pages/chat.py", title=tr("app.page.chat"), icon=":material/forum:", url_path="chat"),
    st.Page("app_pages/plan.py", title=tr("app.page.plan"), icon=":material/luggage:", url_path="plan"),
    st.Page("app_pages/route.py", title=tr("app.page.route"), icon=":material/route:", url_path="route"),
    st.Page("app_pages/approvals.py", title=tr("app.page.approvals"), icon=":material/approval:", url_path="approvals"),
    st.Page("app_pages/reimbursement.py", title=tr("app.page.reimbursement"), icon=":material/receipt_long:", url_path="reimbursement"),
    st.Page("app_pages/router_lab.py", title=tr("app.page.router_lab"), icon=":material/science:", url_path="router-lab"),
]
try:
    st.navigation(pages).run()
except StoreError as exc:  # a database fault while a page ran: one sentence and what to do, never a traceback
    st.error(exc.message(lang()), icon="🗄️")
finally:  # once per server process, after the first page drew: the models, the gazetteer, Leaflet in the background
    warm_up()
