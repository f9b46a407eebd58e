"""Who is signed in and what they may do: roles, an approver's scope, the user, the roles file's model.

:func:`parse_roles` turns the raw YAML mapping of ``roles.yaml`` into a :class:`RolesConfig`; every problem
raises :class:`AuthConfigError` naming the file, the YAML path (``users[2].roles[0]``) and the fix.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from navigo_core.errors import InputError


class AuthConfigError(InputError):
    """The roles file is missing or invalid; the message names file, YAML path and fix."""

    default_code = "auth.error.bad_value"
    about_input = False  # the administrator's file, not a user's request


class Role(StrEnum):
    """What a user may do. Every signed-in user is a traveller; approver and admin are given in roles.yaml."""

    TRAVELLER = "traveller"
    APPROVER = "approver"
    ADMIN = "admin"


ROLES: tuple[Role, ...] = tuple(Role)
ALL = "*"
"""In an approver's ``departments``: every department."""


def norm(value: str) -> str:
    """The form identifiers are compared in: trimmed, case-folded (e-mails, departments, ids)."""
    return value.strip().casefold()


class ApproverScope(BaseModel):
    """Whose applications an approver decides: everyone in ``departments`` (``*``: all) and the ``people``
    listed (each an id, OIDC ``sub`` or e-mail; a configured user's entry stands for all three of theirs)."""

    model_config = ConfigDict(frozen=True)

    departments: frozenset[str] = frozenset()  # normalised (norm)
    people: frozenset[str] = frozenset()  # normalised identifiers

    @property
    def empty(self) -> bool:
        return not self.departments and not self.people

    def covers(self, person_ids: frozenset[str], department: str) -> bool:
        """Whether someone with these (normalised) identifiers in ``department`` is in the scope."""
        if ALL in self.departments or (department and norm(department) in self.departments):
            return True
        return bool(self.people & person_ids)


class User(BaseModel):
    """The signed-in user (or the demo user picked). ``id`` is the OIDC ``sub`` when signed in with an identity
    provider, the roles file's id in demo mode; ``roles`` always hold traveller."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    email: str = ""
    department: str = ""
    roles: frozenset[Role] = frozenset({Role.TRAVELLER})
    approves: ApproverScope = ApproverScope()
    sub: str = ""
    """The OIDC subject (empty in demo mode)."""
    config_id: str = ""
    """The roles file's id of the configured user this identity matched (empty: not in the file)."""
    demo: bool = False

    def has(self, role: Role | str) -> bool:
        return Role(role) in self.roles

    @property
    def identifiers(self) -> frozenset[str]:
        """Every identifier that names this person (normalised): id, sub, the roles file's id, e-mail."""
        return frozenset(norm(v) for v in (self.id, self.sub, self.config_id, self.email) if v.strip())

    @property
    def label(self) -> str:
        """How pages name the user: the name, with the e-mail when there is one."""
        return f"{self.name} <{self.email}>" if self.email and self.email != self.name else self.name


