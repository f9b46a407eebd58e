"""Fail closed, and a policy loader no file can hang (issue "Hardening").

Before: with ``TRAVEL_POLICY_FILE`` deleted while the app ran, a trip one day ahead was drafted as
compliant and submitted without a justification (``applications.policy_and_grade`` swallowed the error),
and a claim was checked "OK"; a crafted policy (an alias bomb, 20,000-deep nesting, ``.nan`` / ``.inf``
caps) hung ``policy_status`` (which runs on every page) or switched a cap off.
"""

from __future__ import annotations

import copy
import math
import tempfile
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from navigo_core.business.applications import ApplicationService, PolicyUnavailable, policy_and_grade
from navigo_core.business.expenses import ExpenseItem, check_items
from navigo_core.business.policy import DEFAULT_POLICY_FILE, PolicyError, load_policy, policy_status
from navigo_core.business.policy.models import MAX_AMOUNT
from navigo_core.config import Settings
from navigo_core.providers.places import GazetteerPlaceProvider
from navigo_core.scenes import GateContext, handle_message
from navigo_core.store import Store

pytestmark = pytest.mark.usefixtures("no_internet")
SHIPPED = yaml.safe_load(DEFAULT_POLICY_FILE.read_text(encoding="utf-8"))


@pytest.fixture
def policy_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A custom policy (a copy of the shipped one) named by TRAVEL_POLICY_FILE."""
    path = tmp_path / "policy.yaml"
    path.write_text(DEFAULT_POLICY_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv("TRAVEL_POLICY_FILE", str(path))
    return path


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.from_url(f"sqlite:///{tmp_path / 'p.db'}")


def say(store: Store, text: str, flow: Any = None) -> Any:
    context = GateContext(settings=Settings(database_url=str(store.engine.url)), store=store, user="me",
                          active_flow=flow)
    return handle_message(text, context)


# --- fail closed -------------------------------------------------------------------------------

def test_a_policy_deleted_while_running_refuses_drafting(store: Store, policy_file: Path) -> None:
    tomorrow = date.today() + timedelta(days=1)
    text = f"申请{tomorrow.month}月{tomorrow.day}日去北京出差，拜访客户"
    _, drafted = say(store, text)
    assert drafted.payload["application"]["excesses"], drafted.text  # one day's notice breaks the policy
    policy_file.unlink()  # the administrator's file disappears while the app runs
    decision, reply = say(store, text)
    assert decision.scene_id == "travel_application"
    assert reply.error and reply.text.startswith("已拒绝：无法读取差旅政策"), reply.text
    assert "TA-" not in reply.text and "符合" not in reply.text
    assert len(ApplicationService(store).list()) == 1  # only the draft made while the policy was there


def test_a_policy_deleted_while_running_refuses_submitting(store: Store, policy_file: Path) -> None:
    start = date.today() + timedelta(days=1)
    _, drafted = say(store, f"New travel application from Shanghai to Beijing on {start:%B} {start.day}, client meeting, "
                            "budget 5000 CNY")  # complete: only the excess's justification is asked for
    number = drafted.payload["application"]["number"]
    policy_file.unlink()
    _, asked = say(store, "submit", drafted.flow)  # the excess needs a justification first
    _, reply = say(store, "the client asked for tomorrow", asked.flow)
    assert reply.error and reply.text.startswith("Refused: no travel policy can be read"), reply.text
    assert "was not found" in reply.text  # why, in the user's language
    assert ApplicationService(store).get(number).status == "draft"


def test_a_broken_policy_refuses_the_claim_check_in_the_chat(store: Store, policy_file: Path) -> None:
    policy_file.write_text("hotel: {caps: [unclosed\n", encoding="utf-8")
    decision, reply = say(store, "报销昨天在上海的出租车费 85 元")
    assert decision.scene_id == "reimbursement"
    assert reply.error and reply.text.startswith("已拒绝") and "不是合法的 YAML" in reply.text, reply.text
    assert "符合" not in reply.text


def test_the_services_fail_closed_too(store: Store, policy_file: Path) -> None:
    settings = Settings(travel_policy_file=str(policy_file))
    service = ApplicationService(store, settings=settings)
    app = service.create(owner="me", cities=["Hangzhou"], start_date=date.today() + timedelta(days=30))
    policy_file.unlink()
    with pytest.raises(PolicyUnavailable):
        service.submit(app.number, actor="me")
    with pytest.raises(PolicyUnavailable):
        service.create_from_text("apply for a business trip to Hangzhou", owner="me", places=GazetteerPlaceProvider(),
                                 today=date.today())
    with pytest.raises(PolicyUnavailable):
        policy_and_grade(GateContext(settings=settings))
    item = ExpenseItem(date=date.today(), city="Shanghai", category="transport", amount=85, receipt=True)
    with pytest.raises(PolicyUnavailable) as exc:
        check_items([item], None, "")
    assert "Refused" in exc.value.message("en") and "已拒绝" in exc.value.message("zh")
    assert service.get(app.number).status == "draft"


# --- the loader's limits -----------------------------------------------------------------------

def _policy_with(path: Path, where: tuple[str, ...], value: Any) -> Path:
    raw = copy.deepcopy(SHIPPED)
    node = raw
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize("value, words", [
    (float("nan"), "finite"), (float("inf"), "finite"), (-500, "positive"), (0, "positive"),
    (10 ** 400, "more than"), (5e12, "more than"), ("500", "expected a number"),
])
def test_caps_must_be_positive_finite_sane_numbers(tmp_path: Path, value: Any, words: str) -> None:
    path = _policy_with(tmp_path / "p.yaml", ("hotel", "caps", "cn_t1", "G1"), value)
    policy, error = policy_status(path)
    assert policy is None and error is not None
    assert "hotel.caps.cn_t1.G1" in error and words in error


@pytest.mark.parametrize("where", [("meals", "allowance", "cn_t1"), ("local_transport", "allowance", "cn_t1")])
def test_allowances_reject_nan_and_inf(tmp_path: Path, where: tuple[str, ...]) -> None:
    for value in (float("nan"), float("inf")):
        assert policy_status(_policy_with(tmp_path / "p.yaml", where, value))[0] is None


def test_over_hours_and_advance_days_are_bounded(tmp_path: Path) -> None:
    rules = copy.deepcopy(SHIPPED["flight_cabin"])
    rules[0]["over_hours"] = float("nan")
    assert policy_status(_policy_with(tmp_path / "a.yaml", ("flight_cabin",), rules))[0] is None
    assert policy_status(_policy_with(tmp_path / "b.yaml", ("advance_booking", "days"), 10 ** 30))[0] is None


ALIAS_BOMB = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))


@pytest.mark.timeout(60)  # a hang fails the test; nothing here measures time
@pytest.mark.parametrize("name, text, words", [
    ("bomb", ALIAS_BOMB + "grades: *i\n", "aliases are expanded"),
    ("aliases", "x: &x 1\n" + "".join(f"k{i}: *x\n" for i in range(200)), "aliases"),
    ("deep_flow", "grades: " + "[" * 20000 + "]" * 20000 + "\n", "nesting"),
    ("deep_block", "".join("  " * i + f"k{i}:\n" for i in range(400)) + "  " * 400 + "v\n", "nested deeper"),
    ("huge", "name: {en: '" + "x" * 300_000 + "'}\n", "larger than"),
    ("binary", "\x00\x01\x02\xff", ""),
])
def test_a_crafted_policy_never_hangs_policy_status(tmp_path: Path, name: str, text: str, words: str) -> None:
    path = tmp_path / f"{name}.yaml"
    if name == "binary":
        path.write_bytes(bytes(range(256)) * 50)
    else:
        path.write_text(text, encoding="utf-8")
    policy, error = policy_status(path)
    assert policy is None and error
    assert words in error
    assert policy_status(path) == (None, error)  # the broken version is remembered, not re-read


def test_anchors_a_real_policy_might_use_still_load(tmp_path: Path) -> None:
    raw = copy.deepcopy(SHIPPED)
    first, second = list(raw["hotel"]["caps"])[:2]
    raw["hotel"]["caps"][second] = raw["hotel"]["caps"][first]  # one mapping twice: YAML writes &id001 / *id001
    text = yaml.safe_dump(raw, allow_unicode=True)
    assert "&id001" in text and "*id001" in text
    path = tmp_path / "anchored.yaml"
    path.write_text(text, encoding="utf-8")
    policy = load_policy(path)
    assert policy.hotel.table[second] == policy.hotel.table[first]


def test_unreadable_and_missing_files_are_messages(tmp_path: Path) -> None:
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    for path in (folder, tmp_path / "missing.yaml"):
        policy, error = policy_status(path)
        assert policy is None and "not found" in (error or "")


# --- fuzz ----------------------------------------------------------------------------------------

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
leaves = st.one_of(st.none(), st.booleans(), st.integers(min_value=-10 ** 30, max_value=10 ** 30),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30))
values = st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=12)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


PATHS = _paths(SHIPPED)


def _assert_sane(policy: Any) -> None:
    for rule in (policy.hotel, policy.meals, policy.local_transport):
        for row in rule.table.values():
            assert all(math.isfinite(v) and 0 < v <= MAX_AMOUNT for v in row.values())
    assert all(math.isfinite(r.over_hours) and r.over_hours >= 0 for r in [*policy.flight_rules, *policy.train_rules])
    assert 0 <= policy.advance_days <= 366


@FUZZ
@given(path=st.sampled_from(PATHS), value=values)
def test_fuzz_policy_loader_with_one_value_changed(path: tuple[Any, ...], value: Any) -> None:
    raw = copy.deepcopy(SHIPPED)
    node = raw
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder, "p.yaml")
        file.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
        try:
            policy = load_policy(file)
        except PolicyError as exc:
            assert exc.message("en") and exc.message("zh")
            return
        _assert_sane(policy)


@FUZZ
@given(parts=st.lists(st.sampled_from([*"ab:-[]{}&*!|>'\"#,.\n 0123456789\t", ".nan", ".inf", "<<: *a", "&a ",
                                        "grades:", "hotel:", "  caps:", "- "]), max_size=120))
def test_fuzz_policy_status_never_raises(parts: list[str]) -> None:
    text = "".join(parts)
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder, "p.yaml")
        file.write_text(text, encoding="utf-8")
        policy, error = policy_status(file)
        assert (policy is None) != (error is None)
        if policy is not None:
            _assert_sane(policy)
