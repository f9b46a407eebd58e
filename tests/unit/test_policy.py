"""Travel policy: loader validation, tiers, caps, class rules, checks, and the policy_check agent."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from navigo_core.business.policy import (
    DEFAULT_POLICY_FILE, PolicyError, check_expense, check_trip, default_policy, load_policy, policy_status,
)
from navigo_core.providers.places.base import Place


@pytest.fixture(scope="module")
def policy():
    return default_policy()


def _bad(tmp_path: Path, mutate) -> Path:
    raw = yaml.safe_load(DEFAULT_POLICY_FILE.read_text(encoding="utf-8"))
    mutate(raw)
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return path


def test_default_policy_loads_and_is_cached(policy):
    assert policy.grades == ["G1", "G2", "G3", "G4", "G5"]
    assert load_policy() is policy and load_policy("") is policy
    assert policy.advance_days == 7 and policy.currency == "CNY"


@pytest.mark.parametrize("mutate, where, words", [
    (lambda r: r["hotel"]["caps"].pop("cn_t2"), "hotel.caps", ["cn_t2"]),
    (lambda r: r["hotel"]["caps"]["cn_t1"].__setitem__("G3", -5), "hotel.caps.cn_t1.G3", ["-5", "positive"]),
    (lambda r: r["flight_cabin"][0]["grades"].append("G9"), "flight_cabin[0].grades", ["G9", "grades"]),
    (lambda r: r["meals"]["allowance"].__setitem__("mars", 10), "meals.allowance.mars", ["mars", "tiers"]),
    (lambda r: r["hotel"]["caps"]["cn_t1"].pop("G5"), "hotel.caps.cn_t1", ["G5"]),
    (lambda r: r.pop("advance_booking"), "advance_booking", ["missing"]),
])
def test_invalid_policy_files(tmp_path, mutate, where, words):
    path = _bad(tmp_path, mutate)
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    msg = str(info.value)
    assert str(path) in msg and where in msg
    for w in words:
        assert w in msg
    policy, error = policy_status(path)
    assert policy is None and where in error
    _, zh = policy_status(path, "zh")
    assert "差旅政策文件" in zh


def test_missing_and_broken_files(tmp_path):
    policy, error = policy_status(tmp_path / "nope.yaml")
    assert policy is None and "nope.yaml" in error
    bad = tmp_path / "bad.yaml"
    bad.write_text("hotel: [unclosed", encoding="utf-8")
    assert policy_status(bad)[0] is None


@pytest.mark.parametrize("city, tier", [
    ("北京", "cn_t1"), ("Shanghai", "cn_t1"), ("上海市", "cn_t1"), ("杭州", "cn_t2"), ("Xi'an", "cn_t2"),
    ("Tokyo", "intl_apac_high"), ("香港", "intl_apac_high"), ("London", "intl_eu_na"), ("Nairobi", "intl_other"),
])
def test_tiers_by_name(policy, city, tier):
    assert policy.tier_of(city).id == tier


def test_tiers_by_place(policy):
    lanzhou = Place(name="Lanzhou", name_zh="兰州", lat=36.06, lon=103.8, country="CN")
    lyon = Place(name="Lyon", lat=45.75, lon=4.85, country="FR")
    assert policy.tier_of(lanzhou).id == "cn_t3"
    assert policy.tier_of(lyon).id == "intl_eu_na"
    assert policy.tier_of(Place(name="Pudong", name_zh="上海", lat=31.2, lon=121.5, country="CN")).id == "cn_t1"
    t1 = policy.tier_of("Beijing")
    assert t1.label_en and t1.label_zh


def test_caps_and_allowances(policy):
    cap = policy.hotel_cap("cn_t1", "G3")
    assert (cap.amount, cap.currency) == (800, "CNY")
    assert policy.hotel_cap("intl_eu_na", "G5").amount > policy.hotel_cap("cn_t3", "G1").amount
    assert policy.meal_allowance("cn_t2", "G1").amount == 120
    assert policy.meal_allowance("intl_apac_high", "G4").amount == 600
    assert policy.transport_allowance("cn_t1", "G2").amount == 100
    with pytest.raises(PolicyError):
        policy.hotel_cap("cn_t1", "G42")


def test_cabin_and_train_rules(policy):
    assert policy.cabin("G1", 12) == "economy"
    assert policy.cabin("G4", 3) == "economy" and policy.cabin("G4", 5) == "business"
    assert policy.cabin("G5", 1) == "business"
    assert policy.cabin("G3", 10) == "premium_economy"
    assert policy.train_seat("G3", 1) == "second_class" and policy.train_seat("G3", 5) == "first_class"
    assert policy.train_seat("G5", 1) == "business"
    assert policy.parse_grade("经理") == "G3" and policy.find_grade("I'm a g4") == "G4"


def test_check_trip(policy):
    out = check_trip(policy, city="上海", grade="G3", nights=3, hotel_per_night=1000, cabin="business", flight_hours=2,
                     days=4, meals_per_day=200, booked_days_ahead=2)
    by = {e.rule_id: e for e in out}
    assert set(by) == {"HOTEL-1", "MEAL-1", "FLIGHT-4", "ADVANCE-1"}
    assert by["HOTEL-1"].amount_over == 600 and by["HOTEL-1"].currency == "CNY"
    assert by["MEAL-1"].amount_over == 200
    assert by["FLIGHT-4"].amount_over is None and "Business" in by["FLIGHT-4"].message
    assert by["HOTEL-1"].rule and by["HOTEL-1"].rule_zh and "HOTEL-1" in by["HOTEL-1"].message
    assert check_trip(policy, city="Shanghai", grade="G3", nights=3, hotel_per_night=800, cabin="economy",
                      flight_hours=2, booked_days_ahead=10) == []
    # converted: 200 USD/night in Tokyo for G1 (cap 1200 CNY)
    usd = check_trip(policy, city="Tokyo", grade="G1", nights=2, hotel_per_night=250, currency="USD")
    assert usd and usd[0].currency == "USD" and usd[0].amount_over > 0


def test_check_expense(policy):
    out = check_expense(policy, city="杭州", grade="G1", category="hotel", amount=1000, currency="CNY", nights=2)
    assert [e.amount_over for e in out] == [200]
    assert check_expense(policy, city="杭州", grade="G1", category="meal", amount=240, currency="CNY", days=2) == []
    taxi = check_expense(policy, city="Beijing", grade="G2", category="transport", amount=150, currency="CNY")
    assert taxi[0].amount_over == 50 and taxi[0].rule_id == "TRANS-1"
    assert check_expense(policy, city="Beijing", grade="G2", category="other", amount=9999, currency="CNY") == []
    seat = check_expense(policy, city="Beijing", grade="G2", category="train", amount=900, currency="CNY",
                         seat="first_class", duration_hours=4.5)
    assert seat[0].rule_id == "TRAIN-4"


def test_policy_check_agent_on_a_luxury_plan():
    from navigo_core.config import Settings
    from navigo_core.planner.agents import AGENTS, policy_check
    from navigo_core.planner.supervisor import make_planner_deps, plan

    assert "policy_check" in AGENTS
    settings = Settings(llm_api_key="", employee_grade="G1", _env_file=None)
    deps = make_planner_deps(settings, clock=lambda: datetime(2026, 5, 1, 9, tzinfo=timezone.utc))
    deps.settings = settings  # type: ignore[attr-defined]
    state = plan("Business trip: luxury 5-star hotel from Shanghai to Tokyo 2026-05-04 to 2026-05-08, budget 60000 CNY, "
                 "1 adult", deps)
    assert state.budget is not None and state.policy_excesses is not None
    rules = {e["rule_id"]: e for e in state.policy_excesses}
    assert "HOTEL-1" in rules and rules["HOTEL-1"]["amount_over"] > 0 and rules["HOTEL-1"]["grade"] == "G1"
    assert "ADVANCE-1" in rules  # 3 days ahead < 7
    logs = [e for e in state.decision_log if e.agent == "policy_check"]
    assert len(logs) == 1 and "HOTEL-1" in logs[0].output_summary
    assert policy_check.run(state, deps) == {}  # idempotent
    assert policy_check.run(state.model_copy(update={"budget": None, "policy_excesses": None}), deps) == {}


@pytest.mark.parametrize("text", [
    "Luxury 5-star hotel trip from Shanghai to Tokyo 2026-05-04 to 2026-05-08, budget 60000 CNY, 1 adult",
    "上海出发去东京玩，2026年5月4日到8日，住五星酒店，预算60000元，一个人",
])
def test_a_leisure_trip_is_not_held_to_the_company_policy(text):
    from navigo_core.config import Settings
    from navigo_core.planner.supervisor import make_planner_deps, plan

    settings = Settings(llm_api_key="", employee_grade="G1", _env_file=None)
    state = plan(text, make_planner_deps(settings, clock=lambda: datetime(2026, 5, 1, 9, tzinfo=timezone.utc)))
    assert state.budget is not None and state.policy_excesses == []
    log = next(e for e in state.decision_log if e.agent == "policy_check")
    assert "leisure" in log.output_summary


def test_custom_policy_file_is_read_once_per_version_and_used_by_scenes(tmp_path):
    import os

    from navigo_core.business.applications import policy_and_grade
    from navigo_core.config import get_settings
    from navigo_core.business.policy import DEFAULT_POLICY_FILE, load_policy

    raw = yaml.safe_load(DEFAULT_POLICY_FILE.read_text(encoding="utf-8"))
    raw["hotel"]["caps"]["cn_t1"]["G1"] = 444
    custom = tmp_path / "policy.yaml"
    custom.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    first = load_policy(custom)
    assert load_policy(custom) is first  # not re-read while unchanged
    assert first.hotel_cap("cn_t1", "G1").amount == 444

    raw["hotel"]["caps"]["cn_t1"]["G1"] = 455
    custom.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    os.utime(custom, ns=(first_ns := custom.stat().st_mtime_ns + 10**9, first_ns))
    assert load_policy(custom).hotel_cap("cn_t1", "G1").amount == 455  # an edit takes effect

    class Ctx:
        settings = get_settings(travel_policy_file=str(custom))

    policy, _grade, _assumed = policy_and_grade(Ctx())
    assert policy.hotel_cap("cn_t1", "G1").amount == 455  # scenes use the configured file
