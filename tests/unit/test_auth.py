"""Sign-in and roles (navigo_core/auth): the roles file, matching an identity, approver scope, the mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from navigo_core.auth import (
    DEFAULT_ROLES_FILE,
    MAX_ROLES_BYTES,
    AuthConfigError,
    Role,
    RolesConfig,
    User,
    can_open,
    default_roles,
    demo_user,
    demo_users,
    load_roles,
    match_identity,
    may_approve,
    parse_roles,
    roles_for_settings,
    roles_status,
)
from navigo_core.config import Settings, resolve_auth_mode

pytestmark = pytest.mark.usefixtures("no_internet")


def write(tmp_path: Path, data: Any, name: str = "roles.yaml") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def config(*users: dict[str, Any]) -> RolesConfig:
    return parse_roles({"users": list(users)}, "test.yaml")


def load_error(tmp_path: Path, data: Any) -> AuthConfigError:
    with pytest.raises(AuthConfigError) as info:
        load_roles(write(tmp_path, data))
    return info.value


# --- the shipped file ----------------------------------------------------------------------------

def test_the_shipped_roles_file_holds_the_sample_users() -> None:
    roles = load_roles(None)
    assert roles is default_roles() and load_roles("") is roles and load_roles(DEFAULT_ROLES_FILE) is roles
    by_id = {u.id: u for u in roles.users}
    assert by_id["alice"].department == "sales" and by_id["alice"].roles == {Role.TRAVELLER}
    assert by_id["bob"].department == "engineering" and by_id["bob"].roles == {Role.TRAVELLER}
    assert by_id["carol"].roles == {Role.TRAVELLER, Role.APPROVER}
    assert set(by_id["carol"].approves_departments) == {"sales", "engineering"}
    assert Role.ADMIN in by_id["dave"].roles
    text = DEFAULT_ROLES_FILE.read_text(encoding="utf-8")
    assert text.count("\n#") >= 10, "the file explains itself to an administrator"


def test_settings_name_the_shipped_file_by_default() -> None:
    s = Settings()
    assert Path(s.roles_file).resolve() == DEFAULT_ROLES_FILE
    assert roles_for_settings(s) is default_roles()
    assert roles_for_settings(Settings(roles_file="")) is default_roles()


def test_demo_users_are_the_marked_sample_users_with_a_traveller_and_an_approver() -> None:
    users = demo_users(default_roles())
    assert [u.id for u in users][:3] == ["alice", "bob", "carol"]
    assert all(u.demo and not u.sub for u in users)
    assert any(u.roles == {Role.TRAVELLER} for u in users) and any(u.has(Role.APPROVER) for u in users)
    assert demo_user(default_roles(), "carol") == users[2]
    assert demo_user(default_roles(), "mallory") is None and demo_user(default_roles(), None) is None
    assert demo_user(default_roles(), "alice@example.com") is None  # the id only, never the e-mail


def test_without_marked_users_every_user_is_offered() -> None:
    roles = config({"id": "x", "name": "X"}, {"id": "y"})
    assert [u.id for u in demo_users(roles)] == ["x", "y"]
    assert demo_users(roles)[1].name == "y"


# --- a custom file ----------------------------------------------------------------------------------

def test_a_custom_file_is_read_and_an_edit_takes_effect(tmp_path: Path) -> None:
    path = write(tmp_path, {"users": [{"id": "zoe", "name": "Zoe", "email": "zoe@corp.example", "department": "ops"}]})
    assert [u.id for u in load_roles(path).users] == ["zoe"]
    assert load_roles(str(path)) is load_roles(path)  # one read per version
    path.write_text(yaml.safe_dump({"users": [{"id": "zoe"}, {"id": "yan", "roles": ["admin"]}]}), encoding="utf-8")
    assert [u.id for u in load_roles(path).users] == ["zoe", "yan"]
    roles, error = roles_status(path)
    assert roles is not None and error is None


@pytest.mark.parametrize(("data", "code", "words"), [
    ("users: [", "auth.error.yaml", ["not valid YAML"]),
    ("- alice\n- bob\n", "auth.error.not_mapping", ["must hold a mapping", "list"]),
    ({"users": []}, "auth.error.no_users", ["at least one user"]),
    ({"users": {"alice": {}}}, "auth.error.no_users", ["users must be a list"]),
    ({"users": ["alice"]}, "auth.error.bad_value", ["users[0]", "a mapping"]),
    ({"users": [{"name": "No Id"}]}, "auth.error.bad_value", ["users[0].id", "required"]),
    ({"users": [{"id": "al ice"}]}, "auth.error.bad_value", ["users[0].id", "no spaces"]),
    ({"users": [{"id": "a", "roles": "travller"}]}, "auth.error.unknown_role", ["users[0].roles[0]", "travller",
                                                                              "traveller, approver, admin"]),
    ({"users": [{"id": "a", "roles": ["traveller", "boss"]}]}, "auth.error.unknown_role", ["users[0].roles[1]", "boss"]),
    ({"users": [{"id": "a", "roles": {"admin": True}}]}, "auth.error.bad_value", ["users[0].roles", "a list of roles"]),
    ({"users": [{"id": "a", "roles": [1]}]}, "auth.error.unknown_role", ["users[0].roles[0]"]),
    ({"users": [{"id": "a", "email": "not-an-email"}]}, "auth.error.bad_value", ["users[0].email", "e-mail"]),
    ({"users": [{"id": "a", "name": ["A"]}]}, "auth.error.bad_value", ["users[0].name", "a text"]),
    ({"users": [{"id": "a", "demo": "yes"}]}, "auth.error.bad_value", ["users[0].demo", "true or false"]),
    ({"users": [{"id": "a", "role": ["admin"]}]}, "auth.error.unknown_key", ["users[0].role", "roles"]),
    ({"users": [{"id": "a"}], "admins": ["a"]}, "auth.error.unknown_key", ["admins"]),
    ({"users": [{"id": "a", "roles": ["approver"]}]}, "auth.error.no_scope", ["approver", "approves for nobody"]),
    ({"users": [{"id": "a", "approves": {"departments": ["x"]}}]}, "auth.error.scope_without_role",
     ["not the approver role"]),
    ({"users": [{"id": "a", "roles": ["approver"], "approves": ["sales"]}]}, "auth.error.bad_value",
     ["users[0].approves", "a mapping"]),
    ({"users": [{"id": "a", "roles": ["approver"], "approves": {"departments": "sales"}}]}, "auth.error.bad_value",
     ["users[0].approves.departments", "a list"]),
    ({"users": [{"id": "a", "roles": ["approver"], "approves": {"teams": ["x"]}}]}, "auth.error.unknown_key",
     ["users[0].approves.teams"]),
    ({"users": [{"id": "a", "roles": ["approver"], "approves": {"people": ["bbo"]}}, {"id": "bob"}]},
     "auth.error.unknown_person", ["users[0].approves.people[0]", "bbo"]),
    ({"users": [{"id": "a", "email": "x@example.com"}, {"id": "b", "email": "X@Example.com"}]},
     "auth.error.duplicate", ["users[1]", "x@example.com", "already used by a"]),
    ({"users": [{"id": "a"}, {"id": "a"}]}, "auth.error.duplicate", ["users[1]"]),
    ({"version": 2, "users": [{"id": "a"}]}, "auth.error.bad_value", ["version"]),
])
def test_a_bad_file_raises_a_specific_error(tmp_path: Path, data: Any, code: str, words: list[str]) -> None:
    error = load_error(tmp_path, data)
    assert isinstance(error, AuthConfigError) and error.code == code
    message = error.message("en")
    assert str(tmp_path / "roles.yaml") in message
    for word in words:
        assert word in message, message
    assert error.message("zh") != message  # both languages


def test_a_missing_file_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(AuthConfigError) as info:
        load_roles(tmp_path / "nope.yaml")
    assert info.value.code == "auth.error.not_found" and "ROLES_FILE" in info.value.message()
    roles, error = roles_status(tmp_path / "nope.yaml")
    assert roles is None and error is not None and "ROLES_FILE" in error


def test_a_huge_file_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "roles.yaml"
    path.write_bytes(b"users:\n" + b"  - {id: u}\n" * (MAX_ROLES_BYTES // 10))
    assert path.stat().st_size > MAX_ROLES_BYTES
    with pytest.raises(AuthConfigError) as info:
        load_roles(path)
    assert info.value.code == "auth.error.too_large" and "1,000,000" in info.value.message()


@pytest.mark.parametrize(("text", "detail"), [
    ("a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8)), "values once aliases are expanded"),
    ("users: " + "[" * 50 + "]" * 50 + "\n", "nested deeper"),
    ("x: &x 1\nusers: [" + ", ".join(["*x"] * 150) + "]\n", "aliases"),
])
def test_a_crafted_file_is_refused(tmp_path: Path, text: str, detail: str) -> None:
    error = load_error(tmp_path, text)
    assert error.code == "auth.error.too_complex" and detail in error.message(), error.message()


def test_a_broken_version_is_remembered_and_a_fix_is_seen(tmp_path: Path) -> None:
    path = write(tmp_path, {"users": [{"id": "a", "roles": ["boss"]}]})
    for _ in range(2):
        assert roles_status(path)[1] is not None
    path.write_text("users:\n  - id: a\n    roles: [admin]\n", encoding="utf-8")
    roles, error = roles_status(path)
    assert error is None and roles is not None and roles.users[0].roles == {Role.TRAVELLER, Role.ADMIN}


# --- matching an identity -----------------------------------------------------------------------------

ROLES = config(
    {"id": "alice", "name": "Alice Chen", "email": "Alice@Example.com", "department": "sales"},
    {"id": "bob", "email": "bob@example.com", "department": "engineering", "sub": "oidc|bob"},
    {"id": "carol", "name": "Carol", "email": "carol@example.com", "department": "finance",
     "roles": ["traveller", "approver"], "approves": {"departments": ["Sales", "engineering"], "people": ["dave"]}},
    {"id": "dave", "email": "dave@example.com", "department": "it", "roles": ["admin"]},
    {"id": "erin", "email": "erin@example.com", "roles": ["approver"], "approves": {"departments": ["*"]}},
    {"id": "frank", "email": "frank@example.com", "department": "sales", "roles": ["approver"],
     "approves": {"people": ["outsider@example.com"]}},
)


def test_a_known_email_matches_the_configured_user_and_the_id_is_the_sub() -> None:
    user = match_identity(ROLES, sub="0a1b2c", email="alice@example.COM", name="A. Chen (IdP)")
    assert user.id == "0a1b2c" and user.sub == "0a1b2c" and user.config_id == "alice"
    assert user.name == "Alice Chen" and user.department == "sales" and user.roles == {Role.TRAVELLER}
    assert not user.demo


def test_a_configured_sub_matches_before_the_email() -> None:
    user = match_identity(ROLES, sub="oidc|bob", email="someone.else@example.com", name="Bobby")
    assert user.config_id == "bob" and user.id == "oidc|bob" and user.email == "someone.else@example.com"
    assert user.name == "Bobby"  # the file names bob by id only: the provider's name is used


def test_an_unknown_identity_is_a_traveller() -> None:
    user = match_identity(ROLES, sub="xyz", email="new@example.com", name="New Person")
    assert user.roles == {Role.TRAVELLER} and user.config_id == "" and user.name == "New Person"
    assert match_identity(ROLES, sub="xyz").name == "xyz"
    assert match_identity(ROLES, sub="xyz", email="n@example.com").name == "n@example.com"


def test_a_sub_equal_to_a_configured_id_is_not_that_user() -> None:
    """The identity provider's subject is matched to a configured ``sub`` only, never to an id."""
    assert match_identity(ROLES, sub="dave").roles == {Role.TRAVELLER}


