"""The sign-in proof's app: ui.auth.require_login (its "Sign in" button calls st.login()), then who st.user is,
what the roles file makes of them, and a section only approvers see (tests/e2e/test_login_e2e.py)."""

from __future__ import annotations

import streamlit as st

from navigo_core.auth import Role
from ui.auth import render_sign_out, require_login, require_role

user = require_login()
st.text(f"st.user.email: {st.user.email}")
st.text(f"st.user.sub: {st.user.sub}")
st.text(f"st.user.name: {st.user.name}")
st.text(f"NaviGo user: id={user.id} roles-file id={user.config_id or '-'} department={user.department or '-'} "
        f"roles={','.join(sorted(r.value for r in user.roles))}")
render_sign_out()
require_role(Role.APPROVER)
st.text("approver section")
