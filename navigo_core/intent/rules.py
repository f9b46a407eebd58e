"""L1: ordered keyword rules with negative keywords (``data/rules.yaml``).

List order is priority and the first rule that matches wins. A rule matches
when one of its keyword regexes is found and none of its negative regexes is.
A rule with ``only`` matches when the whole message consists of those words
(greetings). Every pattern is compiled once; one message costs one
normalisation plus a handful of regex searches (well under 0.1 ms).

L1 prefers missing to misfiring: a message with a multi-intent marker
("然后", "and also" …) that matches rules of two different intents is a miss,
so L3 can split it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from navigo_core.intent.taxonomy import DATA_DIR, is_known

RULES_FILE = DATA_DIR / "rules.yaml"
_UPPER = re.compile(r"(?<!\\)[A-Z]")
_SEP = r"[\s,，。.!！?？~～、…;；:：\-]*"
_APOSTROPHES = str.maketrans("", "", "'’‘`´")
_SPACES = re.compile(r"\s+")


def normalize(text: str) -> str:
    """NFKC, lower case, no apostrophes, single spaces, stripped (what rules see)."""
    text = unicodedata.normalize("NFKC", text).lower().translate(_APOSTROPHES)
    return _SPACES.sub(" ", text).strip()


def _compile(pattern: str) -> re.Pattern[str]:
    """Messages are lower-cased before matching, so lower-case patterns need no
    IGNORECASE (about 1.5x faster); a pattern with capitals still gets it."""
    return re.compile(pattern, re.IGNORECASE if _UPPER.search(pattern) else 0)


def _alt(patterns: list[str] | str | None) -> str | None:
    if not patterns:
        return None
    if isinstance(patterns, str):
        patterns = [patterns]
    return "|".join(f"(?:{p})" for p in patterns)


@dataclass(frozen=True)
class Rule:
    id: str
    intent: str
    keyword: re.Pattern[str]
    negative: re.Pattern[str] | None = None

    def matches(self, norm: str) -> bool:
        """``norm`` must already be :func:`normalize`\\ d."""
        if self.keyword.search(norm) is None:
            return False
        return self.negative is None or self.negative.search(norm) is None


@dataclass(frozen=True)
class RuleHit:
    rule_id: str
    intent: str


@dataclass(frozen=True)
class RuleOutcome:
    """The L1 decision with a detail line for traces (rule ids only appear here)."""

    hit: RuleHit | None
    detail: str


def _compile_rule(entry: dict[str, Any], index: int) -> Rule:
    rid = str(entry.get("id") or f"rule{index}")
    intent = entry.get("intent")
    if not is_known(intent) or intent == "unknown":
        raise ValueError(f"rules.yaml: rule {rid!r} has an unknown intent {intent!r}")
    if entry.get("only"):
        words = _alt(entry["only"])
        also = _alt(entry.get("also")) or "(?!)"
        anyw = f"(?:{words})|(?:{also})"
        # at least one `only` word; `also` words may come before or after it
        keyword = _compile(rf"^{_SEP}(?:(?:{also}){_SEP})*(?:{words})(?:{_SEP}(?:{anyw}))*{_SEP}$")
    elif entry.get("keywords"):
        keyword = _compile(_alt(entry["keywords"]) or "")
    else:
        raise ValueError(f"rules.yaml: rule {rid!r} needs `keywords` or `only`")
    neg = _alt(entry.get("negative"))
    return Rule(rid, intent, keyword, _compile(neg) if neg else None)


class RuleSet:
    """The compiled, ordered L1 rules."""

    def __init__(self, rules: list[Rule], markers: re.Pattern[str] | None = None) -> None:
        ids = [r.id for r in rules]
        if len(set(ids)) != len(ids):
            raise ValueError("rules.yaml: rule ids must be unique")
        self.rules = tuple(rules)
        self.markers = markers

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RuleSet":
        rules = [_compile_rule(e, i) for i, e in enumerate(data.get("rules") or [])]
        markers = _alt(data.get("multi_intent_markers"))
        return cls(rules, _compile(markers) if markers else None)

    @classmethod
    def from_yaml(cls, path: Path | str = RULES_FILE) -> "RuleSet":
        return cls.from_dict(yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {})

    def __len__(self) -> int:
        return len(self.rules)

    def match(self, text: str) -> RuleHit | None:
        """The first rule that matches ``text`` (None: L1 misses). The hot path."""
        return self.check(text).hit

    def check(self, text: str) -> RuleOutcome:
        if not text or not text.strip():
            return RuleOutcome(None, "empty message")
        norm = normalize(text)
        first: Rule | None = None
        for rule in self.rules:
            if rule.matches(norm):
                first = rule
                break
        if first is None:
            return RuleOutcome(None, "no rule matched")
        if self.markers is not None and first.intent != "greeting" and self.markers.search(norm):
            others = sorted({r.intent for r in self.rules if r.intent not in (first.intent, "greeting") and r.matches(norm)})
            if others:
                return RuleOutcome(None, f"several intents ({first.intent}, {', '.join(others)}): left to L3")
        return RuleOutcome(RuleHit(first.id, first.intent), f"rule {first.id}")

    def all_matches(self, text: str) -> list[Rule]:
        """Every rule that matches (for analysis and the Router lab), in priority order."""
        norm = normalize(text)
        return [r for r in self.rules if r.matches(norm)]


@lru_cache(maxsize=1)
def default_rules() -> RuleSet:
    """The rules of ``data/rules.yaml`` (compiled once)."""
    return RuleSet.from_yaml(RULES_FILE)


__all__ = ["RULES_FILE", "Rule", "RuleHit", "RuleOutcome", "RuleSet", "default_rules", "normalize"]