def test_an_unverified_email_does_not_match() -> None:
    assert match_identity(ROLES, sub="s", email="dave@example.com", email_verified=False).roles == {Role.TRAVELLER}
    assert Role.ADMIN in match_identity(ROLES, sub="s", email="dave@example.com", email_verified=True).roles


def test_an_identity_needs_a_sub() -> None:
    with pytest.raises(ValueError, match="sub"):
        match_identity(ROLES, sub=" ", email="alice@example.com")


# --- pages and approvals --------------------------------------------------------------------------------

def signed_in(email: str, sub: str | None = None) -> User:
    return match_identity(ROLES, sub=sub or f"sub-{email}", email=email)


def test_can_open_needs_the_page_role() -> None:
    alice, carol, dave = signed_in("alice@example.com"), signed_in("carol@example.com"), signed_in("dave@example.com")
    assert can_open(alice, Role.TRAVELLER) and can_open(alice, "traveller")
    assert not can_open(alice, Role.APPROVER) and not can_open(alice, Role.ADMIN)
    assert can_open(carol, Role.APPROVER) and not can_open(carol, Role.ADMIN)
    assert can_open(dave, Role.ADMIN) and can_open(dave, Role.TRAVELLER) and not can_open(dave, Role.APPROVER)
    assert not can_open(None, Role.TRAVELLER)
    with pytest.raises(ValueError):
        can_open(alice, "superuser")


