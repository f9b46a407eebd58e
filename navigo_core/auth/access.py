"""Who the signed-in person is in the roles file, and what they may open and approve.

* :func:`match_identity` — an OpenID Connect identity (``sub``, e-mail, name) → :class:`User`: the configured
  user whose ``sub`` is that subject, else whose e-mail is that (verified) e-mail; anyone else is a traveller.
* :func:`demo_users` / :func:`demo_user` — the sample users the demo mode's picker offers.
* :func:`can_open` — whether a user holds the role a page needs (roles are not ranked: an admin who also
  approves has both roles in the file; traveller is everyone's).
* :func:`may_approve` — whether an approver decides an application of that owner and department: in their
  scope, and never their own.
"""

from __future__ import annotations

from navigo_core.auth.models import ApproverScope, ConfiguredUser, Role, RolesConfig, User, norm


def scope_of(configured: ConfiguredUser, config: RolesConfig) -> ApproverScope:
    """The approver scope of a configured user: departments normalised; each person entry stands for the
    identifiers (id, sub, e-mail) of the configured user it names, or for itself."""
    people: set[str] = set()
    for entry in configured.approves_people:
        people.add(norm(entry))
        named = config.find(entry)
        if named is not None:
            people |= named.identifiers
    return ApproverScope(departments=frozenset(norm(d) for d in configured.approves_departments),
                         people=frozenset(people))


def _user(configured: ConfiguredUser, config: RolesConfig, **identity: str | bool) -> User:
    values: dict[str, object] = {
        "id": configured.id, "name": configured.name, "email": configured.email,
        "department": configured.department, "roles": configured.roles,
        "approves": scope_of(configured, config) if Role.APPROVER in configured.roles else ApproverScope(),
        "config_id": configured.id, "sub": configured.sub,
    }
    values.update({k: v for k, v in identity.items() if v not in ("", None)})
    return User.model_validate(values)


def match_identity(config: RolesConfig, *, sub: str, email: str = "", name: str = "",
                   email_verified: bool | None = None) -> User:
    """The user for an identity the identity provider vouched for. Matched by ``sub`` first (a configured
    ``sub``, exactly), then by e-mail (any case) unless the provider says the e-mail is not verified; the
    user's ``id`` is always the ``sub``. Not in the file: a traveller named by the provider's claims."""
    sub = sub.strip()
    email = email.strip()
    if not sub:
        raise ValueError("an OpenID Connect identity has a sub")
    configured = config.by_sub.get(sub)
    if configured is None and email and email_verified is not False:
        configured = config.by_email.get(norm(email))
    if configured is not None:
        return _user(configured, config, id=sub, sub=sub, email=email or configured.email,
                     name=configured.name if configured.name != configured.id else (name.strip() or configured.name))
    return User(id=sub, sub=sub, name=name.strip() or email or sub, email=email)


def demo_users(config: RolesConfig) -> list[User]:
    """The sample users of demo mode: those marked ``demo: true`` (in file order), else every configured user."""
    marked = [c for c in config.users if c.demo] or list(config.users)
    return [_user(c, config, demo=True) for c in marked]


def demo_user(config: RolesConfig, user_id: str | None) -> User | None:
    """The demo user with that roles-file id (exact), or None when it is not one of :func:`demo_users`."""
    if not user_id:
        return None
    return next((u for u in demo_users(config) if u.id == user_id), None)


def can_open(user: User | None, page_role: Role | str) -> bool:
    """Whether ``user`` may open a page that needs ``page_role`` (nobody signed in: no page)."""
    return user is not None and user.has(page_role)


def may_approve(approver: User | None, owner_user_id: str, owner_department: str, *, owner_email: str = "") -> bool:
    """Whether ``approver`` may decide an application of ``owner_user_id`` (their user id: the OIDC ``sub`` or the
    demo id) in ``owner_department``. Needs the approver role and the owner in the approver's scope (a department
    listed, ``*``, or the person listed); never the approver's own application (any identifier of theirs, the
    e-mail included when ``owner_email`` is given), and never an application whose owner is unknown."""
    if approver is None or not approver.has(Role.APPROVER):
        return False
    owner = frozenset(norm(v) for v in (owner_user_id, owner_email) if v and v.strip())
    if not owner or owner & approver.identifiers:
        return False
    return approver.approves.covers(owner, owner_department or "")
