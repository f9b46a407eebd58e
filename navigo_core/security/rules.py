"""The rule layer of the risk guard: regexes from YAML, run on normalised text.

* :func:`detect_prompt_injection` — ``BLOCKED_PROMPT_INJECTION:<rule_id>`` flags for user input; when no
  rule fires, the learned classifier (:mod:`navigo_core.security.classifier`) decides:
  ``BLOCKED_PROMPT_INJECTION:classifier:<score>`` at or above its calibrated threshold.
* :func:`detect_unsafe_output` — ``UNSAFE_OUTPUT:<rule_id>`` flags for generated plans.

Rules live in ``data/injection_rules.yaml`` and ``data/unsafe_output_rules.yaml``
(id, lang, description, pattern). Every pattern runs on
:func:`~navigo_core.security.normalize.normalize` of the text, so full-width,
zero-width and homoglyph variants are caught by the plain-ASCII pattern. Flags
come back in rule-file order, each rule at most once; a clean text gives ``[]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from navigo_core.safe_yaml import read_yaml
from navigo_core.security.normalize import ScriptGate, normalize

__all__ = [
    "INJECTION_PREFIX", "UNSAFE_PREFIX", "Rule", "detect_prompt_injection", "detect_unsafe_output",
    "injection_rules", "unsafe_output_rules",
]

INJECTION_PREFIX = "BLOCKED_PROMPT_INJECTION:"
UNSAFE_PREFIX = "UNSAFE_OUTPUT:"
MAX_SCAN_CHARS = 20_000  # longer texts are scanned head and tail (bounded latency)

_DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Rule:
    id: str
    lang: str
    description: str
    regex: re.Pattern[str]


def _load(name: str) -> tuple[Rule, ...]:
    data = read_yaml(_DATA / name) or {}
    rules = []
    seen: set[str] = set()
    for item in data.get("rules", []):
        rid = str(item["id"])
        if rid in seen:
            raise ValueError(f"security rule id {rid!r} is defined twice in {name}")
        seen.add(rid)
        rules.append(Rule(rid, str(item.get("lang", "any")), str(item.get("description", "")),
                          re.compile(item["pattern"], re.MULTILINE)))
    return tuple(rules)


@lru_cache(maxsize=1)
def injection_rules() -> tuple[Rule, ...]:
    """The prompt-injection rules (loaded once)."""
    return _load("injection_rules.yaml")


@lru_cache(maxsize=1)
def unsafe_output_rules() -> tuple[Rule, ...]:
    """The unsafe-output rules (loaded once)."""
    return _load("unsafe_output_rules.yaml")


def _prepare(text: str) -> str:
    norm = normalize(text)
    if len(norm) > MAX_SCAN_CHARS:
        half = MAX_SCAN_CHARS // 2
        norm = norm[:half] + "\n" + norm[-half:]
    return norm


def _scan(text: str, rules: tuple[Rule, ...], prefix: str) -> list[str]:
    if not text or not text.strip():
        return []
    norm = _prepare(text)
    gate = ScriptGate(norm)
    return [prefix + rule.id for rule in rules if gate.search(rule.regex, norm)]


def detect_prompt_injection(text: str) -> list[str]:
    """``BLOCKED_PROMPT_INJECTION:<rule_id>`` for each injection rule ``text`` trips; when none does,
    ``["BLOCKED_PROMPT_INJECTION:classifier:0.97"]`` if the classifier's score (2 decimals) reaches its
    threshold; ``[]`` when clean."""
    flags = _scan(text, injection_rules(), INJECTION_PREFIX)
    if flags or not text or not text.strip():
        return flags
    from navigo_core.security.classifier import injection_score, injection_threshold

    score = injection_score(text)
    if score >= injection_threshold(text):
        return [f"{INJECTION_PREFIX}classifier:{score:.2f}"]
    return []


def detect_unsafe_output(text: str) -> list[str]:
    """``UNSAFE_OUTPUT:<rule_id>`` for each unsafe-output rule ``text`` trips (``[]`` when clean)."""
    return _scan(text, unsafe_output_rules(), UNSAFE_PREFIX)
