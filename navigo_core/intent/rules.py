"""The one rule system of the chat's routing (``data/rules.yaml``).

Every routing rule lives in that file, in four sections:

* ``rules`` — ordered L1 rules; list order is priority and the first rule that
  matches wins. A rule matches when one of its ``keywords`` regexes is found and
  none of its ``negative`` regexes is; a rule with ``only`` matches when the whole
  message consists of those words (greetings); a rule with ``check`` also needs a
  named check from :mod:`navigo_core.intent.checks` (a reading by the request
  parser, where a regex cannot say it). A rule names its taxonomy ``intent`` and,
  where the intent alone does not say it, the chat ``scene`` that answers it;
  ``interrupts: false`` keeps a hit from ending another scene's open dialogue.
* ``switch`` — phrases that leave an open dialogue ("never mind", "算了").
* ``off_topic`` — categories of messages that are clearly not about travel
  (the gate's first step, and the wording of the off-topic reply).
* ``multi_intent_markers`` — "然后", "and also" …: a message with one that
  matches rules of two different intents is an L1 miss, so L3 can split it.
* ``negation`` — "don't want to", "先别": a rule whose keyword follows one is only a *topic* for that
  message (the learned layer may overrule it): "I don't want to cancel the application, just move it".

``words`` defines named alternations used as ``{{name}}`` inside any regex of the
file (one vocabulary for "application", "cancel", … shared by the rules).

One normalisation (:func:`normalize`) for every layer: the gate, L1, the L2
encoder and the off-topic and switch sections all see NFKC, lower-case text
without apostrophes. Regexes are compiled with ``re.ASCII``, so ``\\b`` is an
ASCII word boundary that also holds beside Chinese characters (``用python写``).
Scenes from outside the package bring their rules as :class:`Rule` objects
(:meth:`RuleSet.extended`); the package's scenes carry none.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any


from navigo_core.prefilter import Prefilter, top_level_alternatives
from navigo_core.intent.taxonomy import DATA_DIR, is_known
from navigo_core.safe_yaml import read_yaml

RULES_FILE = DATA_DIR / "rules.yaml"
_UPPER = re.compile(r"(?<!\\)[A-Z]")
_SEP = r"[\s,，。.!！?？~～、…;；:：\-]*"
_APOSTROPHES = str.maketrans("", "", "'’‘`´")
_SPACES = re.compile(r"\s+")
_WORD_REF = re.compile(r"\{\{([a-z_]+)\}\}")

Check = Callable[[str], "str | None"]


def normalize(text: str) -> str:
    """NFKC, lower case, no apostrophes, single spaces, stripped (what every routing layer sees)."""
    text = unicodedata.normalize("NFKC", text).lower().translate(_APOSTROPHES)
    return _SPACES.sub(" ", text).strip()


#: What NFKC makes of the full-width punctuation a pattern may name: :func:`normalize` folds the message's
#: "，" into "," (and "？" into "?", …), so a pattern's "[^，。]" (up to the end of the clause) must say "[^,。]".
_PATTERN_PUNCT = str.maketrans({"，": ",", "！": "!", "：": ":", "；": ";", "？": r"\?", "（": r"\(", "）": r"\)"})


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Messages are lower-cased before matching, so lower-case patterns need no IGNORECASE
    (about 1.5x faster); a pattern with capitals still gets it. Always ``re.ASCII``. Full-width
    punctuation is read as the message's normalised form (:data:`_PATTERN_PUNCT`)."""
    pattern = pattern.translate(_PATTERN_PUNCT)
    flags = re.ASCII | (re.IGNORECASE if _UPPER.search(pattern) else 0)
    return re.compile(pattern, flags)


def _alt(patterns: list[str] | tuple[str, ...] | str | None) -> str | None:
    if not patterns:
        return None
    if isinstance(patterns, str):
        patterns = [patterns]
    return "|".join(f"(?:{p})" for p in patterns)


@dataclass(frozen=True)
class Rule:
    """One routing rule. ``keyword`` None: the rule is its ``check`` alone."""

    id: str
    intent: str
    keyword: re.Pattern[str] | None
    negative: re.Pattern[str] | None = None
    scene: str | None = None
    interrupts: bool | tuple[str, ...] = True  # a tuple: the scenes whose open dialogue a hit ends
    check: Check | None = None
    source: str = "rules.yaml"
    topic: bool = False  # a topic rule (a flight, a hotel is named): the learned layer may overrule it

    def ends_dialogue_of(self, scene_id: str) -> bool:
        return self.interrupts is True or (isinstance(self.interrupts, tuple) and scene_id in self.interrupts)

    def matches(self, norm: str, text: str | None = None) -> bool:
        """``norm`` must already be :func:`normalize`\\ d; ``text`` (the message as typed) goes to the check."""
        if self.keyword is not None and self.keyword.search(norm) is None:
            return False
        return self.accepts(norm, text)

    def accepts(self, norm: str, text: str | None = None) -> bool:
        """The rest of :meth:`matches` once the keyword matched: no negative matches, the check passes."""
        if self.negative is not None and self.negative.search(norm) is not None:
            return False
        return self.check is None or bool(self.check(norm if text is None else text))