def test_an_approver_approves_the_departments_and_people_in_scope() -> None:
    carol = signed_in("carol@example.com")
    assert may_approve(carol, "sub-alice", "sales") and may_approve(carol, "sub-alice", "SALES ")
    assert may_approve(carol, "sub-bob", "engineering")
    assert not may_approve(carol, "sub-x", "finance") and not may_approve(carol, "sub-x", "")
    assert may_approve(carol, "dave", "it")  # dave listed by id
    assert may_approve(carol, "sub-of-dave", "it", owner_email="DAVE@example.com")  # or by e-mail
    assert not may_approve(carol, "sub-of-dave", "it")  # a sub the file does not know
    erin = signed_in("erin@example.com")
    assert may_approve(erin, "anyone", "whatever") and may_approve(erin, "anyone", "")
    frank = signed_in("frank@example.com")
    assert may_approve(frank, "s", "", owner_email="outsider@example.com") and not may_approve(frank, "s", "sales")


def test_nobody_approves_their_own_application() -> None:
    carol = signed_in("carol@example.com", sub="carol-sub")
    erin = signed_in("erin@example.com", sub="erin-sub")
    for owner in ("carol-sub", "carol", "carol@example.com", "CAROL@example.com"):
        assert not may_approve(carol, owner, "sales"), owner
    assert not may_approve(carol, "other-sub", "sales", owner_email="carol@example.com")
    assert not may_approve(erin, "erin-sub", "finance")  # even with every department in scope
    assert may_approve(erin, "carol-sub", "finance")
    demo_carol = demo_user(default_roles(), "carol")
    assert demo_carol is not None and not may_approve(demo_carol, "carol", "sales")
    assert may_approve(demo_carol, "alice", "sales") and may_approve(demo_carol, "bob", "engineering")
    assert not may_approve(demo_carol, "", "sales")  # an unknown owner is never approved


