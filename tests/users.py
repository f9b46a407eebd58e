"""Users for tests of the rules that need one: an approver of every department (``BOSS``), and a builder."""

from __future__ import annotations

from navigo_core.auth import Role, User
from navigo_core.auth.models import ApproverScope

TRAVELLER = "me"
"""The owner most tests create applications for (a plain traveller id; no default user exists in the core)."""


def approver(user_id: str = "boss", *departments: str, people: tuple[str, ...] = (), department: str = "") -> User:
    """An approver of ``departments`` (none given: every department, ``*``) and ``people``."""
    return User(id=user_id, name=user_id.title(), department=department,
                roles=frozenset({Role.TRAVELLER, Role.APPROVER}),
                approves=ApproverScope(departments=frozenset(d.casefold() for d in (departments or ("*",)) if d),
                                       people=frozenset(p.casefold() for p in people)))


BOSS = approver()
