"""The literal prefilter never changes a routing result: the literals it derives are ones every
match contains, and on every labelled sentence of the repository the rules it lets run find
exactly what running all of them finds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from navigo_core.prefilter import Prefilter, required_literals, top_level_alternatives
from navigo_core.intent.rules import compile_pattern, default_rules, normalize

pytestmark = [pytest.mark.usefixtures("no_internet"), pytest.mark.heavy]

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"


def _lits(pattern: str) -> set[str] | None:
    got = required_literals(compile_pattern(pattern))
    return None if got is None else set(got)


@pytest.mark.parametrize(("pattern", "expected"), [
    (r"\b(?:cancel|withdraw)\b", {"cancel", "withdraw"}),
    (r"需要.{0,4}报销", {"需要"}),   # the first of equal length: either bounds every match
    (r"colou?r", {"colo"}),
    (r"[?？]\s*$", {"?"}),  # "？" reads as the normalised message has it: "?"
    (r"(?:订|买)(?!单)[^，。]{0,16}?(?:机票|航班)", {"机票", "航班"}),
    (r"\d+号", {"号"}),
    (r"(?:ab)+c", {"ab"}),
])
def test_literals_that_every_match_contains(pattern: str, expected: set[str]) -> None:
    assert _lits(pattern) == expected


@pytest.mark.parametrize("pattern", [
    r".*", r"\w+", r"[^a]b?", r"(?:cancel|)x?", r"(?i:cancel)", r"Cancel",  # capitals compile with IGNORECASE
    r"[\u4e00-\u9fff]{2}", r"(?=cancel)",
])
def test_patterns_it_cannot_bound_always_run(pattern: str) -> None:
    assert _lits(pattern) is None
    assert Prefilter([compile_pattern(pattern)]).candidates("anything") == {0}


def test_candidates_are_the_patterns_whose_literals_occur() -> None:
    pats = [re.compile(r"\bcancel\b"), re.compile(r"报销|发票"), None, re.compile(r"x+")]
    pf = Prefilter(pats)
    assert pf.candidates("please cancel it") == {0, 2}
    assert pf.candidates("开发票") == {1, 2}
    assert pf.candidates("") == {2}
    assert pf.candidates("xx cancel 报销") == {0, 1, 2, 3}


def _sentences() -> list[str]:
    texts: list[str] = []
    for path in sorted(DATA.glob("*.jsonl")):
        texts += [json.loads(line)["text"] for line in path.open(encoding="utf-8") if line.strip()]
    examples = yaml.safe_load((DATA / "rule_examples.yaml").read_text(encoding="utf-8"))
    for group in examples.values():
        for ex in group.values():
            texts += list(ex["match"]) + list(ex["miss"])
    return texts


def test_prefiltered_rules_find_what_all_rules_find_on_every_labelled_sentence() -> None:
    rules = default_rules()
    texts = _sentences()
    assert len(texts) > 5000
    differ = []
    for text in texts:
        norm = normalize(text)
        every = [r.id for r in rules.rules if r.matches(norm, text)]
        if [r.id for r in rules.all_matches(text)] != every:
            differ.append(text)
        topic = next((c.name for c in rules.off_topic if c.matches(norm)), None)
        got = rules.off_topic_category(text)
        if (got.name if got else None) != topic:
            differ.append(text)
    assert differ == []


@pytest.mark.parametrize("pattern, parts", [
    (r"a|b(c|d)", ["a", "b(c|d)"]),
    (r"(?:a|b)|(?:c)", ["a", "b", "c"]),  # the rule file's "(?:line)|(?:line)" joins, unwrapped
    (r"[|]x|\||[]|]h", ["[|]x", r"\|", "[]|]h"]),  # a "|" in a class or escaped does not split
    (r"(?:a)(?:b)", ["(?:a)(?:b)"]),  # two groups side by side are one branch
    (r"(?:a|b)c", ["(?:a|b)c"]),
])
def test_top_level_alternatives(pattern: str, parts: list[str]) -> None:
    assert top_level_alternatives(pattern) == parts


def test_every_rule_keyword_is_the_union_of_its_branches() -> None:
    """Each rule's keyword splits into branches that compile, and a message matches the keyword exactly
    when it matches one branch (checked on the rule examples)."""
    rules = default_rules()
    texts = [normalize(t) for t in _sentences()[:3000]]
    for rule in rules.rules:
        if rule.keyword is None:
            continue
        branches = [re.compile(b, rule.keyword.flags) for b in top_level_alternatives(rule.keyword.pattern)]
        assert branches
        for norm in texts:
            assert (rule.keyword.search(norm) is not None) == any(b.search(norm) for b in branches), (rule.id, norm)