class ConfiguredUser(BaseModel):
    """One entry of roles.yaml's ``users``."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    email: str = ""
    sub: str = ""
    department: str = ""
    roles: frozenset[Role] = frozenset({Role.TRAVELLER})
    approves_departments: tuple[str, ...] = ()
    approves_people: tuple[str, ...] = ()
    demo: bool = False

    @property
    def identifiers(self) -> frozenset[str]:
        return frozenset(norm(v) for v in (self.id, self.sub, self.email) if v.strip())


class RolesConfig(BaseModel):
    """The validated roles file: the configured users in file order, looked up by id, ``sub`` or e-mail."""

    model_config = ConfigDict(frozen=True)

    file: str = ""
    users: tuple[ConfiguredUser, ...] = ()
    index: dict[str, ConfiguredUser] = Field(default_factory=dict, repr=False)
    """normalised id / sub / e-mail → user (built by :func:`parse_roles`)."""
    by_sub: dict[str, ConfiguredUser] = Field(default_factory=dict, repr=False)
    """configured OIDC ``sub`` (exact) → user."""
    by_email: dict[str, ConfiguredUser] = Field(default_factory=dict, repr=False)
    """normalised e-mail → user."""

    def find(self, identifier: str) -> ConfiguredUser | None:
        """The configured user one identifier (id, sub or e-mail, any case) names, or None."""
        return self.index.get(norm(identifier)) if identifier and identifier.strip() else None


# --- parsing ---------------------------------------------------------------------------------------

MAX_USERS = 10_000
MAX_TEXT = 200
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}$")
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,190}$")
_USER_KEYS = {"id", "name", "email", "sub", "department", "roles", "approves", "demo"}
_APPROVES_KEYS = {"departments", "people"}


def _bad(file: str, where: str, value: Any, expected: str) -> AuthConfigError:
    shown = repr(value) if not isinstance(value, str) else f'"{value}"'
    return AuthConfigError("auth.error.bad_value", file=file, where=where, value=shown[:80], expected=expected)


def _text(raw: Any, file: str, where: str, *, required: bool = False) -> str:
    if raw is None and not required:
        return ""
    if not isinstance(raw, str) or (required and not raw.strip()):
        raise _bad(file, where, raw, "a text" + (" (required)" if required else ""))
    value = raw.strip()
    if len(value) > MAX_TEXT:
        raise _bad(file, where, value[:40] + "…", f"at most {MAX_TEXT} characters")
    return value


def _text_list(raw: Any, file: str, where: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _bad(file, where, raw, "a list, e.g. [sales, engineering]")
    return [_text(item, file, f"{where}[{i}]", required=True) for i, item in enumerate(raw)]


def _roles(raw: Any, file: str, where: str) -> frozenset[Role]:
    if raw is None:
        return frozenset({Role.TRAVELLER})
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise _bad(file, where, raw, "a list of roles, e.g. [traveller, approver]")
    roles = {Role.TRAVELLER}
    known = ", ".join(r.value for r in ROLES)
    for i, item in enumerate(raw):
        if not isinstance(item, str) or item.strip().lower() not in {r.value for r in ROLES}:
            raise AuthConfigError("auth.error.unknown_role", file=file, where=f"{where}[{i}]",
                                  role=str(item)[:40], known=known)
        roles.add(Role(item.strip().lower()))
    return frozenset(roles)


def _user(raw: Any, file: str, where: str) -> ConfiguredUser:
    if not isinstance(raw, dict):
        raise _bad(file, where, raw, "a mapping with id, name, email, department and roles")
    unknown = sorted(str(k) for k in raw if k not in _USER_KEYS)
    if unknown:
        raise AuthConfigError("auth.error.unknown_key", file=file, where=f"{where}.{unknown[0]}",
                              key=unknown[0][:40], known=", ".join(sorted(_USER_KEYS)))
    uid = raw.get("id")
    if isinstance(uid, int) and not isinstance(uid, bool):
        uid = str(uid)
    uid = _text(uid, file, f"{where}.id", required=True)
    if not _ID.match(uid):
        raise _bad(file, f"{where}.id", uid, "letters, digits and . _ @ + - (no spaces)")
    email = _text(raw.get("email"), file, f"{where}.email")
    if email and not _EMAIL.match(email):
        raise _bad(file, f"{where}.email", email, "an e-mail address such as alice@example.com")
    demo = raw.get("demo", False)
    if not isinstance(demo, bool):
        raise _bad(file, f"{where}.demo", demo, "true or false")
    roles = _roles(raw.get("roles"), file, f"{where}.roles")
    approves = raw.get("approves")
    departments: list[str] = []
    people: list[str] = []
    if approves is not None:
        if not isinstance(approves, dict):
            raise _bad(file, f"{where}.approves", approves, "a mapping with departments and/or people")
        extra = sorted(str(k) for k in approves if k not in _APPROVES_KEYS)
        if extra:
            raise AuthConfigError("auth.error.unknown_key", file=file, where=f"{where}.approves.{extra[0]}",
                                  key=extra[0][:40], known=", ".join(sorted(_APPROVES_KEYS)))
        departments = _text_list(approves.get("departments"), file, f"{where}.approves.departments")
        people = _text_list(approves.get("people"), file, f"{where}.approves.people")
    if Role.APPROVER in roles and not (departments or people):
        raise AuthConfigError("auth.error.no_scope", file=file, where=f"{where}.approves", user=uid)
    if (departments or people) and Role.APPROVER not in roles:
        raise AuthConfigError("auth.error.scope_without_role", file=file, where=f"{where}.roles", user=uid)
    return ConfiguredUser(
        id=uid, name=_text(raw.get("name"), file, f"{where}.name") or uid, email=email,
        sub=_text(raw.get("sub"), file, f"{where}.sub"), department=_text(raw.get("department"), file, f"{where}.department"),
        roles=roles, approves_departments=tuple(departments), approves_people=tuple(people), demo=demo,
    )


def parse_roles(raw: Any, file: str = "roles.yaml") -> RolesConfig:
    """The validated :class:`RolesConfig` of a roles file's parsed YAML (``{users: [...]}``)."""
    if not isinstance(raw, dict):
        raise AuthConfigError("auth.error.not_mapping", file=file, where="-", found=type(raw).__name__)
    extra = sorted(str(k) for k in raw if k not in ("users", "version"))
    if extra:
        raise AuthConfigError("auth.error.unknown_key", file=file, where=extra[0], key=extra[0][:40], known="users, version")
    version = raw.get("version", 1)
    if version != 1:
        raise _bad(file, "version", version, "1")
    items = raw.get("users")
    if not isinstance(items, list) or not items:
        raise AuthConfigError("auth.error.no_users", file=file, where="users")
    if len(items) > MAX_USERS:
        raise _bad(file, "users", f"{len(items):,} users", f"at most {MAX_USERS:,} users")
    users = [_user(item, file, f"users[{i}]") for i, item in enumerate(items)]
    index: dict[str, ConfiguredUser] = {}
    for i, user in enumerate(users):
        for ident in user.identifiers:
            other = index.get(ident)
            if other is not None:
                raise AuthConfigError("auth.error.duplicate", file=file, where=f"users[{i}]", value=ident[:80],
                                      other=other.id, user=user.id)
            index[ident] = user
    for i, user in enumerate(users):
        for j, person in enumerate(user.approves_people):
            if norm(person) not in index and "@" not in person:
                raise AuthConfigError("auth.error.unknown_person", file=file,
                                      where=f"users[{i}].approves.people[{j}]", person=person[:80])
    return RolesConfig(file=file, users=tuple(users), index=index,
                       by_sub={u.sub: u for u in users if u.sub}, by_email={norm(u.email): u for u in users if u.email})