@dataclass(frozen=True)
class RuleHit:
    rule_id: str
    intent: str
    scene: str | None = None
    interrupts: bool | tuple[str, ...] = True
    source: str = "rules.yaml"
    topic: bool = False
    negated: bool = False  # its keyword follows a negation ("don't cancel …"): what is NOT wanted

    def ends_dialogue_of(self, scene_id: str) -> bool:
        return self.interrupts is True or (isinstance(self.interrupts, tuple) and scene_id in self.interrupts)


@dataclass(frozen=True)
class RuleOutcome:
    """The L1 decision with a detail line for traces (rule ids only appear here)."""

    hit: RuleHit | None
    detail: str


@dataclass(frozen=True)
class OffTopicCategory:
    """A kind of message that is clearly not about travel (coding, maths homework, …)."""

    name: str
    topic: str  # i18n key naming it in the reply
    gate: bool  # True: the gate's first step may decide on it; False: reply wording only
    pattern: re.Pattern[str]
    negative: re.Pattern[str] | None
    intents: tuple[str, ...] = ()
    signal_veto: bool = True  # False: a travel word in the message does not veto it (加班申请)

    def matches(self, norm: str) -> bool:
        return self.pattern.search(norm) is not None and (self.negative is None or self.negative.search(norm) is None)


class _Words:
    """The named word lists; a list may use another one ({{name}}), expanded fully (no cycles)."""

    def __init__(self, words: dict[str, Any]) -> None:
        raw = {k: _alt(v) or "(?!)" for k, v in (words or {}).items()}
        self.words: dict[str, str] = {}
        for name in raw:
            self._resolve(name, raw, ())

    def _resolve(self, name: str, raw: dict[str, str], path: tuple[str, ...]) -> str:
        if name in self.words:
            return self.words[name]
        if name in path:
            raise ValueError(f"rules.yaml: word lists refer to each other in a circle: {' -> '.join((*path, name))}")
        if name not in raw:
            raise ValueError(f"rules.yaml: word list {path[-1]!r} uses an undefined word list {{{{{name}}}}}")
        self.words[name] = _WORD_REF.sub(lambda m: f"(?:{self._resolve(m.group(1), raw, (*path, name))})", raw[name])
        return self.words[name]

    def expand(self, pattern: str, where: str) -> str:
        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in self.words:
                raise ValueError(f"rules.yaml: {where} uses an undefined word list {{{{{name}}}}}")
            return f"(?:{self.words[name]})"

        return _WORD_REF.sub(sub, pattern)

    def compile(self, patterns: Any, where: str) -> re.Pattern[str] | None:
        alt = _alt(patterns)
        if alt is None:
            return None
        expanded = self.expand(alt, where)
        try:
            return compile_pattern(expanded)
        except re.error as exc:
            raise ValueError(f"rules.yaml: {where}: bad regex: {exc}") from exc


def _compile_rule(entry: dict[str, Any], index: int, words: _Words, checks: dict[str, Check]) -> Rule:
    rid = str(entry.get("id") or f"rule{index}")
    intent = entry.get("intent")
    if not is_known(intent) or intent == "unknown":
        raise ValueError(f"rules.yaml: rule {rid!r} has an unknown intent {intent!r}")
    keyword: re.Pattern[str] | None
    if entry.get("only"):
        only = words.expand(_alt(entry["only"]) or "", rid)
        also = words.expand(_alt(entry.get("also")) or "(?!)", rid)
        anyw = f"(?:{only})|(?:{also})"
        # at least one `only` word; `also` words may come before or after it
        keyword = compile_pattern(rf"^{_SEP}(?:(?:{also}){_SEP})*(?:{only})(?:{_SEP}(?:{anyw}))*{_SEP}$")
    else:
        keyword = words.compile(entry.get("keywords"), rid)
    check: Check | None = None
    if entry.get("check"):
        name = str(entry["check"])
        if name not in checks:
            raise ValueError(f"rules.yaml: rule {rid!r} names an unknown check {name!r}; known: {sorted(checks)}")
        check = checks[name]
    if keyword is None and check is None:
        raise ValueError(f"rules.yaml: rule {rid!r} needs `keywords`, `only` or `check`")
    return Rule(rid, str(intent), keyword, words.compile(entry.get("negative"), rid),
                scene=entry.get("scene") or None, interrupts=_interrupts(entry.get("interrupts", True), rid), check=check,
                topic=_flag(entry.get("topic", False), "topic", rid))


