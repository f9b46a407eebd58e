"""Sign-in and roles, without streamlit: who the user is and what they may open and approve.

* :mod:`~navigo_core.auth.models` — :class:`Role` (traveller, approver, admin), :class:`User` (id = the OIDC
  ``sub`` or the demo id, name, e-mail, department, roles, approver scope), :class:`ApproverScope`,
  :class:`ConfiguredUser`, :class:`RolesConfig`, :class:`AuthConfigError`, ``parse_roles``.
* :mod:`~navigo_core.auth.loading` — ``roles.yaml``: ``data/roles.yaml`` is the shipped default (sample users),
  ``Settings.roles_file`` points at another (:func:`load_roles`, :func:`roles_for_settings`; the limits a
  crafted file is held to); :func:`roles_status` never raises.
* :mod:`~navigo_core.auth.access` — :func:`match_identity` (an OIDC identity → a configured user by ``sub`` or
  e-mail; anyone else a traveller), :func:`demo_users`, :func:`can_open`, :func:`may_approve` (in scope, never
  one's own).

The mode (demo or oidc) is :func:`navigo_core.config.resolve_auth_mode`; ``ui/auth.py`` reads ``st.user`` or the
demo picker and calls these.
"""

from __future__ import annotations

from navigo_core.auth.access import can_open, demo_user, demo_users, match_identity, may_approve, scope_of
from navigo_core.auth.loading import (
    DEFAULT_ROLES_FILE,
    MAX_ROLES_BYTES,
    default_roles,
    load_roles,
    roles_for_settings,
    roles_status,
)
from navigo_core.auth.models import (
    ALL,
    ROLES,
    ApproverScope,
    AuthConfigError,
    ConfiguredUser,
    Role,
    RolesConfig,
    User,
    parse_roles,
)
from navigo_core.config import AuthMode, resolve_auth_mode

__all__ = ["ALL", "DEFAULT_ROLES_FILE", "MAX_ROLES_BYTES", "ROLES", "ApproverScope", "AuthConfigError", "AuthMode",
           "ConfiguredUser", "Role", "RolesConfig", "User", "can_open", "default_roles", "demo_user", "demo_users",
           "load_roles", "match_identity", "may_approve", "parse_roles", "resolve_auth_mode", "roles_for_settings",
           "roles_status", "scope_of"]
