"""Every routing rule has sentences of its own it must match and near misses it must not
(tests/data/rule_examples.yaml); no two rule sources fire on one sentence; the package's scenes
carry no routing regexes; the labelled sets are scored through ``classify`` (what users get)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from navigo_core.config import Settings
from navigo_core.intent.evaluate import load_labelled
from navigo_core.intent.rules import Rule, RuleSet, default_rules, normalize
from navigo_core.scenes import (
    GateContext,
    GateDecision,
    SceneDescriptor,
    SceneReply,
    SceneRegistry,
    gate_classify,
    get_registry,
    make_gate_context,
)
from navigo_core.scenes.descriptor import GateRule, SceneRoute
from navigo_core.scenes.evaluate import score

pytestmark = pytest.mark.usefixtures("no_internet")

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
EXAMPLES = yaml.safe_load((DATA / "rule_examples.yaml").read_text(encoding="utf-8"))


def test_every_rule_and_category_has_three_examples_and_three_near_misses() -> None:
    rules = default_rules()
    assert set(EXAMPLES["rules"]) == {r.id for r in rules.rules}
    assert set(EXAMPLES["off_topic"]) == {c.name for c in rules.off_topic}
    for group in ("rules", "off_topic"):
        for name, ex in EXAMPLES[group].items():
            assert len(set(ex["match"])) >= 3 and len(set(ex["miss"])) >= 3, name


@pytest.mark.parametrize("rule_id", sorted(EXAMPLES["rules"]))
def test_rule_matches_its_examples_and_not_its_near_misses(rule_id: str) -> None:
    rule = default_rules().rule(rule_id)
    ex = EXAMPLES["rules"][rule_id]
    assert [t for t in ex["match"] if not rule.matches(normalize(t), t)] == []
    assert [t for t in ex["miss"] if rule.matches(normalize(t), t)] == []


@pytest.mark.parametrize("name", sorted(EXAMPLES["off_topic"]))
def test_off_topic_category_matches_its_examples_only(name: str) -> None:
    cat = next(c for c in default_rules().off_topic if c.name == name)
    ex = EXAMPLES["off_topic"][name]
    assert [t for t in ex["match"] if not cat.matches(normalize(t))] == []
    assert [t for t in ex["miss"] if cat.matches(normalize(t))] == []


def test_package_scenes_carry_no_routing_regexes() -> None:
    for scene in get_registry().scenes():
        assert not scene.gate.patterns and not scene.gate.negatives and scene.gate.matcher is None, scene.scene_id
    assert get_registry().scene_rules() == []  # every package rule is in rules.yaml


def _sources_firing(rules: RuleSet, text: str) -> set[str]:
    return {r.source for r in rules.all_matches(text)}


def _all_sentences() -> list[str]:
    out = [t for g in ("rules", "off_topic") for ex in EXAMPLES[g].values() for t in ex["match"] + ex["miss"]]
    for name in ("business_intents.jsonl", "intent_labelled.jsonl", "calibration.jsonl",
                 *(f"routing_tune{n}.jsonl" if n > 1 else "routing_tune.jsonl" for n in range(1, 16))):
        out += [r.text for r in load_labelled(DATA / name)]
    return out


def test_no_sentence_fires_rules_from_two_files() -> None:
    rules = get_registry().rules()
    both = [t for t in _all_sentences() if len(_sources_firing(rules, t)) > 1]
    assert both == []


def test_the_overlap_check_catches_a_scene_file_that_repeats_a_rule() -> None:
    """A scene from another file whose rule overlaps rules.yaml is found by the same check."""
    reg = SceneRegistry()
    reg.register(SceneDescriptor(
        scene_id="visa", label="visa", handler=lambda m, c: SceneReply(scene_id="visa", text="-"),
        gate=GateRule(patterns=(r"\bvisas?\b",)), route=SceneRoute(intents=("policy_query",))), source="plugin.py")
    rules = reg.rules()
    assert _sources_firing(rules, "do I need a visa for Japan") == {"plugin.py", "rules.yaml"}
    assert isinstance(rules.rules[0], Rule) and rules.rules[0].scene == "visa"


# --- the labelled sets, through classify ------------------------------------------------------

SETS = {  # file -> minimum accuracy through classify (measured; see benchmarks/bench_intent.py)
    "business_intents.jsonl": 0.97,
    "intent_labelled.jsonl": 0.95,
    "calibration.jsonl": 0.82,  # calibration data: indirect wording, many out-of-scope rows
    "out_of_scope.jsonl": 0.95,
    # the tuning sets: the rules and the L2 classifier were developed on them
    **{f"routing_tune{n}.jsonl" if n > 1 else "routing_tune.jsonl": 0.85 for n in range(1, 16)},
    # written before tuning; since this session a development set (its misses were studied and fixed)
    "business_fresh.jsonl": 0.95,
    "business_dev3.jsonl": 0.97,  # written blind before round 4 of tuning, then tuned on (86.2 % -> 100 %)
    "business_dev4.jsonl": 0.97,  # written blind before round 5 of tuning, then tuned on (91.3 % -> 99.7 %)
    "business_dev5.jsonl": 0.96,  # written blind before round 6 of tuning, then tuned on (87.2 % -> 98.4 %)
    "business_dev6.jsonl": 0.97,  # written blind before round 7 of tuning, then tuned on (87.8 % -> 99.4 %)
    "business_dev7.jsonl": 0.94,  # written blind before round 8 of tuning, then tuned on (86.9 % -> 95.9 %)
    "business_dev8.jsonl": 0.95,  # written blind before round 9 of tuning, then tuned on (91.9 % -> 97.5 %)
    "business_dev9.jsonl": 0.96,  # written blind before round 10 of tuning, then tuned on (91.9 % -> 98.8 %)
    "business_fresh3.jsonl": 0.89,  # written blind with dev8, never tuned on: 90.6 % before round 9, 91.8 % after round 10
    "business_dev10.jsonl": 0.95,  # written blind before round 11 of tuning, then tuned on (89.7 % -> 97.5 %)
    "business_fresh4.jsonl": 0.89,  # written blind with dev9, never tuned on: 91.0 % before round 10, 92.6 % after 11
    "business_dev11.jsonl": 0.96,  # written blind before round 12 of tuning, then tuned on (91.9 % -> 99.1 %)
    "business_fresh5.jsonl": 0.90,  # written blind with dev10, never tuned on: 91.4 % before round 11, 93.8 % after 12
    "business_dev12.jsonl": 0.91,  # written blind before round 13 of tuning, then tuned on (87.8 % -> 93.8 %)
    "business_fresh6.jsonl": 0.92,  # written blind with dev11, never tuned on: 94.9 % before round 12, 95.3 % after
    "business_fresh7.jsonl": 0.87,  # written blind with dev12, never tuned on: 89.5 % before round 13, 89.8 % after
    "business_dev13.jsonl": 0.88,  # written blind before round 14 of tuning, then tuned on (82.5 % -> 91.2 %)
    "business_fresh8.jsonl": 0.86,  # written blind with dev13, never tuned on: 85.5 % before round 14, 88.7 % after
    "business_dev14.jsonl": 0.92,  # written blind before round 15; never L2 training: the check set of its settings (85.9 % -> 93.3 %; rules from its misses in round 16: 95.3 %)
    "business_fresh9.jsonl": 0.89,  # written blind with dev14, never tuned on: 86.3 % before round 15, 92.2 % after, 92.6 % after 17
    "business_fresh10.jsonl": 0.87,  # written blind by a new writer after round 15, never tuned on: 91.0 % on arrival, 90.6 % after 16, 89.5 % after 17
    "business_dev17.jsonl": 0.95,  # written blind before round 16 of tuning, then tuned on (91.6 % -> 97.5 %)
    "business_fresh11.jsonl": 0.91,  # written blind with dev17, never tuned on: 92.6 % before round 16, 93.8 % after, 94.7 % after 17
    "business_dev18.jsonl": 0.95,  # written blind before round 17 of tuning, then tuned on (90.7 % -> 97.3 %)
    "business_dev19.jsonl": 0.95,  # written blind before round 18 of tuning, then tuned on (93.0 % -> 98.7 %)
    "business_fresh12.jsonl": 0.92,  # written blind by another new writer after round 17, never tuned on: 94.7 % on arrival, 94.3 % after 18, 96.0 % after 19
    "business_dev20.jsonl": 0.95,  # written blind before round 20 of tuning, then tuned on (91.1 % -> 98.0 %)
    "business_fresh13.jsonl": 0.92,  # written blind by a new writer with dev20, never tuned on: 86.4 % on arrival (before round 19), 88.2 % after 19, 90.4 % after 20, 91.2 % after 21, 92.1 % after 22; a development set since round 24 (its misses studied)
    "business_dev21.jsonl": 0.95,  # written blind before round 21 of tuning, then tuned on (89.9 % -> 97.5 %)
    "business_fresh14.jsonl": 0.92,  # written blind by another new writer with dev21, never tuned on: 90.3 % on arrival (after round 20), 91.6 % after 21, 93.4 % after 22; a development set since round 24 (its misses studied)
    "business_dev22.jsonl": 0.95,  # written blind before round 22 of tuning, then tuned on (90.8 % -> 97.1 %)
    "business_fresh15.jsonl": 0.92,  # written blind by another new writer after round 22, never tuned on: 90.6 % on arrival (after round 22); a development set since round 24 (its misses studied)
    "business_fresh16.jsonl": 0.92,  # written blind by a new writer (university and hospital staff), never tuned on: 96.1 % on arrival
    "business_fresh17.jsonl": 0.92,  # written blind by a new writer (machinery sales and service team), never tuned on: 96.1 % on arrival
    "business_fresh18.jsonl": 0.92,  # written blind by a new writer (freight forwarding), never tuned on: 94.8 % on arrival
    "business_fresh19.jsonl": 0.92,  # written blind by a new writer (consulting and audit firm), never tuned on: 95.8 % on arrival
    "business_dev23.jsonl": 0.95,  # written blind before round 23 (games company), then tuned on (96.2 % -> 98.7 %)
    "business_dev24.jsonl": 0.95,  # written blind before round 23 (construction group), then tuned on (94.7 % -> 98.0 %)
    "business_fresh20.jsonl": 0.92,  # written blind by a new writer (pharmaceutical company) after round 23's rules and L2 training on dev23/24, never tuned on: 94.7 % on arrival
    "business_dev25.jsonl": 0.97,  # written blind after round 23 (retail chain, replies inside a conversation), then tuned on (99.2 % -> 100 %)
    "business_fresh21.jsonl": 0.91,  # written blind by a new writer (automotive parts) after round 24, never tuned on: 94.7 % on arrival
    "business_fresh22.jsonl": 0.92,  # written blind by a new writer (education foundation) after round 24, never tuned on: 95.6 % on arrival
    "business_fresh23.jsonl": 0.94,  # written blind by a new writer (IT services) after round 24, never tuned on: 97.4 % on arrival
    "business_dev26.jsonl": 0.95,  # written blind before round 25 (private bank; half with no keyword of their label), then tuned on (79.5 % -> 97.9 %)
    "business_dev27.jsonl": 0.97,  # written blind before round 25 (film production; several clauses, one request), then tuned on (95.9 % -> 100 %)
    "business_dev28.jsonl": 0.97,  # written blind before round 25 (farm machinery; pinyin typos, dialect, non-native English), then tuned on (93.2 % -> 99.6 %)
    "business_fresh24.jsonl": 0.94,  # written blind by a new writer (hotel group) after round 25, never tuned on: 97.4 % on arrival
    "business_fresh25.jsonl": 0.94,  # written blind by a new writer (power grid and renewables) after round 25, never tuned on: 98.7 % on arrival
    "business_fresh26.jsonl": 0.94,  # written blind by a new writer (law firm) after the final rules of this stop, never tuned on: 97.5 % on arrival
    "business_fresh27.jsonl": 0.94,  # written blind by a new writer (tea-drink franchise chain) after the final rules, never tuned on: 98.3 % on arrival
    "general_fresh.jsonl": 0.82,  # ordinary travel requests written blind, never tuned on: 74.3 % on arrival, 87.4 % with the travel guess and general_dev1/2 in L2's training
    "general_dev1.jsonl": 0.84,  # ordinary travel requests in English written blind, then L2 training: 70.3 % on arrival, 88.2 % after
    "general_dev2.jsonl": 0.87,  # the same in Chinese: 82.9 % on arrival, 91.8 % after
    "business_fresh2.jsonl": 0.92,  # written by someone who never saw the rules, before the tuning; never tuned on
    "chat_fresh.jsonl": 0.85,  # written before tuning, never tuned on
}


_CONTEXT: list[GateContext] = []


def classify(text: str) -> GateDecision:
    """What the chat does with ``text`` as a first message, offline (``navigo_core.scenes.classify`` with
    explicit settings); the context is built once for all the sets."""
    if not _CONTEXT:
        _CONTEXT.append(make_gate_context(Settings(llm_api_key="")))
    return gate_classify(text, _CONTEXT[0])


@pytest.mark.parametrize("name", sorted(SETS))
def test_labelled_set_through_classify(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    rows = load_labelled(DATA / name)
    rep = score(rows, classify)
    wrong = Counter((o.row.scene or o.row.intent, o.decision.scene_id) for o in rep.outcomes if not o.correct)
    with capsys.disabled():  # the fresh sets' misses are not shown: nobody tunes on them
        misses = "" if "fresh" in name else f"; most common misses {wrong.most_common(3)}"
        print(f"\n{name}: {rep.accuracy:.1%} of {rep.n} through classify{misses}")
    assert rep.accuracy >= SETS[name]


def test_a_word_list_may_use_another_and_every_reference_is_expanded() -> None:
    nested = RuleSet.from_dict({"words": {"inner": ["quux"], "outer": ["foo {{inner}}"]},
                                "rules": [{"id": "t", "intent": "booking", "keywords": ["{{outer}}"],
                                           "negative": ["{{outer}} no"], "topic": True}]})
    rule = nested.rule("t")
    assert rule.matches("foo quux") and not rule.matches("foo bar") and not rule.matches("foo quux no")
    assert rule.topic
    for r in default_rules().rules:  # no {{name}} is left in a compiled pattern
        for pattern in (r.keyword, r.negative):
            assert pattern is None or "{{" not in pattern.pattern, r.id
    with pytest.raises(ValueError, match="circle"):
        RuleSet.from_dict({"words": {"a": ["x{{b}}"], "b": ["y{{a}}"]}, "rules": []})
    with pytest.raises(ValueError, match="true or false"):
        RuleSet.from_dict({"rules": [{"id": "t", "intent": "booking", "keywords": ["x"], "topic": "yes"}]})