def test_only_approvers_approve() -> None:
    alice, dave = signed_in("alice@example.com"), signed_in("dave@example.com")
    assert not may_approve(alice, "sub-bob", "sales")
    assert not may_approve(dave, "sub-bob", "sales")  # an admin is not an approver
    assert not may_approve(None, "sub-bob", "sales")


def test_the_demo_sample_approvers_cover_each_other() -> None:
    """In the shipped file, carol approves sales and engineering; erin approves finance (carol) and dave."""
    roles = default_roles()
    carol, erin = demo_user(roles, "carol"), demo_user(roles, "erin")
    assert carol is not None and erin is not None
    assert may_approve(erin, "carol", "finance") and may_approve(erin, "dave", "it")
    assert not may_approve(carol, "dave", "it")


# --- the mode -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "has_auth", "mode"), [
    (None, False, "demo"), (None, True, "oidc"), ("", True, "oidc"), ("auto", False, "demo"),
    ("demo", True, "demo"), ("oidc", False, "oidc"), ("OIDC", False, "oidc"),
])
def test_the_auth_mode(value: str | None, has_auth: bool, mode: str) -> None:
    s = Settings(auth_mode=value)  # type: ignore[arg-type]
    assert resolve_auth_mode(s, has_auth_section=has_auth) == mode


def test_the_auth_mode_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTH_MODE", "demo")
    assert Settings().auth_mode == "demo"
    monkeypatch.setenv("AUTH_MODE", "")
    assert Settings().auth_mode is None
    monkeypatch.setenv("AUTH_MODE", "ldap")
    with pytest.raises(ValueError):
        Settings()