def _flag(value: Any, key: str, rid: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"rules.yaml: rule {rid!r}: `{key}` must be true or false, not {value!r}")
    return value


def _interrupts(value: Any, rid: str) -> bool | tuple[str, ...]:
    if isinstance(value, bool):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"rules.yaml: rule {rid!r}: interrupts must be true, false or a list of scene ids")


class RuleSet:
    """The compiled rules: ordered L1 rules, switch phrases, off-topic categories, multi-intent markers."""

    def __init__(self, rules: Iterable[Rule], markers: re.Pattern[str] | None = None,
                 switch: re.Pattern[str] | None = None, off_topic: Iterable[OffTopicCategory] = (),
                 negation: re.Pattern[str] | None = None) -> None:
        self.rules = tuple(rules)
        self.negation = negation
        ids = [r.id for r in self.rules]
        if len(set(ids)) != len(ids):
            raise ValueError(f"rule ids must be unique: {sorted({i for i in ids if ids.count(i) > 1})}")
        self.markers = markers
        self.switch = switch
        self.off_topic = tuple(off_topic)
        self._by_id = {r.id: r for r in self.rules}
        # which rules and categories can match a message at all (one pass; see prefilter.py). A rule's keyword
        # is prefiltered branch by branch (its top-level alternatives): only the branches whose literals occur
        # are searched, not the whole alternation (the keyword matches exactly when one branch does)
        self._branches: list[re.Pattern[str]] = []
        self._branch_owner: list[int] = []
        self._branches_of: dict[int, tuple[int, ...]] = {}
        for i, r in enumerate(self.rules):
            if r.keyword is None:
                continue
            start = len(self._branches)
            self._branches += [re.compile(b, r.keyword.flags) for b in top_level_alternatives(r.keyword.pattern)]
            self._branch_owner += [i] * (len(self._branches) - start)
            self._branches_of[i] = tuple(range(start, len(self._branches)))
        self._no_keyword = frozenset(i for i, r in enumerate(self.rules) if r.keyword is None)
        self._branch_filter = Prefilter(self._branches)
        self._topic_filter = Prefilter([c.pattern for c in self.off_topic])

    @classmethod
    def from_dict(cls, data: dict[str, Any], checks: dict[str, Check] | None = None) -> RuleSet:
        if checks is None:
            from navigo_core.intent.checks import CHECKS

            checks = CHECKS
        from navigo_core.understand.purpose import word_lists

        words = _Words({**word_lists(), **(data.get("words") or {})})  # {{business}} is shared with the planner
        rules = [_compile_rule(e, i, words, checks) for i, e in enumerate(data.get("rules") or [])]
        cats = []
        for name, spec in (data.get("off_topic") or {}).items():
            pattern = words.compile(spec.get("patterns"), f"off_topic.{name}")
            if pattern is None or not spec.get("topic"):
                raise ValueError(f"rules.yaml: off-topic category {name!r} needs `topic` and `patterns`")
            cats.append(OffTopicCategory(name, str(spec["topic"]), bool(spec.get("gate", True)), pattern,
                                         words.compile(spec.get("negatives"), f"off_topic.{name}"),
                                         tuple(spec.get("intents") or ()), bool(spec.get("signal_veto", True))))
        return cls(rules, words.compile(data.get("multi_intent_markers"), "multi_intent_markers"),
                   words.compile(data.get("switch"), "switch"), cats, words.compile(data.get("negation"), "negation"))

    @classmethod
    def from_yaml(cls, path: Path | str = RULES_FILE) -> RuleSet:
        return cls.from_dict(read_yaml(path) or {})

    def extended(self, first: Iterable[Rule]) -> RuleSet:
        """This rule set with ``first`` (e.g. a plug-in scene's rules) ahead of its own rules."""
        extra = tuple(first)
        if not extra:
            return self
        return RuleSet(extra + self.rules, self.markers, self.switch, self.off_topic, self.negation)

    def __len__(self) -> int:
        return len(self.rules)

    def rule(self, rule_id: str) -> Rule:
        return self._by_id[rule_id]

    def match(self, text: str) -> RuleHit | None:
        """The first rule that matches ``text`` (None: L1 misses). The hot path."""
        return self.check(text).hit

    def check(self, text: str, norm: str | None = None) -> RuleOutcome:
        """The L1 decision (stops at the first rule unless a multi-intent marker needs the others)."""
        return self._scan(text, norm, collect=False)[0]

    def scan(self, text: str, norm: str | None = None) -> tuple[RuleOutcome, list[RuleHit]]:
        """The L1 decision and every matching keyword rule as a hit, in priority order, in one pass
        (the gate weighs disagreeing ones). Rules that need a parser check only run while no rule
        has matched: they are last in the list and cost a parse."""
        return self._scan(text, norm, collect=True)

    def _scan(self, text: str, norm: str | None, collect: bool) -> tuple[RuleOutcome, list[RuleHit]]:
        if not text or not text.strip():
            return RuleOutcome(None, "empty message"), []
        norm = normalize(text) if norm is None else norm
        marked = self.markers is not None and self.markers.search(norm) is not None
        branches = self._branch_filter.candidates(norm)
        matched: list[Rule] = []
        for i in self._possible(branches):
            r = self.rules[i]
            if matched and not (collect or marked):
                break
            if r.check is not None and matched and not marked:
                continue
            if self._matches(i, norm, text, branches):
                matched.append(r)
        if not matched:
            return RuleOutcome(None, "no rule matched"), []
        negated = {r.id: self._negated(r, norm) for r in matched}
        topic = {r.id: r.topic or negated[r.id] for r in matched}
        # "don't change the dates, just scrap it": a rule whose keyword is negated yields to a rule of another
        # intent that matched without a negation (the message says what is not wanted, then what is)
        wanted = [r for r in matched if not negated[r.id]]
        if negated[matched[0].id] and wanted and wanted[0].intent != matched[0].intent:
            matched = [*wanted, *(r for r in matched if negated[r.id])]
        hits = [RuleHit(r.id, r.intent, r.scene, r.interrupts, r.source, topic[r.id], negated[r.id])
                for r in matched if r.check is None]
        first = matched[0]
        if marked and first.intent != "greeting":
            others = sorted({r.intent for r in matched if r.intent not in (first.intent, "greeting")})
            if others:
                return RuleOutcome(None, f"several intents ({first.intent}, {', '.join(others)}): left to L3"), hits
        hit = RuleHit(first.id, first.intent, first.scene, first.interrupts, first.source, topic[first.id],
                      negated[first.id])
        return RuleOutcome(hit, f"rule {first.id}"), hits

    def _negated(self, rule: Rule, norm: str) -> bool:
        """Whether ``rule``'s keyword first matches ``norm`` right after a ``negation`` phrase (within the 24
        characters before it): "I don't want to cancel …" names a cancellation it does not want."""
        if self.negation is None or rule.keyword is None:
            return False
        m = rule.keyword.search(norm)
        return m is not None and self.negation.search(norm, max(0, m.start() - 24), m.start()) is not None

    def all_matches(self, text: str) -> list[Rule]:
        """Every rule that matches (for analysis and the Router lab), in priority order."""
        norm = normalize(text)
        branches = self._branch_filter.candidates(norm)
        return [self.rules[i] for i in self._possible(branches) if self._matches(i, norm, text, branches)]

    def _possible(self, branches: set[int]) -> list[int]:
        """The indexes, in priority order, of the rules that can match given the keyword branches that can."""
        return sorted({self._branch_owner[j] for j in branches} | self._no_keyword)

    def _matches(self, i: int, norm: str, text: str, branches: set[int]) -> bool:
        """``self.rules[i].matches(norm, text)``, searching only the keyword branches in ``branches``."""
        r = self.rules[i]
        if r.keyword is not None and not any(self._branches[j].search(norm) for j in self._branches_of[i] if j in branches):
            return False
        return r.accepts(norm, text)

    def is_switch(self, text: str) -> bool:
        """True when the message clearly leaves the current dialogue ("never mind", "换个话题")."""
        return self.switch is not None and bool(text) and self.switch.search(normalize(text)) is not None

    def off_topic_category(self, text: str, *, gate_only: bool = False) -> OffTopicCategory | None:
        """The first off-topic category matching ``text`` (only gate categories with ``gate_only``)."""
        norm = normalize(text)
        possible = self._topic_filter.candidates(norm)
        return next((c for i, c in enumerate(self.off_topic)
                     if i in possible and (c.gate or not gate_only) and c.matches(norm)), None)


@lru_cache(maxsize=1)
def default_rules() -> RuleSet:
    """The rules of ``data/rules.yaml`` (compiled once)."""
    return RuleSet.from_yaml(RULES_FILE)


__all__ = ["RULES_FILE", "OffTopicCategory", "Rule", "RuleHit", "RuleOutcome", "RuleSet", "compile_pattern",
           "default_rules", "normalize"]
